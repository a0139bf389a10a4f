// Fuzz entry points: one per file format or API a user feeds. Each takes
// arbitrary bytes and must never crash, leak, hang or run out of memory;
// refusing the input with an exception is fine. The libFuzzer targets
// (libfuzzer_main.cpp, built with -DBATCHCONV_FUZZ=ON and clang) and the
// crash-regression replays (replay_main.cpp, ordinary ctests) call them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace batchconv::fuzz {

// Binary ONNX: import, the default pipeline (first byte picks whether the
// project's own ops are emitted), export, the ONNX checker on the result.
void onnx_binary(const uint8_t* data, size_t size);
// ONNX text syntax: parse, import, the default pipeline, export, print.
void onnx_text(const uint8_t* data, size_t size);
// --verify: import, random inputs (small dims), the reference interpreter on
// the model before and after the default pipeline.
void verify(const uint8_t* data, size_t size);
// The model compiler up to, not including, Halide code generation: import,
// rewrites with the project's ops, the runtime-weight plan, lowering.
void lower(const uint8_t* data, size_t size);
// .npy files as batchconv-bench reads them.
void npy(const uint8_t* data, size_t size);
// The runtime API's shape validation (no kernel runs): shapes, strides,
// geometry and an activation decoded from the bytes.
void runtime_validation(const uint8_t* data, size_t size);

}  // namespace batchconv::fuzz

// Helpers for the compiler tests: stored tensors, host buffers for ir::Tensors,
// running a lowered model through Halide's JIT, and capturing Halide errors.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "ir/graph.h"
#include "lower.h"
#include "model_data.h"

namespace batchconv::testing {

// Runs a lowered model with Halide's JIT. `inputs` by ONNX name; weights
// (runtime) default to the model's initializers unless given in `inputs`.
// With `ctx`, its handlers run (a custom do_par_for that counts tasks).
interp::TensorMap run_jit(compiler::LoweredModel& m, const ir::Model& model, const interp::TensorMap& inputs,
                          Halide::JITUserContext* ctx = nullptr);

// Runs a model with the reference interpreter (every op the compiler lowers).
interp::TensorMap run_reference(const ir::Model& model, const interp::TensorMap& inputs);

// Parses ONNX text and lowers it (host target).
std::unique_ptr<ir::Model> parse(const std::string& text);

// A baked initializer "float[r, c] name = {...}" in ONNX text, of fresh
// uniform random values in [-1, 1].
std::string baked(const std::string& name, int64_t rows, int64_t cols);
// The same of any shape: "float[d0, d1, ...] name = {...}".
std::string baked_tensor(const std::string& name, const std::vector<int64_t>& dims);

// Lowers the model in ONNX text under every layout policy (auto, nchw,
// nhwc), runs each through the JIT on fresh random inputs and checks it
// against the reference interpreter (1e-4 relative, gtest expectations);
// returns the last lowering.
compiler::LoweredModel check_every_layout(const std::string& text);

}  // namespace batchconv::testing

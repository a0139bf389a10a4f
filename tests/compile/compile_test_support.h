// Helpers for the compiler tests: stored tensors, host buffers for ir::Tensors,
// running a lowered model through Halide's JIT, and capturing Halide errors.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "interpreter/interpreter.h"
#include "ir/graph.h"
#include "lower.h"

namespace batchconv::testing {

// An onnx.TensorProto file (tests/models/<stem>.input_<i>.pb).
ir::Tensor read_tensor_pb(const std::string& path);

// A dense float32 host halide_buffer_t over a Tensor's data (kept alive by the holder).
struct HostBuffer {
  std::vector<float> data;
  std::vector<halide_dimension_t> dims;
  halide_buffer_t buf{};
  explicit HostBuffer(const std::vector<int64_t>& onnx_shape, const std::vector<float>& values = {});
  ir::Tensor tensor(const std::vector<int64_t>& onnx_shape) const;
};

// Runs a lowered model with Halide's JIT. `inputs` by ONNX name; weights
// (runtime) default to the model's initializers unless given in `inputs`.
interp::TensorMap run_jit(compiler::LoweredModel& m, const ir::Model& model, const interp::TensorMap& inputs);

// Runs a model with the reference interpreter (every op the compiler lowers).
interp::TensorMap run_reference(const ir::Model& model, const interp::TensorMap& inputs);

// Parses ONNX text and lowers it (host target).
std::unique_ptr<ir::Model> parse(const std::string& text);

// Collects messages passed to halide_error while alive (halide_errors.cpp: only
// in binaries that link an AOT-compiled model, which carries the Halide runtime).
struct HalideErrors {
  HalideErrors();
  ~HalideErrors();
  static std::string& text();
};

}  // namespace batchconv::testing

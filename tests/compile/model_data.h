// Test data for compiled models, without Halide's compiler (the GPU tests
// link no libHalide): stored tensors and host buffers over ir::Tensors.
#pragma once

#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "ir/graph.h"

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

// Collects messages passed to halide_error while alive (halide_errors.cpp: only
// in binaries that link an AOT-compiled model, which carries the Halide runtime).
struct HalideErrors {
  HalideErrors();
  ~HalideErrors();
  static std::string& text();
};

}  // namespace batchconv::testing

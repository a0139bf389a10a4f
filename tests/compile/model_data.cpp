#include "model_data.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "onnx/onnx_io.h"
#include "onnx/onnx_pb.h"

namespace batchconv::testing {

ir::Tensor read_tensor_pb(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) throw std::runtime_error(path + ": not a TensorProto");
  return io::tensor_from_proto(t, path);
}

HostBuffer::HostBuffer(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  data = values.empty() ? std::vector<float>(n, 0.0f) : values;
  if (int64_t(data.size()) != n) throw std::runtime_error("HostBuffer: wrong element count");
  int32_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    dims.push_back({0, static_cast<int32_t>(shape[k]), stride, 0});
    stride *= static_cast<int32_t>(shape[k]);
  }
  buf.host = reinterpret_cast<uint8_t*>(data.data());
  buf.type = halide_type_t(halide_type_float, 32, 1);
  buf.dimensions = static_cast<int32_t>(dims.size());
  buf.dim = dims.data();
}

ir::Tensor HostBuffer::tensor(const std::vector<int64_t>& shape) const {
  ir::Tensor t;
  t.dtype = ir::DType::Float;
  t.shape = shape;
  t.f = data;
  return t;
}

}  // namespace batchconv::testing

#include "compile_test_support.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "Halide.h"
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

interp::TensorMap run_jit(compiler::LoweredModel& m, const ir::Model& model, const interp::TensorMap& inputs) {
  std::vector<std::unique_ptr<HostBuffer>> keep;
  auto bind = [&](compiler::ParamInfo& p, const ir::Tensor& t) {
    keep.push_back(std::make_unique<HostBuffer>(p.shape, t.f));
    p.param.set(Halide::Buffer<>(keep.back()->buf));
  };
  for (compiler::ParamInfo& p : m.inputs) bind(p, inputs.at(p.onnx_name));
  for (compiler::ParamInfo& p : m.weights) {
    auto it = inputs.find(p.onnx_name);
    bind(p, it != inputs.end() ? it->second : *model.graph.find_value(p.onnx_name)->constant);
  }
  std::vector<Halide::Buffer<>> outs;
  std::vector<std::unique_ptr<HostBuffer>> out_keep;
  for (const compiler::OutputInfo& o : m.outputs) {
    std::vector<int64_t> onnx(o.internal_extents.rbegin(), o.internal_extents.rend());
    out_keep.push_back(std::make_unique<HostBuffer>(onnx));
    outs.emplace_back(out_keep.back()->buf);
  }
  m.pipeline.realize(Halide::Realization(outs), Halide::get_host_target());
  interp::TensorMap result;
  for (size_t k = 0; k < m.outputs.size(); ++k) result[m.outputs[k].onnx_name] = out_keep[k]->tensor(m.outputs[k].shape);
  return result;
}

std::unique_ptr<ir::Model> parse(const std::string& text) { return io::parse_model(text, "test.onnxtxt"); }

}  // namespace batchconv::testing

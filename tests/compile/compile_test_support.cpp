#include "compile_test_support.h"

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "Halide.h"
#include "host_target.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {

interp::TensorMap run_jit(compiler::LoweredModel& m, const ir::Model& model, const interp::TensorMap& inputs,
                          Halide::JITUserContext* ctx) {
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
    // A conv's storage written channels-last in place: its strides, over the caller's dense memory.
    for (size_t k = 0; k < o.internal_strides.size(); ++k)
      out_keep.back()->dims[k].stride = static_cast<int32_t>(o.internal_strides[k]);
    outs.emplace_back(out_keep.back()->buf);
  }
  if (ctx) m.pipeline.realize(ctx, Halide::Realization(outs), batchconv_gen::host_target());
  else m.pipeline.realize(Halide::Realization(outs), batchconv_gen::host_target());
  interp::TensorMap result;
  for (size_t k = 0; k < m.outputs.size(); ++k) result[m.outputs[k].onnx_name] = out_keep[k]->tensor(m.outputs[k].shape);
  return result;
}

std::unique_ptr<ir::Model> parse(const std::string& text) { return io::parse_model(text, "test.onnxtxt"); }

std::string baked(const std::string& name, int64_t rows, int64_t cols) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::ostringstream v;
  v << "float[" << rows << ", " << cols << "] " << name << " = {";
  for (int64_t k = 0; k < rows * cols; ++k) v << (k ? "," : "") << u(rng);
  return v.str() + "}";
}

}  // namespace batchconv::testing

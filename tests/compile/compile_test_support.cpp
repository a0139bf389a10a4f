#include "compile_test_support.h"

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "Halide.h"
#include "host_target.h"
#include "layout_plan.h"
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

std::string baked_tensor(const std::string& name, const std::vector<int64_t>& dims) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::ostringstream v;
  int64_t count = 1;
  v << "float[";
  for (size_t k = 0; k < dims.size(); ++k) {
    v << (k ? ", " : "") << dims[k];
    count *= dims[k];
  }
  v << "] " << name << " = {";
  for (int64_t k = 0; k < count; ++k) v << (k ? "," : "") << u(rng);
  return v.str() + "}";
}

std::string baked(const std::string& name, int64_t rows, int64_t cols) { return baked_tensor(name, {rows, cols}); }

compiler::LoweredModel check_every_layout(const std::string& text) {
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LoweredModel last;
  for (compiler::LayoutPolicy p :
       {compiler::LayoutPolicy::Auto, compiler::LayoutPolicy::Nchw, compiler::LayoutPolicy::ChannelsLast}) {
    compiler::LowerOptions o;
    o.layouts = p;
    compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
    const uint64_t seed = std::random_device{}();
    interp::TensorMap in = interp::random_inputs(*m, seed);
    interp::TensorMap want = run_reference(*m, in);
    interp::TensorMap got = run_jit(low, *m, in);
    for (const auto& [name, w] : want) {
      EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-4)
          << name << " seed " << seed << " layouts " << compiler::layout_policy_name(p) << "\n" << text;
    }
    last = std::move(low);
  }
  return last;
}

}  // namespace batchconv::testing

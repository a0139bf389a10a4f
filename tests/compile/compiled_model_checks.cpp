// The checks every compiled model of the tests passes, shared by the CPU
// tests and the GPU ones (which link no libHalide).
#include "compiled_model_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "model_data.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {

namespace {

constexpr double kTol = 1e-4;

std::vector<std::vector<int64_t>> arg_shapes(const CompiledModel& m) {
  std::vector<std::vector<int64_t>> out;
  const int64_t* d = m.arg_dims;
  const int n = m.num_inputs + m.num_weights + m.num_outputs;
  for (int k = 0; k < n; ++k) {
    out.emplace_back(d, d + m.arg_ranks[k]);
    d += m.arg_ranks[k];
  }
  return out;
}

// tests/models of the source tree built from, or BATCHCONV_MODELS_DIR's
// (tests built on one machine and run on another: scripts/device-check.sh).
std::string models_dir() {
  const char* env = std::getenv("BATCHCONV_MODELS_DIR");
  return env && *env ? env : BATCHCONV_MODELS_DIR;
}

}  // namespace

std::string model_path(const CompiledModel& m) { return models_dir() + "/" + m.stem + ".onnx"; }

// Runs the compiled model; `values` by ONNX name for inputs and weights.
interp::TensorMap run_compiled(const CompiledModel& m, const interp::TensorMap& values) {
  std::vector<std::vector<int64_t>> shapes = arg_shapes(m);
  if (m.arg_batched && m.num_inputs > 0) {
    const int64_t batch = values.at(m.arg_names[0]).shape.at(0);
    for (size_t k = 0; k < shapes.size(); ++k)
      if (m.arg_batched[k]) shapes[k][0] = batch;
  }
  std::vector<std::unique_ptr<HostBuffer>> bufs;
  std::vector<halide_buffer_t*> args;
  const int n_in = m.num_inputs + m.num_weights;
  for (size_t k = 0; k < shapes.size(); ++k) {
    std::vector<float> data;
    if (int(k) < n_in) data = values.at(m.arg_names[k]).f;
    bufs.push_back(std::make_unique<HostBuffer>(shapes[k], data));
    args.push_back(&bufs.back()->buf);
  }
  HalideErrors errors;
  const int rc = m.argv(args.data());
  EXPECT_EQ(rc, 0) << m.stem << "_" << m.mode << ": " << HalideErrors::text();
  interp::TensorMap out;
  for (size_t k = n_in; k < shapes.size(); ++k) out[m.arg_names[k]] = bufs[k]->tensor(shapes[k]);
  return out;
}

// The model as the app sees it: runtime weights are the model file's own
// initializers (by name), whatever the rewrites did to them.
std::unique_ptr<ir::Model> compiled_view(const CompiledModel& m) { return io::load_model(model_path(m)); }

void expect_matches_stored_outputs(const CompiledModel& m) {
  std::unique_ptr<ir::Model> model = compiled_view(m);
  const std::string stem = models_dir() + "/" + m.stem;
  interp::TensorMap values;
  for (int k = 0; k < m.num_inputs; ++k) {
    values[m.arg_names[k]] = read_tensor_pb(stem + ".input_" + std::to_string(k) + ".pb");
  }
  for (int k = m.num_inputs; k < m.num_inputs + m.num_weights; ++k) {
    const ir::Value* v = model->graph.find_value(m.arg_names[k]);
    ASSERT_TRUE(v && v->constant) << "no initializer " << m.arg_names[k] << " in the model file";
    values[m.arg_names[k]] = *v->constant;
  }
  interp::TensorMap got = run_compiled(m, values);
  for (int k = 0; k < m.num_outputs; ++k) {
    const std::string name = m.arg_names[m.num_inputs + m.num_weights + k];
    ir::Tensor want = read_tensor_pb(stem + ".output_" + std::to_string(k) + ".pb");
    EXPECT_LE(interp::max_relative_difference(got.at(name), want), kTol) << m.stem << "_" << m.mode << " output " << name;
  }
}

void expect_matches_interpreter(const CompiledModel& m) {
  std::unique_ptr<ir::Model> model = compiled_view(m);
  std::random_device rd;
  const uint64_t seed = rd();
  for (int trial = 0; trial < 2; ++trial) {
    interp::TensorMap values = interp::random_inputs(*model, seed + trial);
    std::mt19937 rng(static_cast<uint32_t>(seed + trial));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    // Runtime weights: fresh values every trial, as a meta-learning loop would pass,
    // with the variance of 1 / fan-in (the elements past the first dim) so that
    // activations stay near 1 through a chain of convs and 1e-4 stays a
    // relative bound (unscaled, three 3x3 convs of 16-32 channels reached
    // values in the hundreds, and float32 sums then differed by 1.1e-4).
    for (int k = m.num_inputs; k < m.num_inputs + m.num_weights; ++k) {
      ir::Value* v = model->graph.find_value(m.arg_names[k]);
      ASSERT_TRUE(v && v->constant) << "no initializer " << m.arg_names[k] << " in the model file";
      ir::Tensor w = *v->constant;
      const int64_t fan_in = w.shape.size() > 1 && w.shape[0] > 0 ? w.numel() / w.shape[0] : 3;
      const float scale = std::sqrt(3.0f / static_cast<float>(std::max<int64_t>(fan_in, 1)));
      for (float& x : w.f) x = scale * u(rng);
      w.onnx_proto.clear();
      *v->constant = w;
      values[m.arg_names[k]] = w;
    }
    interp::TensorMap want = interp::run(*model, values);
    interp::TensorMap got = run_compiled(m, values);
    for (const auto& [name, t] : want) {
      EXPECT_LE(interp::max_relative_difference(got.at(name), t), kTol)
          << m.stem << "_" << m.mode << " output " << name << " seed " << seed + trial;
    }
  }
}

}  // namespace batchconv::testing

// The bundled PyTorch-exported models, compiled at build time by
// batchconv_add_model with rewrites (r), without (nr) and with runtime
// weights (rw): each must match the model's stored PyTorch outputs and the
// reference interpreter on fresh random inputs to 1e-4 relative. Also the
// call-time checks: wrong buffer shapes give an error code and a message
// naming the argument, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "compile.h"
#include "compile_test_support.h"
#include "compiled_models_registry.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {
namespace {

constexpr double kTol = 1e-4;

std::string model_path(const CompiledModel& m) { return std::string(BATCHCONV_MODELS_DIR) + "/" + m.stem + ".onnx"; }

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

// Runs the compiled model; `values` by ONNX name for inputs and weights.
interp::TensorMap run_compiled(const CompiledModel& m, const interp::TensorMap& values) {
  std::vector<std::vector<int64_t>> shapes = arg_shapes(m);
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

class CompiledModels : public ::testing::TestWithParam<CompiledModel> {};

TEST_P(CompiledModels, MatchesPyTorchStoredOutputs) {
  const CompiledModel& m = GetParam();
  std::unique_ptr<ir::Model> model = compiled_view(m);
  const std::string stem = std::string(BATCHCONV_MODELS_DIR) + "/" + m.stem;
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

TEST_P(CompiledModels, MatchesInterpreterOnRandomInputs) {
  const CompiledModel& m = GetParam();
  std::unique_ptr<ir::Model> model = compiled_view(m);
  std::random_device rd;
  const uint64_t seed = rd();
  for (int trial = 0; trial < 2; ++trial) {
    interp::TensorMap values = interp::random_inputs(*model, seed + trial);
    std::mt19937 rng(static_cast<uint32_t>(seed + trial));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    // Runtime weights: fresh values every trial, as a meta-learning loop would pass.
    for (int k = m.num_inputs; k < m.num_inputs + m.num_weights; ++k) {
      ir::Value* v = model->graph.find_value(m.arg_names[k]);
      ASSERT_TRUE(v && v->constant) << "no initializer " << m.arg_names[k] << " in the model file";
      ir::Tensor w = *v->constant;
      for (float& x : w.f) x = u(rng);
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

INSTANTIATE_TEST_SUITE_P(Bundled, CompiledModels, ::testing::ValuesIn(kCompiledModels),
                         [](const ::testing::TestParamInfo<CompiledModel>& i) {
                           return std::string(i.param.stem) + "_" + i.param.mode;
                         });

const CompiledModel& find(const std::string& stem, const std::string& mode) {
  for (const CompiledModel& m : kCompiledModels)
    if (stem == m.stem && mode == m.mode) return m;
  throw std::runtime_error("no compiled model " + stem + "_" + mode);
}

// The entry point reports through the library's own handler (stderr by
// default) and returns the error code: with Halide's default error handler
// in place (which aborts), a wrong buffer must not end the process.
void call_with_a_wrong_shape_and_exit() {
  halide_set_error_handler(nullptr);
  HostBuffer x({20, 15});
  HostBuffer y({64, 20});
  const int rc = seed1_opset17_r(&x.buf, &y.buf);
  std::exit(rc < 0 ? 0 : 1);
}

TEST(CompiledModelCall, WrongShapeNeverAbortsTheApp) {
  EXPECT_EXIT(call_with_a_wrong_shape_and_exit(), ::testing::ExitedWithCode(0),
              "seed1_opset17_r: input 'x' must be a dense float32 host buffer");
}

void collect(void* user, const char* msg) { *static_cast<std::string*>(user) += msg; }

TEST(CompiledModelCall, ErrorsGoToTheLibraryHandlerAndNameTheType) {
  std::string got;
  seed1_opset17_r_set_error_handler(collect, &got);
  HostBuffer x({20, 15}), y({64, 20});
  EXPECT_EQ(seed1_opset17_r(&x.buf, &y.buf), halide_error_code_bad_dimensions);
  seed1_opset17_r_set_error_handler(nullptr, nullptr);
  EXPECT_NE(got.find("got float32, rank 2, shape (20, 15)"), std::string::npos) << got;
  EXPECT_EQ(got.find("type code"), std::string::npos) << got;
  EXPECT_EQ(std::string(seed1_opset17_r_last_error()), got);
  x.buf.type.bits = 16;
  EXPECT_NE(seed1_opset17_r(&x.buf, &y.buf), 0);
  EXPECT_NE(std::string(seed1_opset17_r_last_error()).find("got float16"), std::string::npos)
      << seed1_opset17_r_last_error();
}

TEST(CompiledModelCall, WrongInputShapeIsAnErrorNamingTheInput) {
  HalideErrors errors;
  HostBuffer x({20, 15}), y({64, 20});
  EXPECT_NE(seed1_opset17_r(&x.buf, &y.buf), 0);
  const std::string msg = seed1_opset17_r_last_error();
  EXPECT_NE(msg.find("input 'x' must be a dense float32 host buffer of shape (20, 16); got"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape (20, 15)"), std::string::npos) << msg;
}

TEST(CompiledModelCall, WrongOutputRankIsAnErrorNamingTheOutput) {
  HalideErrors errors;
  HostBuffer x({20, 16}), y({64, 20, 1});
  EXPECT_NE(seed1_opset17_r(&x.buf, &y.buf), 0);
  EXPECT_NE(std::string(seed1_opset17_r_last_error()).find("output 'y' must be"), std::string::npos);
}

TEST(CompiledModelCall, NullAndNonDenseBuffersAreErrors) {
  HalideErrors errors;
  HostBuffer x({20, 16}), y({64, 20});
  EXPECT_NE(seed1_opset17_r(nullptr, &y.buf), 0);
  EXPECT_NE(std::string(seed1_opset17_r_last_error()).find("got NULL"), std::string::npos);
  x.dims[1].stride = 17;  // padded rows
  EXPECT_NE(seed1_opset17_r(&x.buf, &y.buf), 0);
  EXPECT_NE(std::string(seed1_opset17_r_last_error()).find("strides (17, 1)"), std::string::npos)
      << seed1_opset17_r_last_error();
}

TEST(CompiledModelCall, HalideEntryPointChecksShapesItself) {
  // Calling the Halide function directly (no wrapper): its own bounds checks
  // return an error code with a message, no out-of-bounds access.
  HalideErrors errors;
  HostBuffer x3({3, 2, 3, 8, 7}), y3({3, 2, 4, 6, 6});
  EXPECT_NE(seed3_opset17_nr_impl(&x3.buf, &y3.buf), 0);
  EXPECT_FALSE(HalideErrors::text().empty());
}

TEST(CompiledModelCall, RuntimeWeightsChangeTheResult) {
  const CompiledModel& m = find("seed3_opset17", "rw");
  ASSERT_GE(m.num_weights, 1);
  std::unique_ptr<ir::Model> model = compiled_view(m);
  interp::TensorMap values = interp::random_inputs(*model, 7);
  for (int k = m.num_inputs; k < m.num_inputs + m.num_weights; ++k) {
    const ir::Value* v = model->graph.find_value(m.arg_names[k]);
    ASSERT_TRUE(v && v->constant) << "no initializer " << m.arg_names[k] << " in the model file";
    values[m.arg_names[k]] = *v->constant;
  }
  interp::TensorMap a = run_compiled(m, values);
  for (int k = m.num_inputs; k < m.num_inputs + m.num_weights; ++k)
    for (float& w : values[m.arg_names[k]].f) w *= 2.0f;
  interp::TensorMap b = run_compiled(m, values);
  EXPECT_GT(interp::max_relative_difference(a.begin()->second, b.begin()->second), 1e-3);
}

}  // namespace
}  // namespace batchconv::testing

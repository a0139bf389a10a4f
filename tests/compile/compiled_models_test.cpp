// The bundled PyTorch-exported models, compiled at build time by
// batchconv_add_model with rewrites (r), without (nr) and with runtime
// weights (rw): each must match the model's stored PyTorch outputs and the
// reference interpreter on fresh random inputs to 1e-4 relative. Also the
// call-time checks: wrong buffer shapes give an error code and a message
// naming the argument, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "compile.h"
#include "compile_test_support.h"
#include "compiled_model_checks.h"
#include "compiled_models_registry.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {
namespace {

class CompiledModels : public ::testing::TestWithParam<CompiledModel> {};

TEST_P(CompiledModels, MatchesPyTorchStoredOutputs) { expect_matches_stored_outputs(GetParam()); }

TEST_P(CompiledModels, MatchesInterpreterOnRandomInputs) { expect_matches_interpreter(GetParam()); }

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

// The generated header's pool of heap blocks: a block of 32 KiB or more
// freed by a call is kept and handed to the next request of its size (no
// fresh pages to fault in), a small one goes back to malloc, a block of
// another allocator goes to that allocator's free, and release_memory
// empties the pool. Calls through the pool give the same results.
TEST(CompiledModelCall, HeapBlocksArePooledAcrossCalls) {
  seed1_opset17_r_release_memory();
  ASSERT_EQ(seed1_opset17_r__pool_state()->count, 0);
  const size_t big = size_t{1} << 20;
  void* a = seed1_opset17_r__pool_malloc(nullptr, big);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 128, 0u);
  std::memset(a, 1, big);
  seed1_opset17_r__pool_free(nullptr, a);
  EXPECT_EQ(seed1_opset17_r__pool_state()->count, 1);
  EXPECT_EQ(seed1_opset17_r__pool_malloc(nullptr, big - 4096), a) << "a block within 1/8 of the request is reused";
  seed1_opset17_r__pool_free(nullptr, a);
  void* other = seed1_opset17_r__pool_malloc(nullptr, big / 4);
  EXPECT_NE(other, a) << "a block more than 1/8 larger than the request is not handed out";
  seed1_opset17_r__pool_free(nullptr, other);
  void* small = seed1_opset17_r__pool_malloc(nullptr, 1000);
  seed1_opset17_r__pool_free(nullptr, small);
  EXPECT_EQ(seed1_opset17_r__pool_state()->count, 2) << "blocks under 32 KiB are not kept";
  // A block laid out by Halide's default allocator (the original pointer
  // just before it, less than 128 bytes away) goes to the previous free.
  void* orig = std::malloc(256);
  void* foreign = static_cast<char*>(orig) + 64;
  static_cast<void**>(foreign)[-1] = orig;
  seed1_opset17_r__pool_free(nullptr, foreign);
  EXPECT_EQ(seed1_opset17_r__pool_state()->count, 2);
  seed1_opset17_r_release_memory();
  EXPECT_EQ(seed1_opset17_r__pool_state()->count, 0);
  EXPECT_EQ(seed1_opset17_r__pool_state()->bytes, 0u);
  // Repeated calls of a compiled model through whichever pool is installed.
  const CompiledModel& m = find("seed3_opset17", "r");
  std::unique_ptr<ir::Model> model = compiled_view(m);
  interp::TensorMap values = interp::random_inputs(*model, 11);
  interp::TensorMap first = run_compiled(m, values);
  for (int k = 0; k < 3; ++k) {
    interp::TensorMap again = run_compiled(m, values);
    EXPECT_EQ(interp::max_relative_difference(again.begin()->second, first.begin()->second), 0.0) << "call " << k;
  }
}

}  // namespace
}  // namespace batchconv::testing

// Compile-time bad input: each gets a clear error naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>

#include "compile.h"
#include "compile_test_support.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

using compiler::Error;

std::string lower_error(const std::string& text, const std::map<std::string, std::vector<int64_t>>& shapes = {}) {
  std::unique_ptr<ir::Model> m = parse(text);
  try {
    compiler::bind_input_shapes(*m, "bad.onnx", shapes);
    compiler::lower_model(*m, "bad.onnx", {});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LoweringBadInput, UnsupportedOpNamesNodeAndOp) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 4] x) => (float[2, 4] y) {
  h = Relu(x)
  y = Hardmax(h)
})");
  EXPECT_NE(e.find("bad.onnx: node "), std::string::npos) << e;
  EXPECT_NE(e.find("(Hardmax): unsupported op"), std::string::npos) << e;
}

TEST(LoweringBadInput, UnknownDomainOpIsUnsupported) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17, "custom" : 1]>
g (float[2, 4] x) => (float[2, 4] y) {
  y = custom.Frobnicate(x)
})");
  EXPECT_NE(e.find("(custom.Frobnicate): unsupported op"), std::string::npos) << e;
}

TEST(LoweringBadInput, DynamicDimThatCannotBeBoundNamesInputAndDim) {
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  y = Relu(x)
})";
  std::string e = lower_error(text);
  EXPECT_NE(e.find("input 'x' dim 0 ('N')"), std::string::npos) << e;
  EXPECT_NE(e.find("--shape x="), std::string::npos) << e;
  EXPECT_EQ(lower_error(text, {{"x", {3, 4}}}), "(no error)");
  EXPECT_NE(lower_error(text, {{"y", {3, 4}}}).find("--shape names input 'y', but the model's inputs are 'x'"),
            std::string::npos);
  EXPECT_NE(lower_error(text, {{"x", {3, 4, 5}}}).find("has 3 dims, the input has 2"), std::string::npos);
}

TEST(LoweringBadInput, BoundDynamicDimRuns) {
  std::unique_ptr<ir::Model> m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x) => (float[N, 4] y) {
  y = Relu(x)
})");
  compiler::bind_input_shapes(*m, "dyn.onnx", {{"x", {3, 4}}});
  compiler::LoweredModel low = compiler::lower_model(*m, "dyn.onnx", {});
  interp::TensorMap in = interp::random_inputs(*m, 3);
  interp::TensorMap got = run_jit(low, *m, in);
  EXPECT_LE(interp::max_relative_difference(got.at("y"), interp::run(*m, in).at("y")), 1e-6);
}

TEST(LoweringBadInput, NonFloatInputIsRejected) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (int64[2, 4] x) => (int64[2, 4] y) {
  y = Neg(x)
})");
  EXPECT_NE(e.find("input 'x' has type"), std::string::npos) << e;
  EXPECT_NE(e.find("only float32 inputs"), std::string::npos) << e;
}

TEST(LoweringBadInput, ConvGroupsNotDividingChannelsNamesNode) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 6, 5, 5] x, float[4, 2, 3, 3] w) => (float[1, 4, 3, 3] y) {
  y = Conv<group = 4>(x, w)
})");
  EXPECT_NE(e.find("(Conv): group=4 does not divide 6 input"), std::string::npos) << e;
}

TEST(LoweringBadInput, RuntimeShapeArgumentIsRejected) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 6] x, int64[2] s) => (float[3, 4] y) {
  y = Reshape(x, s)
})");
  EXPECT_NE(e.find("input 's' has type int64; only float32 inputs are supported"), std::string::npos) << e;
}

TEST(CompileBadInput, FailedCompileLeavesNoFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("batchconv_compile_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  compiler::CompileOptions o;
  o.out_dir = dir.string();
  EXPECT_THROW(compiler::compile_model_file(std::string(BATCHCONV_MODELS_DIR) + "/../compile/data/unsupported_op.onnxtxt", o),
               Error);
  EXPECT_TRUE(fs::is_empty(dir));
  o.target = "x86-64-linux-nonsense";
  EXPECT_THROW(compiler::compile_model_file(std::string(BATCHCONV_MODELS_DIR) + "/seed1_opset17.onnx", o), Error);
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(CompileBadInput, ShapeOptionParsing) {
  EXPECT_EQ(compiler::parse_shape("1000000x16"), (std::vector<int64_t>{1000000, 16}));
  EXPECT_EQ(compiler::parse_shape("3,4"), (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(compiler::parse_shape("3x"), Error);
  EXPECT_THROW(compiler::parse_shape("3x-1"), Error);
  EXPECT_THROW(compiler::parse_shape("ax4"), Error);
}

}  // namespace
}  // namespace batchconv::testing

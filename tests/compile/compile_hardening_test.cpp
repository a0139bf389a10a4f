// The compiler on input that used to compile into something wrong, abort or
// crash: runtime weights by the original model's names (rebuilt inside the
// pipeline after rewrites), Clip's bounds as initializers, non-float data,
// sizes beyond 32-bit indexing, too many nodes (cut into parts, or refused),
// bad function names, and a
// failed write.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "compile.h"
#include "compile_test_support.h"
#include "lower.h"
#include "ops.h"
#include "runtime_weights.h"

namespace batchconv::testing {
namespace {

using compiler::Error;

std::string lower_error(const std::string& text) {
  std::unique_ptr<ir::Model> m = parse(text);
  try {
    compiler::bind_input_shapes(*m, "bad.onnx", {});
    compiler::lower_model(*m, "bad.onnx", {});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Compiles `text` for runtime weights as batchconv-compile does (rewrites on),
// through Halide's JIT; feeds random inputs and random ORIGINAL weights and
// compares with the interpreter on the original model.
void expect_runtime_weights_by_original_names(const std::string& text, const std::vector<std::string>& want_args,
                                              const std::string& want_fired) {
  std::unique_ptr<ir::Model> original = parse(text);
  std::unique_ptr<ir::Model> m = parse(text);
  std::vector<std::string> fired;
  compiler::RuntimeWeightPlan plan = compiler::plan_runtime_weights(m, "rw.onnx", true, &fired);
  std::string all;
  for (const auto& f : fired) all += f + ";";
  EXPECT_NE(all.find(want_fired), std::string::npos) << all;
  compiler::LowerOptions lo;
  lo.runtime_weights = true;
  lo.weight_plan = &plan;
  compiler::LoweredModel low = compiler::lower_model(*m, "rw.onnx", lo);
  std::vector<std::string> args;
  for (const auto& p : low.weights) args.push_back(p.onnx_name);
  EXPECT_EQ(args, want_args);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    interp::TensorMap in = interp::random_inputs(*original, seed);
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::uniform_real_distribution<float> u(-1, 1);
    ir::Model& o = *original;
    for (const std::string& name : want_args) {
      ir::Tensor w = *o.graph.find_value(name)->constant;
      for (float& x : w.f) x = u(rng);
      w.onnx_proto.clear();
      *o.graph.find_value(name)->constant = w;
      in[name] = w;
    }
    interp::TensorMap want = run_reference(o, in);
    interp::TensorMap got = run_jit(low, o, in);
    for (const auto& [name, t] : want)
      EXPECT_LE(interp::max_relative_difference(got.at(name), t), 1e-4) << name << " seed " << seed;
  }
}

std::string floats(int n) {
  std::ostringstream s;
  for (int k = 0; k < n; ++k) s << (k ? "," : "") << (k % 7) * 0.25 - 0.5;
  return s.str();
}

// PyTorch's x.repeat(1, 4, 1) + Conv<group=4>: the rewrite regroups the weight
// into a new initializer; the library still takes 'conv_weight' and 'conv_bias'
// (names with dots, as PyTorch writes them, have no text form).
TEST(CompileHardening, RuntimeWeightsTakeTheOriginalNamesAfterRewrites) {
  expect_runtime_weights_by_original_names(
      R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 9] x) => (float[2, 8, 7] y)
<int64[3] reps = {1, 4, 1}, float[8, 3, 3] conv_weight = {)" + floats(72) + R"(}, float[8] conv_bias = {)" + floats(8) + R"(}>
{
  t = Tile(x, reps)
  y = Conv <group = 4> (t, conv_weight, conv_bias)
})",
      {"conv_weight", "conv_bias"}, "fold_repeat_into_conv");
}

// Parallel convs combined into one (weights concatenated) and a ReLU6 whose
// Clip bounds are initializers: the bounds stay constants, not arguments.
TEST(CompileHardening, RuntimeWeightsConcatenatedAndClipBoundsBaked) {
  expect_runtime_weights_by_original_names(
      R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 3, 6, 6] x) => (float[1, 4, 4, 4] y1, float[1, 2, 4, 4] y2)
<float[4, 3, 3, 3] a_weight = {)" + floats(108) + R"(}, float[2, 3, 3, 3] b_weight = {)" + floats(54) + R"(}, float lo = {0}, float hi = {6}>
{
  c1 = Conv(x, a_weight)
  y1 = Clip(c1, lo, hi)
  y2 = Conv(x, b_weight)
})",
      {"a_weight", "b_weight"}, "combine_parallel_convs");
}

// Conv + inference BatchNormalization (+ Relu), as exporters write it without
// folding: with baked weights the rewrites fold the BN into the conv's weights
// and bias (no BN left to lower) and the library matches the interpreter on the
// original model; with runtime weights nothing is folded (the library still
// takes the conv's and the BN's own parameters) and it matches for random ones.
const char* kConvBatchNorm = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3, 7, 6] x) => (float[2, 4, 7, 6] y)
<float[4, 3, 3, 3] conv_weight = {%W}, float[4] conv_bias = {0.5, -1, 0, 2},
 float[4] bn_scale = {1.5, -0.5, 2, 1}, float[4] bn_shift = {0, 1, -2, 0.25}, float[4] bn_mean = {0.1, -0.3, 1, 0}>
{
  var = Constant<value = float[4] {1, 2, 0.5, 0.01}>()
  c = Conv <pads = [1, 1, 1, 1]> (x, conv_weight, conv_bias)
  n = BatchNormalization <epsilon = 0.001> (c, bn_scale, bn_shift, bn_mean, var)
  y = Relu(n)
})";

std::string conv_batch_norm_model() {
  std::string t = kConvBatchNorm;
  return t.replace(t.find("%W"), 2, floats(108));
}

TEST(CompileHardening, BatchNormFoldedIntoBakedConvWeights) {
  std::unique_ptr<ir::Model> original = parse(conv_batch_norm_model());
  std::unique_ptr<ir::Model> m = parse(conv_batch_norm_model());
  std::vector<std::string> fired = compiler::run_rewrites(*m);
  EXPECT_NE(std::find(fired.begin(), fired.end(), "fold_batch_norm_into_conv: 1"), fired.end());
  for (const ir::Node* n : m->graph.topological_order()) EXPECT_NE(n->op_type, "BatchNormalization");
  compiler::LoweredModel low = compiler::lower_model(*m, "bn.onnx", {});
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    interp::TensorMap in = interp::random_inputs(*original, seed);
    interp::TensorMap want = run_reference(*original, in);
    EXPECT_LE(interp::max_relative_difference(run_jit(low, *m, in).at("y"), want.at("y")), 1e-4) << seed;
  }
}

TEST(CompileHardening, BatchNormNotFoldedWithRuntimeWeights) {
  std::unique_ptr<ir::Model> m = parse(conv_batch_norm_model());
  std::vector<std::string> fired;
  compiler::plan_runtime_weights(m, "bn.onnx", true, &fired);
  for (const auto& f : fired) EXPECT_EQ(f.find("fold_batch_norm_into_conv"), std::string::npos) << f;
  expect_runtime_weights_by_original_names(conv_batch_norm_model(),
                                           {"conv_weight", "conv_bias", "bn_scale", "bn_shift", "bn_mean"}, "");
}

// Without a plan (lower_model alone), Clip's initializer bounds are not turned
// into weight arguments either (the ReLU6 case used to fail to lower).
TEST(CompileHardening, ClipBoundsStayConstantsWithRuntimeWeights) {
  std::unique_ptr<ir::Model> m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 5] x) => (float[2, 5] y) <float lo = {0}, float hi = {6}, float[5] s = {1,2,3,4,5}> {
  z = Mul(x, s)
  y = Clip(z, lo, hi)
})");
  compiler::LowerOptions lo;
  lo.runtime_weights = true;
  compiler::LoweredModel low = compiler::lower_model(*m, "relu6.onnx", lo);
  ASSERT_EQ(low.weights.size(), 1u);
  EXPECT_EQ(low.weights[0].onnx_name, "s");
  interp::TensorMap in = interp::random_inputs(*m, 5);
  for (float& v : in["x"].f) v *= 20;
  ir::Tensor want = in["x"];
  for (size_t k = 0; k < want.f.size(); ++k) want.f[k] = std::min(6.0f, std::max(0.0f, want.f[k] * float(k % 5 + 1)));
  EXPECT_LE(interp::max_relative_difference(run_jit(low, *m, in).at("y"), want), 1e-6);
}

TEST(CompileHardening, NonFloatDataIsRefusedNamingTheInput) {
  std::unique_ptr<ir::Model> m = parse(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 5] x) => (float[1, 2, 3] y) <float[2, 2, 3] w = {1,2,3,4,5,6,7,8,9,10,11,12}> { y = Conv(x, w) })");
  ir::Tensor half = *m->graph.find_value("w")->constant;  // float16 has no text literal: retyped here
  half.dtype = ir::DType::Float16;
  half.onnx_proto.clear();
  *m->graph.find_value("w")->constant = half;
  std::string e;
  try {
    compiler::lower_model(*m, "bad.onnx", {});
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("(Conv): input 1 ('w') has type float16; the compiler computes float32 only"), std::string::npos) << e;
  e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1, 2, 5] x) => (float[1, 2, 3] y) <int64[2, 2, 3] w = {1,2,3,4,5,6,7,8,9,10,11,12}> { y = Conv(x, w) })");
  EXPECT_NE(e.find("input 1 ('w') has type int64"), std::string::npos) << e;
}

TEST(CompileHardening, SizesBeyond32BitIndexingAreRefused) {
  std::string e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[65536, 65536] y) <int64[2] s = {65536, 65536}> { y = Expand(x, s) })");
  EXPECT_NE(e.find("output 'y' of shape (65536, 65536) has more than 2^31 - 1 elements"), std::string::npos) << e;
  e = lower_error(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[65536, 65536] x) => (float[65536, 65536] y) { y = Relu(x) })");
  EXPECT_NE(e.find("input 'x' of shape (65536, 65536) has more than"), std::string::npos) << e;
}

TEST(CompileHardening, TooManyNodesAreRefusedNamingTheLimit) {
  std::ostringstream t;
  t << "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[4] x) => (float[4] y) {\n  v0 = Relu(x)\n";
  const size_t n = compiler::kMaxNodes + 1;
  for (size_t k = 1; k < n; ++k) t << "  v" << k << " = Relu(v" << k - 1 << ")\n";
  t << "  y = Identity(v" << n - 1 << ")\n}\n";
  std::string e = lower_error(t.str());
  EXPECT_NE(e.find("nodes after rewrites; the compiler lowers at most " + std::to_string(compiler::kMaxNodes)),
            std::string::npos) << e;
}

// A chain of more nodes than one pipeline takes is cut into parts, each
// under the limit, with a run-time batch too; kept whole (--part-nodes=0)
// or with runtime weights it is refused naming the limit, and nothing is written.
TEST(CompileHardening, ModelsOfMoreNodesThanAPipelineAreCutIntoParts) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("batchconv_parts_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const size_t n = compiler::kMaxNodes + 200;
  {
    std::ofstream t(dir / "chain.onnxtxt");
    t << "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[1, 4] x) => (float[1, 4] y) {\n  v0 = Relu(x)\n";
    for (size_t k = 1; k + 1 < n; ++k) t << "  v" << k << " = " << (k % 2 ? "Neg" : "Relu") << "(v" << k - 1 << ")\n";
    t << "  y = Relu(v" << n - 2 << ")\n}\n";
  }
  compiler::CompileOptions o;
  o.out_dir = (dir / "out").string();
  fs::create_directories(o.out_dir);
  o.run_rewrites = false;
  o.part_nodes = 400;
  const compiler::CompileSummary s = compiler::compile_model_file((dir / "chain.onnxtxt").string(), o);
  EXPECT_EQ(s.nodes, static_cast<int>(n));
  ASSERT_EQ(s.parts.size(), 3u);
  EXPECT_NE(s.parts[1].find("reads 'v"), std::string::npos) << s.parts[1];
  EXPECT_TRUE(fs::exists(fs::path(o.out_dir) / "libchain.a"));
  std::ifstream h(fs::path(o.out_dir) / "chain.h");
  const std::string header((std::istreambuf_iterator<char>(h)), std::istreambuf_iterator<char>());
  EXPECT_NE(header.find("chain_num_pipelines = 3;"), std::string::npos);
  EXPECT_NE(header.find("chain_impl_p2("), std::string::npos);
  // With a run-time batch it is cut the same way.
  {
    compiler::CompileOptions d = o;
    d.out_dir = (dir / "dynamic").string();
    fs::create_directories(d.out_dir);
    d.dynamic_batch = true;
    EXPECT_EQ(compiler::compile_model_file((dir / "chain.onnxtxt").string(), d).parts.size(), 3u);
  }
  for (int refusal = 0; refusal < 2; ++refusal) {
    compiler::CompileOptions r = o;
    r.out_dir = (dir / "refused").string();
    fs::create_directories(r.out_dir);
    if (refusal == 0) r.part_nodes = 0;
    if (refusal == 1) r.runtime_weights = true;
    std::string e;
    try {
      compiler::compile_model_file((dir / "chain.onnxtxt").string(), r);
    } catch (const Error& x) {
      e = x.what();
    }
    EXPECT_NE(e.find(std::to_string(n) + " nodes after rewrites; the compiler lowers at most " +
                     std::to_string(compiler::kMaxNodes)), std::string::npos) << refusal << ": " << e;
    EXPECT_TRUE(fs::is_empty(r.out_dir)) << refusal;
  }
  fs::remove_all(dir);
}

TEST(CompileHardening, FunctionNamesMustBeUsableInC) {
  compiler::CompileOptions o;
  o.out_dir = ::testing::TempDir();
  const std::string model = std::string(BATCHCONV_MODELS_DIR) + "/seed1_opset17.onnx";
  for (const char* bad : {"int", "static", "_Model", "a__b", "halide_foo", "9lives", "with-dash"}) {
    o.name = bad;
    try {
      compiler::compile_model_file(model, o);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--name '") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

// A write that fails (here: the file size limit) is an error, not an abort,
// and leaves neither files nor the temporary folder behind.
TEST(CompileHardening, FailedWriteIsAnErrorAndLeavesNothing) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("batchconv_write_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  compiler::CompileOptions o;
  o.out_dir = dir.string();
  struct rlimit old_limit, small;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  small = old_limit;
  small.rlim_cur = 4096;
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string msg;
  try {
    compiler::compile_model_file(std::string(BATCHCONV_MODELS_DIR) + "/seed1_opset17.onnx", o);
  } catch (const std::exception& e) {
    msg = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(msg.find("seed1_opset17.onnx"), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_empty(dir)) << "files or the temporary folder were left in " << dir;
  fs::remove_all(dir);
}

// One op table per role: every op the compiler lowers also runs in the
// reference interpreter, so --verify and these tests can check it.
TEST(CompileHardening, EveryLoweredOpHasAnInterpreterKernel) {
  for (const std::string& op : compiler::supported_ops()) {
    const size_t dot = op.rfind('.');
    const std::string domain = dot == std::string::npos ? "" : op.substr(0, dot);
    const std::string type = dot == std::string::npos ? op : op.substr(dot + 1);
    EXPECT_NE(interp::find_kernel(domain, type), nullptr) << op << " has no interpreter kernel";
  }
}

}  // namespace
}  // namespace batchconv::testing

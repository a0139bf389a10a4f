// combine_parallel_convs: numerically equal on swept shapes/uses, and one DoesNotRewrite case per
// precondition (with its reason).
#include <gtest/gtest.h>

#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

struct CombineCase {
  std::string use;  // "concat", "concat_mid", "separate", "mixed"
  std::vector<int64_t> Ms;
  int64_t g = 1;
  int spatial = 2;
  int64_t k = 3, stride = 1, pad = 1;
  bool bias = true;
  int64_t opset = 13;
  int64_t C = 4, H = 5, N = 2;
};

void PrintTo(const CombineCase& c, std::ostream* os) {
  *os << c.use << " Ms=" << dims(c.Ms) << " g=" << c.g << " " << c.spatial << "-D k=" << c.k << " s=" << c.stride
      << " p=" << c.pad << " bias=" << c.bias << " opset=" << c.opset;
}

std::string rep(int64_t n, int64_t v) {
  std::string o;
  for (int64_t i = 0; i < n; ++i) o += (i ? "," : "") + std::to_string(v);
  return o;
}

struct Twist {
  bool kernel_differs = false;   // last conv has kernel 1
  bool bias_differs = false;     // last conv has no bias
  bool weight_input = false;     // first weight is a graph input
  bool dynamic = false;          // spatial dims symbolic
  bool stride_differs = false;   // last conv has stride 2
};

std::string combine_model(const CombineCase& c, uint64_t seed, const Twist& tw = {}) {
  ModelText t(c.opset, seed);
  const int64_t Ho = (c.H + 2 * c.pad - c.k) / c.stride + 1;
  std::vector<int64_t> xs{c.N, c.C};
  for (int i = 0; i < c.spatial; ++i) xs.push_back(c.H);
  if (tw.dynamic) {
    t.input("float[" + std::to_string(c.N) + "," + std::to_string(c.C) + (c.spatial == 2 ? ",H,W" : ",H") + "] x");
  } else {
    t.input("float[" + dims(xs) + "] x");
  }
  auto out_shape = [&](int64_t m) {
    std::string s = std::to_string(c.N) + "," + std::to_string(m);
    for (int i = 0; i < c.spatial; ++i) s += tw.dynamic ? (i ? ",OW" : ",OH") : "," + std::to_string(Ho);
    return s;
  };
  const size_t k = c.Ms.size();
  for (size_t i = 0; i < k; ++i) {
    const std::string s = std::to_string(i);
    const bool last = i + 1 == k;
    const int64_t kk = tw.kernel_differs && last ? 1 : c.k;
    const int64_t pad = tw.kernel_differs && last ? 0 : c.pad;
    const int64_t stride = tw.stride_differs && last ? 2 : c.stride;
    std::vector<int64_t> ws{c.Ms[i], c.C / c.g};
    for (int d = 0; d < c.spatial; ++d) ws.push_back(kk);
    if (tw.weight_input && i == 0) {
      t.input("float[" + dims(ws) + "] w0");
    } else {
      t.weight("w" + s, ws);
    }
    const bool bias = c.bias && !(tw.bias_differs && last);
    if (bias) t.weight("b" + s, {c.Ms[i]});
    t.node("y" + s + " = Conv<group=" + std::to_string(c.g) + ", kernel_shape=[" + rep(c.spatial, kk) +
           "], strides=[" + rep(c.spatial, stride) + "], pads=[" + rep(2 * c.spatial, pad) + "]>(x, w" + s +
           (bias ? ", b" + s : "") + ")");
  }
  int64_t total = 0;
  for (int64_t m : c.Ms) total += m;
  if (c.use == "concat") {
    std::string ins;
    for (size_t i = 0; i < k; ++i) ins += (i ? ", y" : "y") + std::to_string(i);
    t.node("y = Concat<axis=1>(" + ins + ")");
    t.output("float[" + out_shape(total) + "] y");
  } else if (c.use == "concat_mid") {  // x, y1, y0, y2.., x: a run in another order, among other inputs
    std::string ins = "x, y1, y0";
    for (size_t i = 2; i < k; ++i) ins += ", y" + std::to_string(i);
    t.node("y = Concat<axis=1>(" + ins + ", x)");
    t.output("float[" + out_shape(total + 2 * c.C) + "] y");
  } else if (c.use == "concat_and_separate") {  // y1, y0 a run of a Concat; the rest are outputs
    t.node("y = Concat<axis=1>(x, y1, y0, x)");
    t.output("float[" + out_shape(c.Ms[0] + c.Ms[1] + 2 * c.C) + "] y");
    for (size_t i = 2; i < k; ++i) t.output("float[" + out_shape(c.Ms[i]) + "] y" + std::to_string(i));
  } else if (c.use == "separate") {
    for (size_t i = 0; i < k; ++i) t.output("float[" + out_shape(c.Ms[i]) + "] y" + std::to_string(i));
  } else {  // mixed: y0 through a Relu, y1 twice, the rest as outputs
    t.node("r = Relu(y0)");
    t.node("s = Add(y1, y1)");
    t.output("float[" + out_shape(c.Ms[0]) + "] r");
    t.output("float[" + out_shape(c.Ms[1]) + "] s");
    for (size_t i = 2; i < k; ++i) t.output("float[" + out_shape(c.Ms[i]) + "] y" + std::to_string(i));
  }
  return t.str();
}

class CombineEquivalence : public ::testing::TestWithParam<CombineCase> {};

TEST_P(CombineEquivalence, RewritesToAnEqualGraph) {
  const CombineCase& c = GetParam();
  auto before = parse(combine_model(c, 21));
  auto after = clone(*before);
  auto r = run_pass(*after, "combine_parallel_convs");
  ASSERT_EQ(r.fired, 1) << (r.skips.empty() ? "" : r.skips[0].reason);
  const ir::Node* conv = only(*after, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attr_int("group", 1), c.g);
  int64_t total = 0;
  for (int64_t m : c.Ms) total += m;
  ASSERT_TRUE(conv->inputs[1]->constant);
  EXPECT_EQ(conv->inputs[1]->constant->shape[0], total);  // weights folded into one initializer
  const bool concat_absorbs = c.g == 1 && (c.use == "concat" || c.use == "concat_mid");
  EXPECT_EQ(count_ops(*after, "Split"), concat_absorbs ? 0 : 1);
  if (concat_absorbs) EXPECT_EQ(count_ops(*after, "Concat"), c.use == "concat" ? 0 : 1);
  if (c.use == "concat_and_separate") {  // the run is one Split output, spliced into the Concat
    const ir::Node* split = only(*after, "Split");
    ASSERT_NE(split, nullptr);
    EXPECT_EQ(split->outputs.size(), c.Ms.size() - 1);
    EXPECT_EQ(only(*after, "Concat")->inputs.size(), 3u);
  }
  if (!concat_absorbs && c.g == 1) {
    const ir::Node* split = only(*after, "Split");
    EXPECT_EQ(split->inputs.size(), c.opset >= 13 ? 2u : 1u);  // sizes as input from opset 13
    EXPECT_EQ(split->attr("split") != nullptr, c.opset < 13);
  }
  expect_sound_rewrite(*before, *after);
}

std::vector<CombineCase> combine_cases() {
  return {
      {"concat", {4, 6, 2}},                                // parallel branches + cat
      {"concat_mid", {3, 5, 2}},                            // run among other inputs, other order
      {"separate", {4, 6, 4}, 1, 2, 1, 2, 0},               // 1x1 stride 2, used separately
      {"separate", {2, 3}, 1, 1, 3, 1, 1, false, 11},       // 1-D, no bias, opset 11 Split attribute
      {"mixed", {2, 3, 4}, 1, 2, 3, 1, 1, true, 17},
      {"concat", {4, 2}, 2},                                // grouped: interleaved + Split
      {"separate", {4, 6, 2}, 2, 2, 1, 1, 0},               // grouped 1x1
      {"mixed", {4, 4, 4}, 4, 2, 3, 1, 1, true, 11},        // depthwise-like, opset 11
      {"concat_and_separate", {3, 5, 2, 4}},                // a Concat run plus separate uses
      {"concat_and_separate", {2, 1, 3}, 1, 1, 1, 1, 0, false, 11},
  };
}

INSTANTIATE_TEST_SUITE_P(Sweep, CombineEquivalence, ::testing::ValuesIn(combine_cases()));

TEST(CombineParallelConvs, CombinesOnlyTheConvsThatMatch) {
  Twist t;
  t.kernel_differs = true;
  auto before = parse(combine_model({"separate", {2, 3, 4}}, 5, t));
  auto after = clone(*before);
  auto r = run_pass(*after, "combine_parallel_convs");
  EXPECT_EQ(r.fired, 1);
  EXPECT_EQ(count_ops(*after, "Conv"), 2);
  ASSERT_EQ(r.skips.size(), 1u);
  EXPECT_NE(r.skips[0].reason.find("kernel or Cin/group differs"), std::string::npos) << r.skips[0].reason;
  expect_sound_rewrite(*before, *after);
}

// ---- DoesNotRewrite, one per precondition ----

void expect_skip(const std::string& text, const std::string& reason_part) {
  auto m = parse(text);
  const int convs = count_ops(*m, "Conv");
  auto r = run_pass(*m, "combine_parallel_convs");
  EXPECT_EQ(r.fired, 0);
  EXPECT_EQ(count_ops(*m, "Conv"), convs);
  ASSERT_FALSE(r.skips.empty()) << "no reason given";
  bool found = false;
  for (const auto& s : r.skips) found |= s.reason.find(reason_part) != std::string::npos;
  EXPECT_TRUE(found) << r.skips[0].reason;
}

TEST(CombineParallelConvs, DoesNotRewriteDifferentKernels) {
  Twist t;
  t.kernel_differs = true;
  expect_skip(combine_model({"concat", {2, 3}}, 1, t), "kernel or Cin/group differs");
}

TEST(CombineParallelConvs, DoesNotRewriteDifferentStrides) {
  Twist t;
  t.stride_differs = true;
  expect_skip(combine_model({"separate", {2, 3}}, 1, t), "strides differ");
}

TEST(CombineParallelConvs, DoesNotRewriteBiasOnOnlySome) {
  Twist t;
  t.bias_differs = true;
  expect_skip(combine_model({"concat", {2, 3}}, 1, t), "bias");
}

TEST(CombineParallelConvs, DoesNotRewriteNonConstantWeights) {
  Twist t;
  t.weight_input = true;
  expect_skip(combine_model({"concat", {2, 3}}, 1, t), "not a float constant");
}

TEST(CombineParallelConvs, DoesNotRewriteGroupedWithoutStaticShapes) {
  Twist t;
  t.dynamic = true;
  expect_skip(combine_model({"separate", {2, 4}, 2}, 1, t), "static output shape");
}

}  // namespace
}  // namespace batchconv::testing

// raise_transposed_grouped_conv_to_batched_conv: seed 3's hand-written batched conv becomes
// batchconv.BatchedWeightConv (numerically equal on swept shapes), and DoesNotRewrite cases.
#include <gtest/gtest.h>

#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

struct RaiseCase {
  int64_t B, n, C, M, g = 1;
  int64_t k = 3, pad = 0;
  bool conv_bias = false, add_bias = true;
  int64_t opset = 13;
};

void PrintTo(const RaiseCase& c, std::ostream* os) {
  *os << "B=" << c.B << " n=" << c.n << " C=" << c.C << " M=" << c.M << " g=" << c.g << " k=" << c.k
      << " pad=" << c.pad << " conv_bias=" << c.conv_bias << " add_bias=" << c.add_bias << " opset=" << c.opset;
}

struct Twist {
  bool wrong_perm = false;     // second Transpose keeps the order
  int64_t group_div = 0;       // conv group = this instead of B*g
  bool extra_use = false;      // the conv output is also a graph output
};

std::string raise_model(const RaiseCase& c, uint64_t seed, const Twist& tw = {}) {
  const int64_t H = 6, Ho = H + 2 * c.pad - c.k + 1;
  ModelText t(c.opset, seed);
  t.input("float[" + dims({c.B, c.n, c.C, H, H}) + "] x");
  t.output("float[" + dims(tw.wrong_perm ? std::vector<int64_t>{c.n, c.B, c.M, Ho, Ho}
                                          : std::vector<int64_t>{c.B, c.n, c.M, Ho, Ho}) + "] y");
  if (tw.extra_use) t.output("float[" + dims({c.n, c.B * c.M, Ho, Ho}) + "] c");
  t.ints("s1", {c.n, c.B * c.C, H, H});
  t.ints("s2", {c.n, c.B, c.M, Ho, Ho});
  const int64_t group = tw.group_div ? tw.group_div : c.B * c.g;
  t.weight("w", {c.B * c.M, c.B * c.C / group, c.k, c.k});
  if (c.conv_bias) t.weight("b", {c.B * c.M});
  if (c.add_bias) t.weight("k", {c.B, 1, c.M, 1, 1});
  t.node("t = Transpose<perm=[1,0,2,3,4]>(x)");
  t.node("r = Reshape(t, s1)");
  t.node("c = Conv<group=" + std::to_string(group) + ", pads=[" + dims({c.pad, c.pad, c.pad, c.pad}) + "]>(r, w" +
         (c.conv_bias ? ", b" : "") + ")");
  t.node("r2 = Reshape(c, s2)");
  const std::string last = c.add_bias ? "u" : "y";
  t.node(last + (tw.wrong_perm ? " = Transpose<perm=[0,1,2,3,4]>(r2)" : " = Transpose<perm=[1,0,2,3,4]>(r2)"));
  if (c.add_bias) t.node("y = Add(u, k)");
  return t.str();
}

rewrites::PassOptions own_ops() {
  rewrites::PassOptions o;
  o.emit_batchconv_ops = true;
  return o;
}

class RaiseEquivalence : public ::testing::TestWithParam<RaiseCase> {};

TEST_P(RaiseEquivalence, RewritesToOneBatchedWeightConv) {
  const RaiseCase& c = GetParam();
  auto before = parse(raise_model(c, 31));
  auto after = clone(*before);
  auto r = run_pass(*after, "raise_transposed_grouped_conv_to_batched_conv", own_ops());
  ASSERT_EQ(r.fired, 1) << (r.skips.empty() ? "" : r.skips[0].reason);
  EXPECT_EQ(count_ops(*after, "Conv") + count_ops(*after, "Transpose") + count_ops(*after, "Add"), 0);
  const ir::Node* b = only(*after, "BatchedWeightConv", "batchconv");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->attr_int("group", 1), c.g);
  EXPECT_EQ(b->inputs[0]->name, "x");
  EXPECT_EQ(b->inputs.size(), (c.conv_bias || c.add_bias) ? 3u : 2u);
  expect_sound_rewrite(*before, *after);
}

INSTANTIATE_TEST_SUITE_P(Sweep, RaiseEquivalence,
                         ::testing::Values(RaiseCase{3, 2, 3, 4},                             // seed 3
                                           RaiseCase{1, 3, 2, 2, 1, 3, 1, true, false},       // one task
                                           RaiseCase{2, 1, 4, 4, 2, 1, 0, true, true},        // grouped per task
                                           RaiseCase{4, 2, 2, 3, 1, 3, 1, false, false, 17}));

TEST(RaiseTransposedGroupedConv, DoesNothingWithoutTheOwnOpsOption) {
  auto m = parse(raise_model({3, 2, 3, 4}, 1));
  auto r = run_pass(*m, "raise_transposed_grouped_conv_to_batched_conv");
  EXPECT_EQ(r.fired, 0);
  EXPECT_EQ(count_ops(*m, "Conv"), 1);
}

void expect_skip(const std::string& text, const std::string& reason_part) {
  auto m = parse(text);
  auto r = run_pass(*m, "raise_transposed_grouped_conv_to_batched_conv", own_ops());
  EXPECT_EQ(r.fired, 0);
  EXPECT_EQ(count_ops(*m, "Conv"), 1);
  EXPECT_EQ(count_ops(*m, "BatchedWeightConv", "batchconv"), 0);
  ASSERT_FALSE(r.skips.empty()) << "no reason given";
  EXPECT_NE(r.skips[0].reason.find(reason_part), std::string::npos) << r.skips[0].reason;
}

TEST(RaiseTransposedGroupedConv, DoesNotRewriteWithoutTheInverseTranspose) {
  Twist t;
  t.wrong_perm = true;
  expect_skip(raise_model({2, 2, 2, 2}, 1, t), "inverse Transpose");
}

TEST(RaiseTransposedGroupedConv, DoesNotRewriteGroupThatMixesTasks) {
  Twist t;
  t.group_div = 1;  // a dense conv over all tasks' channels: not per task
  expect_skip(raise_model({2, 2, 2, 2, 1, 3, 0, false, false}, 1, t), "not a multiple of the 2 tasks");
}

TEST(RaiseTransposedGroupedConv, DoesNotRewriteWhenTheConvOutputIsUsedElsewhere) {
  Twist t;
  t.extra_use = true;
  expect_skip(raise_model({2, 2, 2, 2}, 1, t), "not only reshaped back");
}

}  // namespace
}  // namespace batchconv::testing

// fold_repeat_into_conv: numerically equal on swept shapes/forms, and one DoesNotRewrite case per
// precondition (with its reason).
#include <gtest/gtest.h>

#include <algorithm>

#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

struct FoldCase {
  std::string form;  // "Tile", "Concat", "Expand"
  int64_t C, R, G, cout_g;
  int spatial;  // 1 or 2
  int64_t k = 1, stride = 1, pad = 0, dil = 1;
  bool bias = true;
  int64_t opset = 13;
  int64_t N = 2, L = 7;
};

std::string rep(int64_t n, const std::string& s) {
  std::string o;
  for (int64_t i = 0; i < n; ++i) o += (i ? "," : "") + s;
  return o;
}

void PrintTo(const FoldCase& c, std::ostream* os) {
  *os << c.form << " C=" << c.C << " R=" << c.R << " G=" << c.G << " cout_g=" << c.cout_g << " " << c.spatial
      << "-D k=" << c.k << " s=" << c.stride << " p=" << c.pad << " d=" << c.dil << " bias=" << c.bias
      << " opset=" << c.opset;
}

int64_t out_len(const FoldCase& c) { return (c.L + 2 * c.pad - c.dil * (c.k - 1) - 1) / c.stride + 1; }

// x -> repeat (form) -> Conv<group=G>; `extra_user` also returns the repeated tensor.
std::string fold_model(const FoldCase& c, uint64_t seed, bool extra_user = false, bool weight_input = false) {
  ModelText t(c.opset, seed);
  std::vector<int64_t> xs{c.N, c.C}, rs{c.N, c.R * c.C}, ys{c.N, c.G * c.cout_g};
  for (int i = 0; i < c.spatial; ++i) {
    xs.push_back(c.L);
    rs.push_back(c.L);
    ys.push_back(out_len(c));
  }
  t.input("float[" + dims(xs) + "] x");
  std::vector<int64_t> ws{c.G * c.cout_g, c.R * c.C / c.G};
  for (int i = 0; i < c.spatial; ++i) ws.push_back(c.k);
  if (weight_input) t.input("float[" + dims(ws) + "] w");
  t.output("float[" + dims(ys) + "] y");
  if (extra_user) t.output("float[" + dims(rs) + "] r");
  if (!weight_input) t.weight("w", ws);
  if (c.bias) t.weight("b", {c.G * c.cout_g});
  if (c.form == "Tile") {
    std::vector<int64_t> reps{1, c.R};
    for (int i = 0; i < c.spatial; ++i) reps.push_back(1);
    t.ints("reps", reps);
    t.node("r = Tile(x, reps)");
  } else if (c.form == "Concat") {
    t.node("r = Concat<axis=1>(" + rep(c.R, "x") + ")");
  } else {  // Unsqueeze / Expand / Reshape, as PyTorch writes x.unsqueeze(1).expand(...).reshape(...)
    // "Interleave": x.unsqueeze(2).expand(...).reshape(...), i.e. repeat_interleave along channels.
    const bool il = c.form == "Interleave";
    std::vector<int64_t> es = il ? std::vector<int64_t>{1, 1, c.R} : std::vector<int64_t>{1, c.R, 1},
                         shape{c.N, c.R * c.C};
    for (int i = 0; i < c.spatial; ++i) {
      es.push_back(1);
      shape.push_back(c.L);
    }
    t.ints("eshape", es);
    t.ints("rshape", shape);
    if (c.opset >= 13) {
      t.ints("axes", {il ? 2 : 1});
      t.node("u = Unsqueeze(x, axes)");
    } else {
      t.node(il ? "u = Unsqueeze<axes=[2]>(x)" : "u = Unsqueeze<axes=[1]>(x)");
    }
    t.node("e = Expand(u, eshape)");
    t.node("r = Reshape(e, rshape)");
  }
  t.node("y = Conv<group=" + std::to_string(c.G) + ", kernel_shape=[" + rep(c.spatial, std::to_string(c.k)) +
         "], strides=[" + rep(c.spatial, std::to_string(c.stride)) + "], pads=[" +
         rep(2 * c.spatial, std::to_string(c.pad)) + "], dilations=[" + rep(c.spatial, std::to_string(c.dil)) +
         "]>(r, w" + (c.bias ? ", b" : "") + ")");
  return t.str();
}

class FoldRepeatEquivalence : public ::testing::TestWithParam<FoldCase> {};

TEST_P(FoldRepeatEquivalence, RewritesToAnEqualGraph) {
  const FoldCase& c = GetParam();
  auto before = parse(fold_model(c, 7));
  auto after = clone(*before);
  auto r = run_pass(*after, "fold_repeat_into_conv");
  ASSERT_EQ(r.fired, 1) << (r.skips.empty() ? "" : r.skips[0].reason);
  EXPECT_EQ(count_ops(*after, "Tile") + count_ops(*after, "Expand") + count_ops(*after, "Concat"), 0);
  const ir::Node* conv = only(*after, "Conv");
  ASSERT_NE(conv, nullptr);
  const int64_t cg = c.R * c.C / c.G;
  const int64_t want_group =
      c.form == "Interleave" ? c.C / (cg / std::min(c.R, cg)) : (c.R % c.G == 0 ? 1 : c.G / c.R);
  EXPECT_EQ(conv->attr_int("group", 1), want_group);
  EXPECT_EQ(conv->inputs[0]->name, "x");
  const bool shuffled = c.form != "Interleave" && c.R % c.G != 0;
  EXPECT_EQ(count_ops(*after, "Transpose"), shuffled ? 1 : 0);
  if (!shuffled) EXPECT_GT(r.bytes_saved, 0);
  EXPECT_GE(r.bytes_saved, 0);
  expect_sound_rewrite(*before, *after);
}

std::vector<FoldCase> fold_cases() {
  std::vector<FoldCase> v;
  for (const char* form : {"Tile", "Concat", "Expand"}) {
    v.push_back({form, 16, 4, 4, 16, 1});                     // seed 1: 4 linear layers on one input
    v.push_back({form, 3, 2, 2, 3, 2, 3, 2, 1, 2, false});   // 2-D, stride, pad, dilation, no bias
    v.push_back({form, 5, 4, 2, 2, 1, 3, 1, 1, 1});          // R = 2*G: weight copies summed
    v.push_back({form, 4, 2, 4, 2, 1, 3, 1, 1});             // G = 2*R: grouped conv + shuffle
  }
  v.push_back({"Tile", 1, 3, 3, 1, 1});                      // one channel, depthwise-like
  v.push_back({"Tile", 6, 3, 1, 4, 1, 1});                   // group 1 over a repeat: summed weights
  v.push_back({"Tile", 4, 2, 8, 1, 2, 1, 1, 0, 1, true, 11});  // G = 4*R, opset 11
  v.push_back({"Expand", 4, 3, 3, 2, 1, 1, 1, 0, 1, true, 11});  // Unsqueeze with axes attribute
  v.push_back({"Tile", 16, 4, 4, 16, 1, 1, 1, 0, 1, true, 17});
  v.push_back({"Tile", 4, 2, 4, 3, 1, 1, 2, 0, 1, true, 13, 2, 8});  // more channels out, but stride 2:
                                                                      // the shuffle still allocates less
  v.push_back({"Interleave", 4, 2, 2, 3, 1, 3, 1, 1});       // R | channels per group: group G, pairs summed
  v.push_back({"Interleave", 3, 2, 3, 2, 1});                // channels per group = R: group C
  v.push_back({"Interleave", 2, 4, 8, 1, 1});                // one channel per group: weights unchanged
  v.push_back({"Interleave", 2, 4, 4, 2, 2, 3, 2, 1, 1, true, 11});  // 2-D, stride 2, opset 11
  return v;
}

std::string case_name(const ::testing::TestParamInfo<FoldCase>& i) {
  const FoldCase& c = i.param;
  return c.form + "_C" + std::to_string(c.C) + "_R" + std::to_string(c.R) + "_G" + std::to_string(c.G) + "_" +
         std::to_string(c.spatial) + "d_opset" + std::to_string(c.opset) + "_" + std::to_string(i.index);
}

INSTANTIATE_TEST_SUITE_P(Sweep, FoldRepeatEquivalence, ::testing::ValuesIn(fold_cases()), case_name);

TEST(FoldRepeatIntoConv, KeepsTheRepeatForItsOtherUsers) {
  FoldCase c{"Tile", 4, 2, 2, 3, 1, 3, 1, 1};
  auto before = parse(fold_model(c, 3, /*extra_user=*/true));
  auto after = clone(*before);
  EXPECT_EQ(run_pass(*after, "fold_repeat_into_conv").fired, 1);
  EXPECT_EQ(count_ops(*after, "Tile"), 1);
  EXPECT_EQ(only(*after, "Conv")->inputs[0]->name, "x");
  expect_sound_rewrite(*before, *after);
}

TEST(FoldRepeatIntoConv, SeesThroughAnUnsqueezeAfterTheRepeat) {
  // Seed 1 as written: x (16, N) repeated along axis 0, then unsqueezed to (1, 64, N) for Conv1d.
  ModelText t(13, 5);
  t.input("float[16,9] x");
  t.output("float[1,64,9] y");
  t.ints("reps", {4, 1});
  t.ints("axes", {0});
  t.weight("w", {64, 16, 1});
  t.weight("b", {64});
  t.node("r = Tile(x, reps)");
  t.node("u = Unsqueeze(r, axes)");
  t.node("y = Conv<group=4>(u, w, b)");
  auto before = parse(t.str());
  auto after = clone(*before);
  ASSERT_EQ(run_pass(*after, "fold_repeat_into_conv").fired, 1);
  EXPECT_EQ(count_ops(*after, "Tile"), 0);
  EXPECT_EQ(only(*after, "Conv")->attr_int("group", 1), 1);
  expect_sound_rewrite(*before, *after);
}

// ---- DoesNotRewrite, one per precondition ----

void expect_skip(const std::string& text, const std::string& reason_part) {
  auto m = parse(text);
  auto r = run_pass(*m, "fold_repeat_into_conv");
  EXPECT_EQ(r.fired, 0);
  ASSERT_FALSE(r.skips.empty()) << "no reason given";
  EXPECT_NE(r.skips[0].reason.find(reason_part), std::string::npos) << r.skips[0].reason;
  EXPECT_EQ(count_ops(*m, "Conv"), 1);
  EXPECT_EQ(only(*m, "Conv")->inputs[0]->name, "r");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteRepeatOffTheChannelAxis) {
  ModelText t(13, 1);
  t.input("float[2,4,5] x");
  t.output("float[2,8,10] y");
  t.ints("reps", {1, 1, 2});
  t.weight("w", {8, 2, 1});
  t.node("r = Tile(x, reps)");
  t.node("y = Conv<group=2>(r, w)");
  expect_skip(t.str(), "not the channel axis");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteWhenNeitherDividesTheOther) {
  expect_skip(fold_model({"Tile", 4, 3, 2, 2, 1}, 1), "neither divides");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteInterleavedRepeatSplitAcrossGroups) {
  // repeat_interleave by 3 of 2 channels, 3 groups of 2: group 1 reads one copy of x0 and one of x1.
  expect_skip(fold_model({"Interleave", 2, 3, 3, 1, 1}, 1), "neither divides");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteNonConstantRepeats) {
  ModelText t(13, 1);
  t.input("float[2,4,5] x");
  t.input("int64[3] reps");
  t.output("float[2,8,5] y");
  t.weight("w", {8, 4, 1});
  t.node("r = Tile(x, reps)");
  t.node("y = Conv<group=2>(r, w)");
  expect_skip(t.str(), "not constant");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteTileOfTwoAxes) {
  ModelText t(13, 1);
  t.input("float[2,4,5] x");
  t.output("float[2,8,10] y");
  t.ints("reps", {1, 2, 2});
  t.weight("w", {8, 4, 1});
  t.node("r = Tile(x, reps)");
  t.node("y = Conv<group=2>(r, w)");
  expect_skip(t.str(), "more than one axis");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteConcatOfDifferentValues) {
  ModelText t(13, 1);
  t.input("float[2,4,5] x");
  t.input("float[2,4,5] z");
  t.output("float[2,12,5] y");
  t.weight("w", {12, 4, 1});
  t.node("r = Concat<axis=1>(x, x, z)");
  t.node("y = Conv<group=3>(r, w)");
  expect_skip(t.str(), "not all the same value");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteSummedWeightsThatAreNotConstant) {
  expect_skip(fold_model({"Tile", 4, 4, 2, 2, 1}, 1, false, /*weight_input=*/true), "not constant");
}

TEST(FoldRepeatIntoConv, DoesNotRewriteShuffleThatAllocatesMore) {
  // G = 2*R but 4*16 output channels > 2*4 repeated channels: the shuffle would cost more memory.
  expect_skip(fold_model({"Tile", 4, 2, 4, 16, 1}, 1), "more than the repeat");
}

}  // namespace
}  // namespace batchconv::testing

// fuse_batch_slices_into_batched_conv: numerically equal on swept shapes/forms (standard ONNX and
// the project's own op), and one DoesNotRewrite case per precondition (with its reason).
#include <gtest/gtest.h>

#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

struct FuseCase {
  std::string form;  // "Slice", "Split", "SplitEqual"
  int64_t G, n, C, M, g = 1;
  int spatial = 2;
  int64_t k = 3, stride = 1, pad = 1;
  bool bias = true;
  int64_t opset = 13;
  int64_t H = 6;
};

void PrintTo(const FuseCase& c, std::ostream* os) {
  *os << c.form << " G=" << c.G << " n=" << c.n << " C=" << c.C << " M=" << c.M << " g=" << c.g << " "
      << c.spatial << "-D k=" << c.k << " s=" << c.stride << " p=" << c.pad << " bias=" << c.bias
      << " opset=" << c.opset;
}

std::string rep(int64_t n, int64_t v) {
  std::string o;
  for (int64_t i = 0; i < n; ++i) o += (i ? "," : "") + std::to_string(v);
  return o;
}

// Knobs for the DoesNotRewrite cases.
struct Twist {
  bool reverse_concat = false;   // Concat in the opposite order
  bool pads_differ = false;      // last conv pads differently
  bool extra_use = false;        // first conv output also a graph output
  bool weight_input = false;     // first conv weight is a graph input
  bool slice_axis2 = false;      // slices cut H (axis 2) instead of the batch
  bool short_cover = false;      // slices leave the last n samples out
  bool dynamic_batch = false;    // batch dim symbolic
  bool shared = false;           // every slice through w0 (b0)
  int relu = 0;                  // 1: Relu after every conv; 2: after the first conv only
};

std::string fuse_model(const FuseCase& c, uint64_t seed, const Twist& tw = {}) {
  ModelText t(c.opset, seed);
  const int64_t N = c.G * c.n + (tw.short_cover ? c.n : 0);
  const int64_t Ho = (c.H + 2 * c.pad - c.k) / c.stride + 1;
  std::vector<int64_t> xs{N, c.C}, ys{c.G * c.n, c.M};
  for (int i = 0; i < c.spatial; ++i) {
    xs.push_back(c.H);
    ys.push_back(Ho);
  }
  std::string xdecl = "float[" + dims(xs) + "] x";
  if (tw.dynamic_batch) xdecl = "float[N," + dims(std::vector<int64_t>(xs.begin() + 1, xs.end())) + "] x";
  t.input(xdecl);
  std::vector<int64_t> ws{c.M, c.C / c.g};
  for (int i = 0; i < c.spatial; ++i) ws.push_back(c.k);
  if (tw.weight_input) t.input("float[" + dims(ws) + "] w0");
  if (tw.slice_axis2) {
    ys[0] = c.n * c.G;
  }
  t.output("float[" + (tw.dynamic_batch ? std::string("N,") + dims(std::vector<int64_t>(ys.begin() + 1, ys.end()))
                                        : dims(ys)) + "] y");
  if (tw.extra_use) {
    std::vector<int64_t> y0 = ys;
    y0[0] = c.n;
    t.output("float[" + dims(y0) + "] y0");
  }
  std::string split_outs;
  for (int64_t i = 0; i < c.G; ++i) split_outs += (i ? ", " : "") + std::string("x") + std::to_string(i);
  if (c.form == "Split" || c.form == "SplitEqual") {
    std::string attrs = "axis=0";
    if (c.form == "Split" && c.opset < 13) attrs += ", split=[" + rep(c.G, c.n) + "]";
    if (c.form == "Split" && c.opset >= 13) {
      t.ints("sizes", std::vector<int64_t>(c.G, c.n));
      t.node(split_outs + " = Split<" + attrs + ">(x, sizes)");
    } else {
      t.node(split_outs + " = Split<" + attrs + ">(x)");
    }
  }
  for (int64_t i = 0; i < c.G; ++i) {
    const std::string s = std::to_string(i);
    if (c.form == "Slice") {
      const int64_t axis = tw.slice_axis2 ? 2 : 0;
      t.ints("st" + s, {i * c.n});
      t.ints("en" + s, {(i + 1) * c.n});
      t.ints("ax" + s, {axis});
      t.node("x" + s + " = Slice(x, st" + s + ", en" + s + ", ax" + s + ")");
    }
    if (!(tw.weight_input && i == 0) && !(tw.shared && i > 0)) t.weight("w" + s, ws);
    if (c.bias && !(tw.shared && i > 0)) t.weight("b" + s, {c.M});
    const std::string ws_name = tw.shared ? "w0" : "w" + s, bs_name = tw.shared ? "b0" : "b" + s;
    const int64_t pad = tw.pads_differ && i == c.G - 1 ? c.pad + 1 : c.pad;
    const bool relu = tw.relu == 1 || (tw.relu == 2 && i == 0);
    const std::string conv_out = tw.extra_use && i == 0 ? "y0" : "y" + s + (relu ? "_conv" : "_");
    t.node(conv_out + " = Conv<group=" + std::to_string(c.g) + ", kernel_shape=[" + rep(c.spatial, c.k) +
           "], strides=[" + rep(c.spatial, c.stride) + "], pads=[" + rep(2 * c.spatial, pad) + "]>(x" + s + ", " +
           ws_name + (c.bias ? ", " + bs_name : "") + ")");
    if (relu) t.node("y" + s + "_r = Relu(" + conv_out + ")  y" + s + "_ = Identity(y" + s + "_r)");
  }
  std::string cat;
  for (int64_t k = 0; k < c.G; ++k) {
    int64_t i = tw.reverse_concat ? c.G - 1 - k : k;
    cat += (k ? ", " : "") + (tw.extra_use && i == 0 ? std::string("y0") : "y" + std::to_string(i) + "_");
  }
  t.node("y = Concat<axis=0>(" + cat + ")");
  return t.str();
}

class FuseEquivalence : public ::testing::TestWithParam<std::tuple<FuseCase, bool>> {};

TEST_P(FuseEquivalence, RewritesToAnEqualGraph) {
  const auto& [c, emit] = GetParam();
  auto before = parse(fuse_model(c, 11));
  auto after = clone(*before);
  rewrites::PassOptions o;
  o.emit_batchconv_ops = emit;
  auto r = run_pass(*after, "fuse_batch_slices_into_batched_conv", o);
  ASSERT_EQ(r.fired, 1) << (r.skips.empty() ? "" : r.skips[0].reason);
  EXPECT_EQ(count_ops(*after, "Slice") + count_ops(*after, "Split") + count_ops(*after, "Concat"), 0);
  if (emit) {
    EXPECT_EQ(count_ops(*after, "Conv"), 0);
    const ir::Node* b = only(*after, "BatchedWeightConv", "batchconv");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->attr_int("group", 1), c.g);
    EXPECT_EQ(after->opset("batchconv"), 1);
    expect_sound_rewrite(*before, *after);
  } else {
    const ir::Node* conv = only(*after, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->attr_int("group", 1), c.G * c.g);
    EXPECT_EQ(count_ops(*after, "Transpose"), c.n > 1 ? 2 : 0);
    expect_sound_rewrite(*before, *after);
  }
}

std::vector<FuseCase> fuse_cases() {
  return {
      {"Slice", 2, 3, 3, 4},                            // seed 2 with G=2
      {"Slice", 4, 2, 2, 3, 1, 2, 3, 2, 0, false},      // stride 2, no padding, no bias
      {"Slice", 3, 1, 4, 2},                            // one sample per group (G = N)
      {"Slice", 1 + 1, 2, 4, 4, 2},                     // grouped convs inside (g = 2)
      {"Split", 2, 2, 3, 5, 1, 1, 3, 1, 1},             // 1-D, Split with sizes input
      {"Split", 3, 2, 2, 2, 1, 2, 1, 1, 0, true, 11},   // opset 11: Split 'split' attribute
      {"SplitEqual", 4, 1, 3, 2, 1, 2, 3, 1, 1, true, 17},
  };
}

INSTANTIATE_TEST_SUITE_P(Sweep, FuseEquivalence, ::testing::Combine(::testing::ValuesIn(fuse_cases()),
                                                                    ::testing::Bool()));

TEST(FuseBatchSlices, SlicesThroughOneSharedConvBecomeThatConvOnTheBatch) {
  for (bool weight_input : {false, true}) {
    Twist t;
    t.shared = true;
    t.weight_input = weight_input;  // the shared weight need not even be constant
    auto before = parse(fuse_model({"Slice", 3, 2, 2, 3, 1, 2, 3, 1, 1}, 4, t));
    auto after = clone(*before);
    ASSERT_EQ(run_pass(*after, "fuse_batch_slices_into_batched_conv").fired, 1);
    const ir::Node* conv = only(*after, "Conv");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->inputs[0]->name, "x");
    EXPECT_EQ(conv->inputs[1]->name, "w0");
    EXPECT_EQ(count_ops(*after, "Slice") + count_ops(*after, "Transpose") + count_ops(*after, "Reshape"), 0);
    expect_sound_rewrite(*before, *after);
  }
}

// Slice before opset 10 takes its bounds as attributes.
std::string attribute_slices(int64_t opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + R"(]>
g (float[4,2,3,3] x) => (float[4,3,3,3] y)
<float[3,2,1,1] w0 = {1,2,3,4,5,6}, float[3,2,1,1] w1 = {6,5,4,3,2,1}>
{
  x0 = Slice<starts=[0], ends=[2], axes=[0]>(x)
  x1 = Slice<starts=[2], ends=[4], axes=[0]>(x)
  y0 = Conv(x0, w0)
  y1 = Conv(x1, w1)
  y = Concat<axis=0>(y0, y1)
})";
}

TEST(FuseBatchSlices, RewritesAttributeSlicesOfOpset9) {
  auto before = parse(attribute_slices(9));
  auto after = clone(*before);
  ASSERT_EQ(run_pass(*after, "fuse_batch_slices_into_batched_conv").fired, 1);
  EXPECT_EQ(only(*after, "Conv")->attr_int("group", 1), 2);
  expect_sound_rewrite(*before, *after);
}

// ---- DoesNotRewrite, one per precondition ----

TEST(FuseBatchSlices, DoesNotRewriteBeforeOpset5) {
  auto m = parse(attribute_slices(4));
  auto r = run_pass(*m, "fuse_batch_slices_into_batched_conv");
  EXPECT_EQ(r.fired, 0);
  ASSERT_FALSE(r.skips.empty());
  EXPECT_NE(r.skips[0].reason.find("needs Reshape-5"), std::string::npos) << r.skips[0].reason;
}

void expect_skip(const std::string& text, const std::string& reason_part) {
  auto m = parse(text);
  const int convs = count_ops(*m, "Conv");
  auto r = run_pass(*m, "fuse_batch_slices_into_batched_conv");
  EXPECT_EQ(r.fired, 0);
  ASSERT_FALSE(r.skips.empty()) << "no reason given";
  EXPECT_NE(r.skips[0].reason.find(reason_part), std::string::npos) << r.skips[0].reason;
  EXPECT_EQ(count_ops(*m, "Conv"), convs);
  EXPECT_EQ(count_ops(*m, "Concat"), 1);
}

const FuseCase kBase{"Slice", 2, 2, 3, 4};
const FuseCase kBaseRelu{"Split", 3, 2, 2, 3};

TEST(FuseBatchSlices, DoesNotRewriteConcatOutOfOrder) {
  Twist t;
  t.reverse_concat = true;
  expect_skip(fuse_model(kBase, 1, t), "Concat order");
}

TEST(FuseBatchSlices, DoesNotRewriteDifferentGeometry) {
  Twist t;
  t.pads_differ = true;
  FuseCase c = kBase;
  c.pad = 0;
  expect_skip(fuse_model(c, 1, t), "pads differ");
}

TEST(FuseBatchSlices, DoesNotRewriteConvOutputUsedElsewhere) {
  Twist t;
  t.extra_use = true;
  expect_skip(fuse_model(kBase, 1, t), "also used outside the Concat");
}

TEST(FuseBatchSlices, DoesNotRewriteNonConstantWeights) {
  Twist t;
  t.weight_input = true;
  expect_skip(fuse_model(kBase, 1, t), "not a float constant");
}

TEST(FuseBatchSlices, DoesNotRewriteSlicesOffTheBatchAxis) {
  Twist t;
  t.slice_axis2 = true;
  FuseCase c = kBase;  // slices of H: 2 x (N, C, 2, 6) -> Conv -> Concat along the batch
  c.n = 2;
  c.G = 3;
  c.pad = 1;
  auto text = fuse_model(c, 1, t);
  // Fix the declared output: the batch is N=6, H' = 2 per slice; let shape inference decide.
  auto pos = text.find("=> (float[");
  auto end = text.find("] y)", pos);
  text.replace(pos, end - pos, "=> (float[18,4,2,6");
  expect_skip(text, "not the batch axis");
}

TEST(FuseBatchSlices, DoesNotRewriteSlicesThatDoNotCoverTheBatch) {
  Twist t;
  t.short_cover = true;
  expect_skip(fuse_model(kBase, 1, t), "slices cover 4 of batch 6");
}

TEST(FuseBatchSlices, DoesNotRewriteDynamicBatch) {
  Twist t;
  t.dynamic_batch = true;
  expect_skip(fuse_model(kBase, 1, t), "not static");
}

TEST(FuseBatchSlices, TheSlicesCommonReluRunsOnceOnTheBatch) {
  for (bool emit : {false, true}) {
    Twist t;
    t.relu = 1;
    auto before = parse(fuse_model(kBaseRelu, 6, t));
    auto after = clone(*before);
    rewrites::PassOptions o;
    o.emit_batchconv_ops = emit;
    ASSERT_EQ(run_pass(*after, "fuse_batch_slices_into_batched_conv", o).fired, 1);
    EXPECT_EQ(count_ops(*after, "Relu"), 1);
    EXPECT_EQ(count_ops(*after, "Identity") + count_ops(*after, "Concat") + count_ops(*after, "Slice"), 0);
    expect_sound_rewrite(*before, *after);
  }
}

TEST(FuseBatchSlices, DoesNotRewriteDifferentOpsAfterTheConvs) {
  Twist t;
  t.relu = 2;
  expect_skip(fuse_model(kBaseRelu, 1, t), "different elementwise ops");
}

}  // namespace
}  // namespace batchconv::testing

// Squeeze-excite's channel scale folded into a 1x1 conv's weights
// (compiler/ops_conv.cpp, channel_scale): a conv reading Mul(a, scale), with
// a stored and the scale (N or 1, C, 1, 1), is computed as a conv of a with
// per-image weights W * scale. Small models in ONNX text syntax with baked
// 1x1 weights and fresh random data, through Halide's JIT under each layout
// policy, against the reference interpreter; and which convs took the fold.
#include <gtest/gtest.h>

#include <string>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing {
namespace {


std::string baked_1x1(const std::string& name, int co, int ci) { return baked_tensor(name, {co, ci, 1, 1}); }

// Lowers under every layout policy, checks each against the interpreter,
// and returns the conv schedule lines of the last.
std::vector<std::string> check(const std::string& text) { return check_every_layout(text).conv_schedules; }

bool folded(const std::vector<std::string>& lines, const std::string& node) {
  for (const std::string& l : lines)
    if (l.rfind("node '" + node + "' ", 0) == 0) return l.find("squeeze-excite scale folded") != std::string::npos;
  ADD_FAILURE() << "no schedule line for " << node;
  return false;
}

std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// The block as torchvision's EfficientNet builds it (depthwise conv, pool,
// two 1x1 convs, Sigmoid, Mul, projection), at batch n; the projection's
// result also gets a residual Add (its epilogue reads each image's own r).
std::string se_block(int n, int c, int hw, int cout) {
  const std::string N = std::to_string(n), C = std::to_string(c), H = std::to_string(hw), O = std::to_string(cout);
  return "<ir_version: 8, opset_import: [\"\" : 17]>\n"
         "g (float[" + N + ", " + C + ", " + H + ", " + H + "] x, float[" + C + ", 1, 3, 3] wd, float[" + O +
         "] b, float[" + N + ", " + O + ", " + H + ", " + H + "] r) => (float[" + N + ", " + O + ", " + H + ", " +
         H + "] y) <" + baked_1x1("w1", c / 4, c) + ", " + baked_1x1("w2", c, c / 4) + ", " +
         baked_1x1("wp", cout, c) + "> {\n"
         "  d = Conv<group = " + C + ", pads = [1, 1, 1, 1]>(x, wd)\n"
         "  p = GlobalAveragePool(d)\n"
         "  f1 = Conv(p, w1)\n"
         "  f1r = Relu(f1)\n"
         "  f2 = Conv(f1r, w2)\n"
         "  s = Sigmoid(f2)\n"
         "  m = Mul(d, s)\n"
         "  c = Conv(m, wp, b)\n"
         "  y = Add(c, r)\n"
         "}\n";
}

TEST(SqueezeExcite, ScaleFoldedIntoPerImageWeights) {
  for (int n : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(n));
    const std::vector<std::string> l = check(se_block(n, 32, 9, 24));
    EXPECT_TRUE(folded(l, "Conv_3")) << all(l);
    EXPECT_FALSE(folded(l, "Conv_1")) << all(l);  // the pooled 1 x 1 map: Cout 8 >= 1
  }
}

// A scale shared by every image ((1, C, 1, 1): the mean over the batch and
// the pixels), the Mul's operands the other way round; an input of inlined
// arithmetic (no stored tensor) keeps its Mul.
TEST(SqueezeExcite, SharedScaleAndOperandOrder) {
  const std::string stored = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                             "g (float[2, 48, 6, 7] x, float[48, 1, 3, 3] wd) => (float[2, 20, 6, 7] y) <" +
                             baked_1x1("w", 20, 48) + "> {\n"
                             "  d = Conv<group = 48, pads = [1, 1, 1, 1]>(x, wd)\n"
                             "  p = ReduceMean<axes = [0, 2, 3], keepdims = 1>(d)\n"
                             "  m = Mul(p, d)\n"
                             "  y = Conv(m, w)\n"
                             "}\n";
  EXPECT_TRUE(folded(check(stored), "Conv_1"));
  const std::string inlined = "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                              "g (float[2, 48, 6, 7] x) => (float[2, 20, 6, 7] y) <" + baked_1x1("w", 20, 48) +
                              "> {\n"
                              "  a = Relu(x)\n"
                              "  p = ReduceMean<axes = [0, 2, 3], keepdims = 1>(x)\n"
                              "  m = Mul(a, p)\n"
                              "  y = Conv(m, w)\n"
                              "}\n";
  EXPECT_FALSE(folded(check(inlined), "Conv"));
}

// Where the weights outgrow the activation (Cout >= H x W), the Mul stays.
TEST(SqueezeExcite, NotWhereTheWeightsOutgrowTheActivation) {
  const std::vector<std::string> l = check(se_block(2, 32, 4, 16));
  EXPECT_FALSE(folded(l, "Conv_3")) << all(l);
}

}  // namespace
}  // namespace batchconv::testing

// Epilogues (compiler/fusion_plan.h, epilogue.h): the elementwise chain after
// a conv, Gemm or MatMul computed as its tiles are stored. Small models in
// ONNX text syntax, weights and every other operand graph inputs (fresh
// random data), through Halide's JIT under each layout policy, against the
// reference interpreter (1e-4 relative); and which nodes each producer took.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing {
namespace {


const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

// Lowers under every layout policy and checks each against the interpreter;
// returns the epilogue lines of the last.
std::vector<std::string> check(const std::string& body) { return check_every_layout(kHeader + body).epilogues; }

// The epilogue of the node named `node` ("" without one).
std::string epilogue_of(const std::vector<std::string>& lines, const std::string& node) {
  for (const std::string& l : lines)
    if (l.rfind("node '" + node + "' ", 0) == 0) return l.substr(l.find("): ") + 3);
  return "";
}

std::string all(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// A residual Add and a Relu after a channels-family conv: the graph output
// is computed in the conv's stage; the same with the conv as Sub's second
// operand and a Div by a tensor computed before the conv.
TEST(Epilogue, ResidualAddReluAndOperandOrder) {
  const std::vector<std::string> a = check(R"(
g (float[2, 16, 9, 11] x, float[32, 16, 3, 3] w, float[32] b, float[2, 32, 9, 11] r) => (float[2, 32, 9, 11] y) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w, b)
  s = Add(c, r)
  y = Relu(s)
})");
  EXPECT_EQ(epilogue_of(a, "Conv"), "Add -> 's', Relu -> 'y'") << all(a);
  const std::vector<std::string> b = check(R"(
g (float[1, 8, 7, 12] x, float[1, 20, 7, 12] q, float[20, 8, 3, 3] w, float[1, 20, 7, 12] r) => (float[1, 20, 7, 12] y) {
  e = Exp(q)
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  d = Sub(r, c)
  y = Div(d, e)
})");
  EXPECT_EQ(epilogue_of(b, "Conv"), "Sub -> 'd', Div -> 'y'") << all(b);
}

// BatchNormalization with runtime statistics, LeakyRelu, Clip (Relu6) and
// Sigmoid after a grouped conv (per-channel parameters read at the ONNX
// channel, g * Cout_g + c), into a second conv whose Tanh is the output.
TEST(Epilogue, RuntimeBatchNormActivationsAndGroups) {
  const std::vector<std::string> l = check(R"(
g (float[2, 12, 8, 10] x, float[24, 4, 3, 3] w, float[24] s, float[24] o, float[24] m, float[24] lv,
   float[16, 24, 1, 1] w2) => (float[2, 16, 8, 10] y) {
  v = Exp(lv)
  c = Conv<group = 3, pads = [1, 1, 1, 1]>(x, w)
  n = BatchNormalization(c, s, o, m, v)
  k = LeakyRelu<alpha = 0.2>(n)
  lo = Constant<value = float {-0.5}>()
  hi = Constant<value = float {0.75}>()
  p = Clip(k, lo, hi)
  q = Sigmoid(p)
  c2 = Conv(q, w2)
  y = Tanh(c2)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "BatchNormalization -> 'n', LeakyRelu -> 'k'") << all(l);
  EXPECT_EQ(epilogue_of(l, "Conv_1"), "Tanh -> 'y'") << all(l);
}

// Clip's bounds come from Constant nodes after the conv: the chain stops
// there (above), and Clip and Sigmoid run on their own. With the bounds
// before the conv, all four join.
TEST(Epilogue, ParametersReadyBeforeTheConvJoin) {
  const std::vector<std::string> l = check(R"(
g (float[2, 12, 8, 10] x, float[24, 12, 3, 3] w, float[24] s, float[24] o, float[24] m, float[24] lv) => (float[2, 24, 8, 10] y) {
  v = Exp(lv)
  lo = Constant<value = float {-0.5}>()
  hi = Constant<value = float {0.75}>()
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  n = BatchNormalization(c, s, o, m, v)
  k = LeakyRelu<alpha = 0.2>(n)
  p = Clip(k, lo, hi)
  y = Sigmoid(p)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "BatchNormalization -> 'n', LeakyRelu -> 'k', Clip -> 'p', Sigmoid -> 'y'")
      << all(l);
}

// The batched-weight op, 2-D and 1-D, with per-task, per-channel operands.
TEST(Epilogue, BatchedWeightConvWithBroadcastOperands) {
  const std::vector<std::string> l = check(R"(
g (float[3, 2, 16, 6, 9] x, float[3, 24, 16, 3, 3] w, float[3, 1, 24, 1, 1] sc, float[24, 1, 1] sh,
   float[3, 2, 8, 21] u, float[3, 16, 8, 5] v, float[16, 1] t) => (float[3, 2, 24, 6, 9] y, float[3, 2, 16, 17] z) {
  c = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(x, w)
  a = Mul(c, sc)
  b = Add(sh, a)
  y = Tanh(b)
  d = batchconv.BatchedWeightConv(u, v)
  e = Add(d, t)
  z = Relu(e)
})");
  EXPECT_EQ(epilogue_of(l, "BatchedWeightConv"), "Mul -> 'a', Add -> 'b', Tanh -> 'y'")
      << all(l);
  EXPECT_EQ(epilogue_of(l, "BatchedWeightConv_1"), "Add -> 'e', Relu -> 'z'") << all(l);
}

// Depthwise convs (the lanes family where the chooser takes it) with a
// residual Add and Relu6.
TEST(Epilogue, DepthwiseResidualRelu6) {
  const std::vector<std::string> l = check(R"(
g (float[2, 32, 13, 14] x, float[32, 1, 3, 3] w, float[32] b) => (float[2, 32, 13, 14] y) {
  zero = Constant<value = float {0}>()
  six = Constant<value = float {6}>()
  c = Conv<group = 32, pads = [1, 1, 1, 1]>(x, w, b)
  a = Add(c, x)
  y = Clip(a, zero, six)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "Add -> 'a', Clip -> 'y'") << all(l);
}

// Where the chain stops: at an operand that would broadcast the conv's
// result to a larger shape (the Add and the Relu after it run on their own).
TEST(Epilogue, StopsAtABroadcastToALargerShape) {
  const std::vector<std::string> l = check(R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w, float[3, 16, 6, 7] r) => (float[3, 16, 6, 7] y) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  s = Add(c, r)
  y = Relu(s)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "") << all(l);
}

// At a value that is a graph output: the Relu joins, the Sigmoid after it does not.
TEST(Epilogue, StopsAtAGraphOutput) {
  const std::vector<std::string> l = check(R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w) => (float[1, 16, 6, 7] r, float[1, 16, 6, 7] y) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  r = Relu(c)
  y = Sigmoid(r)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "Relu -> 'r'") << all(l);
}

// SiLU as PyTorch exports it (x * Sigmoid(x): the conv's result read by the
// Sigmoid and the Mul) joins as a pair, either operand order, the chain going
// on after it; after a depthwise conv and a Gemm too; x * HardSigmoid(x).
TEST(Epilogue, SelfGatedActivationsJoinAsAPair) {
  const std::vector<std::string> l = check(R"(
g (float[2, 16, 9, 11] x, float[32, 16, 3, 3] w, float[32] b, float[2, 32, 9, 11] r, float[32, 1, 5, 5] wd,
   float[5, 30] p, float[40, 30] wg) => (float[2, 32, 9, 11] y, float[2, 32, 9, 11] z, float[5, 40] u) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w, b)
  sg = Sigmoid(c)
  si = Mul(sg, c)
  y = Add(si, r)
  d = Conv<group = 32, pads = [2, 2, 2, 2]>(y, wd)
  hs = HardSigmoid<alpha = 0.25>(d)
  z = Mul(d, hs)
  h = Gemm<transB = 1>(p, wg)
  hg = Sigmoid(h)
  u = Mul(h, hg)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "Sigmoid -> 'sg', Mul -> 'si', Add -> 'y'") << all(l);
  EXPECT_EQ(epilogue_of(l, "Conv_1"), "HardSigmoid -> 'hs', Mul -> 'z'") << all(l);
  EXPECT_EQ(epilogue_of(l, "Gemm"), "Sigmoid -> 'hg', Mul -> 'u'") << all(l);
}

// Not a pair where the Sigmoid's result is read by a third node, or is a
// graph output: nothing joins.
TEST(Epilogue, SelfGateWithAnotherReaderDoesNotJoin) {
  const std::vector<std::string> l = check(R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w, float[16, 8, 3, 3] w2) => (float[1, 16, 6, 7] y, float[1, 16, 6, 7] t,
   float[1, 16, 6, 7] z, float[1, 16, 6, 7] s2) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  s = Sigmoid(c)
  y = Mul(c, s)
  t = Tanh(s)
  c2 = Conv<pads = [1, 1, 1, 1]>(x, w2)
  s2 = Sigmoid(c2)
  z = Mul(c2, s2)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "") << all(l);
  EXPECT_EQ(epilogue_of(l, "Conv_1"), "") << all(l);
}

// At a value read twice: nothing joins.
TEST(Epilogue, StopsAtAValueReadTwice) {
  const std::vector<std::string> l = check(R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w) => (float[1, 16, 6, 7] y) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  y = Mul(c, c)
})");
  EXPECT_EQ(epilogue_of(l, "Conv"), "") << all(l);
}

}  // namespace
}  // namespace batchconv::testing

namespace batchconv::testing {
namespace {

// Gemm with a bias, a residual Add and a Relu, read by a MatMul whose own
// Sigmoid is the output; a batched MatMul with a per-column scale; a
// MatMul with a 1-D operand (its result a view: nothing joins).
TEST(Epilogue, GemmAndMatMul) {
  const std::vector<std::string> l = check(R"(
g (float[7, 30] x, float[40, 30] w, float[40] b, float[7, 40] r, float[40, 9] w2, float[3, 5, 6] p, float[3, 6, 11] q,
   float[11] s, float[6] v) => (float[7, 9] y, float[3, 5, 11] z, float[3, 5] u) {
  h = Gemm<transB = 1>(x, w, b)
  a = Add(h, r)
  k = Relu(a)
  m = MatMul(k, w2)
  y = Sigmoid(m)
  d = MatMul(p, q)
  z = Mul(d, s)
  e = MatMul(p, v)
  u = Relu(e)
})");
  EXPECT_EQ(epilogue_of(l, "Gemm"), "Add -> 'a', Relu -> 'k'") << all(l);
  EXPECT_EQ(epilogue_of(l, "MatMul"), "Sigmoid -> 'y'") << all(l);
  EXPECT_EQ(epilogue_of(l, "MatMul_1"), "Mul -> 'z'") << all(l);
  EXPECT_EQ(epilogue_of(l, "MatMul_2"), "") << all(l);
}

}  // namespace
}  // namespace batchconv::testing

// Op coverage through Halide's JIT: small models in ONNX text syntax on fresh
// random inputs (weights are graph inputs, so they are random too), against
// the reference interpreter (1e-4 relative). Shapes are odd on purpose.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "compile_test_support.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

void expect_matches_interpreter(const std::string& text, int trials = 1) {
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", {});
  std::random_device rd;
  for (int t = 0; t < trials; ++t) {
    const uint64_t seed = rd();
    interp::TensorMap in = interp::random_inputs(*m, seed);
    interp::TensorMap want = run_reference(*m, in);
    interp::TensorMap got = run_jit(low, *m, in);
    for (const auto& [name, w] : want) {
      EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-4) << name << " seed " << seed << "\n" << text;
    }
  }
}

std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

std::string ints(const std::vector<int64_t>& s) { return "[" + dims(s) + "]"; }

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

TEST(Lowering, ConvReluTileGemm) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 9, 7] x, float[4, 3, 3, 3] w, float[4] b, float[5, 60] gw) => (float[2, 5] y) {
  c = Conv<pads = [1, 0, 2, 1], strides = [2, 2]>(x, w, b)
  r = Relu(c)
  reps = Constant<value = int64[4] {1, 1, 1, 1}>()
  t = Tile(r, reps)
  f = Flatten(t)
  y = Gemm<transB = 1>(f, gw)
})");
}

struct ConvCase {
  int64_t n, c, h, w, cout, group, kh, kw, sh, sw, dh, dw;
  std::vector<int64_t> pads;
  bool bias;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;  // no output when the dilated kernel overhangs
}

// Conv 2-D over groups (dense, grouped, depthwise with multiplier), stride,
// dilation, asymmetric padding, bias or not; also the batched-weight op.
TEST(Lowering, ConvSweep) {
  const std::vector<ConvCase> cases = {
      {1, 3, 11, 13, 8, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
      {2, 6, 9, 10, 6, 3, 3, 2, 2, 1, 1, 2, {0, 2, 1, 0}, false},
      {1, 4, 8, 19, 8, 4, 3, 3, 1, 2, 2, 1, {2, 1, 0, 1}, true},   // depthwise, multiplier 2
      {3, 8, 5, 33, 16, 2, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, true},   // 1x1, wide
      {1, 2, 7, 7, 3, 1, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, false},   // kernel = input
  };
  for (const ConvCase& c : cases) {
    const int64_t oh = out_size(c.h, c.kh, c.sh, c.dh, c.pads[0], c.pads[2]);
    const int64_t ow = out_size(c.w, c.kw, c.sw, c.dw, c.pads[1], c.pads[3]);
    std::ostringstream t;
    t << kHeader << "g (float[" << dims({c.n, c.c, c.h, c.w}) << "] x, float["
      << dims({c.cout, c.c / c.group, c.kh, c.kw}) << "] w" << (c.bias ? ", float[" + dims({c.cout}) + "] b" : "")
      << ") => (float[" << dims({c.n, c.cout, oh, ow}) << "] y) {\n  y = Conv<group = " << c.group
      << ", strides = " << ints({c.sh, c.sw}) << ", dilations = " << ints({c.dh, c.dw}) << ", pads = " << ints(c.pads)
      << ">(x, w" << (c.bias ? ", b" : "") << ")\n}\n";
    expect_matches_interpreter(t.str());
  }
}

TEST(Lowering, Conv1dAndAutoPad) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 4, 23] x, float[6, 2, 3] w, float[6] b) => (float[2, 6, 12] y) {
  y = Conv<group = 2, strides = [2], auto_pad = "SAME_UPPER">(x, w, b)
})");
}

TEST(Lowering, BatchedWeightConv) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[3, 2, 4, 9, 8] x, float[3, 5, 4, 3, 3] w, float[3, 5] b) => (float[3, 2, 5, 9, 8] y) {
  y = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(x, w, b)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 4, 17] x, float[2, 6, 2, 3] w) => (float[2, 3, 6, 8] y) {
  y = batchconv.BatchedWeightConv<group = 2, strides = [2]>(x, w)
})");
}

TEST(Lowering, GemmAndMatMul) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[7, 5] a, float[9, 7] b, float[9] c) => (float[5, 9] y) {
  y = Gemm<transA = 1, transB = 1, alpha = 0.5, beta = 2.0>(a, b, c)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[3, 1, 5, 6] a, float[4, 6, 10] b, float[6] v, float[6, 3] m) => (float[3, 4, 5, 10] y, float[3, 1, 5] z, float[3] u) {
  y = MatMul(a, b)
  z = MatMul(a, v)
  u = MatMul(v, m)
})");
}

// Shapes that reach every path of the register-tiled linear schedule: two
// and one vectors of columns (shifted at the edge) and scalar columns, row
// tiles rounded up past M, batch dims in the parallel loop, broadcasting.
TEST(Lowering, MatMulAndGemmTiles) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[37, 19] a, float[45, 19] b, float[1, 45] c, float[19, 37] at, float[37, 45] cf) => (float[37, 45] y, float[37, 45] z) {
  y = Gemm<transB = 1, alpha = 0.75, beta = 0.5>(a, b, c)
  z = Gemm<transA = 1, transB = 1>(at, b, cf)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 29, 17] a, float[3, 17, 33] b, float[17] v, float[17, 20] m) => (float[2, 3, 29, 33] y, float[2, 3, 29] z, float[2, 3, 29, 20] u) {
  y = MatMul(a, b)
  z = MatMul(a, v)
  u = MatMul(a, m)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[13, 64] x, float[64, 70] w1, float[70] b1, float[70, 3] w2) => (float[13, 3] y) {
  h = Gemm(x, w1, b1)
  r = Relu(h)
  y = MatMul(r, w2)
})");
}

// Shapes for which the chooser (linear_chooser.h) gives the linear schedule
// its panels: both (K >= 512, 16+ column tiles, several row tiles; B plain,
// transposed, broadcast over a batch) and weights only (fewer columns than
// a vector, B plain and transposed).
TEST(Lowering, MatMulAndGemmPanels) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[20, 520] a, float[520, 530] b, float[530, 520] bt, float[530] c, float[2, 30, 520] p, float[40, 520] d, float[520, 7] w, float[7, 520] wt, float[7] c7) => (float[20, 530] y, float[20, 530] z, float[2, 30, 530] q, float[40, 7] u, float[40, 7] v) {
  y = Gemm(a, b, c)
  z = Gemm<transB = 1, alpha = 0.5>(a, bt)
  q = MatMul(p, b)
  u = MatMul(d, w)
  v = Gemm<transB = 1>(d, wt, c7)
})");
}

// Gemm with transB = 1 and B baked in (PyTorch's Linear), which the compiler
// stores transposed: with transA, alpha and beta; rows of two vectors and
// more (the panels of both operands); fewer columns than a vector.
TEST(Lowering, GemmWithBakedTransposedB) {
  expect_matches_interpreter(std::string(kHeader) + "g (float[7, 5] a, float[9] c, float[20, 520] d) => "
                             "(float[5, 9] y, float[20, 530] z, float[20, 7] u) <" + baked("b", 9, 7) + ", " +
                             baked("bt", 530, 520) + ", " + baked("wt", 7, 520) + R"(> {
  y = Gemm<transA = 1, transB = 1, alpha = 0.5, beta = 2.0>(a, b, c)
  z = Gemm<transB = 1>(d, bt)
  u = Gemm<transB = 1>(d, wt)
})");
}

// A conv with constant inputs is evaluated at compile time; the Relu the
// fusion plan had put inside it is then lowered on its own.
TEST(Lowering, FoldedConvKeepsItsRelu) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[1, 2, 3] a) => (float[1, 2, 3] y) <float[1, 2, 5] xc = {1, -2, 3, -4, 5, -6, 7, -8, 9, -1}, float[2, 2, 3] w = {1, 0, -1, 2, 1, 0, -1, 1, 2, 0, -2, 1}> {
  c = Conv(xc, w)
  r = Relu(c)
  y = Add(r, a)
})");
}

TEST(Lowering, ElementwiseWithBroadcasting) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 4] a, float[3, 1] b, float[4] c) => (float[2, 3, 4] y, float[2, 3, 4] z) {
  s = Add(a, b)
  m = Mul(s, c)
  d = Sub(m, b)
  four = Constant<value = float {4.0}>()
  q = Div(d, four)
  r = Relu(q)
  y = Sigmoid(r)
  z = Tanh(d)
})");
}

TEST(Lowering, ShapeOps) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 4] x, float[2, 5, 4] x2) => (float[4, 2, 3] t, float[2, 8, 4] c, float[2, 1, 2] s, float[6, 4] r,
                                        float[2, 1, 4] p0, float[2, 2, 4] p1, float[2, 6, 8] tl, float[3, 2, 3, 4] e,
                                        float[2, 3, 4, 1] u, float[2, 12] f) {
  t = Transpose<perm = [2, 0, 1]>(x)
  c = Concat<axis = 1>(x, x2)
  starts = Constant<value = int64[2] {3, -1}>()
  ends = Constant<value = int64[2] {0, 1}>()
  axes = Constant<value = int64[2] {2, 1}>()
  steps = Constant<value = int64[2] {-2, -2}>()
  s = Slice(x, starts, ends, axes, steps)
  rs = Constant<value = int64[2] {-1, 4}>()
  r = Reshape(x, rs)
  sizes = Constant<value = int64[2] {1, 2}>()
  p0, p1 = Split<axis = 1>(x, sizes)
  reps = Constant<value = int64[3] {1, 2, 2}>()
  tl = Tile(x, reps)
  es = Constant<value = int64[4] {3, 1, 1, 1}>()
  e = Expand(x, es)
  ua = Constant<value = int64[1] {-1}>()
  u = Unsqueeze(x, ua)
  sa = Constant<value = int64[1] {3}>()
  sq = Squeeze(u, sa)
  f = Flatten<axis = 1>(sq)
})");
}

TEST(Lowering, Pools) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 9, 8] x) => (float[2, 3, 5, 4] mx, float[2, 3, 5, 4] mc, float[2, 3, 5, 4] a0, float[2, 3, 5, 4] a1,
                          float[2, 3, 1, 1] gp, float[2, 3, 3, 2] md) {
  mx = MaxPool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 0]>(x)
  mc = MaxPool<kernel_shape = [2, 3], strides = [2, 2], ceil_mode = 1>(x)
  a0 = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 0]>(x)
  a1 = AveragePool<kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 0], count_include_pad = 1>(x)
  gp = GlobalAveragePool(x)
  md = MaxPool<kernel_shape = [2, 2], strides = [3, 3], dilations = [2, 2]>(x)
})");
}

TEST(Lowering, NormalizationAndSoftmax) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 5, 3, 4] x, float[5] s, float[5] b, float[5] m, float[5] v0, float[3, 7] z) => (float[2, 5, 3, 4] y, float[3, 7] p, float[2, 5, 3, 4] q, float[3, 7] l) {
  tenth = Constant<value = float {0.1}>()
  vv = Mul(v0, v0)
  v = Add(vv, tenth)
  y = BatchNormalization<epsilon = 0.001>(x, s, b, m, v)
  p = Softmax(z)
  q = Softmax<axis = 1>(x)
  l = LogSoftmax<axis = 0>(z)
})");
}

// Consumers that read only part of a conv's result (its compute_root region
// is then smaller than the conv's register tiles), and two convs sharing an
// input, one of them a graph output written in place.
TEST(Lowering, PartialReadsOfConvResults) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[1, 3, 9, 70] x, float[20, 3, 1, 3] w, float[20, 3, 1, 1] w2) => (float[1, 2, 9, 3] y, float[1, 20, 9, 70] z, float[1, 20, 1, 1] u) {
  c = Conv<pads = [0, 1, 0, 1]>(x, w)
  starts = Constant<value = int64[2] {1, 2}>()
  ends = Constant<value = int64[2] {3, 5}>()
  axes = Constant<value = int64[2] {1, 3}>()
  y = Slice(c, starts, ends, axes)
  z = Conv(x, w2)
  us = Constant<value = int64[4] {0, 0, 4, 7}>()
  ue = Constant<value = int64[4] {1, 20, 5, 8}>()
  u = Slice(z, us, ue)
})");
}

// Graph outputs read by other graph outputs (a feature map returned beside
// what is computed from it): each is written through a copy. Writing one
// straight into the caller's buffer, which Halide then read back with
// aligned vector loads, crashed on buffers with malloc's 16-byte alignment.
TEST(Lowering, OutputsReadByOtherOutputs) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w) => (float[1, 16, 6, 7] y, float[1, 16, 6, 7] c) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  y = Sigmoid(c)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[1, 8, 6, 7] x, float[16, 8, 3, 3] w) => (float[1, 16, 6, 7] r, float[1, 16, 6, 7] y, float[1, 16, 6, 7] z) {
  c = Conv<pads = [1, 1, 1, 1]>(x, w)
  r = Relu(c)
  y = Sigmoid(r)
  z = Identity(r)
})");
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[3, 8, 6, 7] x, float[3, 8, 6, 7] q, float[5, 72] w) => (float[3, 8, 6, 7] c, float[3, 8, 3, 3] p, float[3, 8, 3, 3] s, float[3, 5] m) {
  c = Add(x, q)
  p = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(c)
  s = Sigmoid(p)
  f = Flatten(p)
  m = Gemm<transB = 1>(f, w)
})");
}

// A small CNN as exporters write it: conv, BN, ReLU, pool, flatten, linear, softmax.
TEST(Lowering, SmallCnn) {
  expect_matches_interpreter(std::string(kHeader) + R"(
g (float[2, 3, 16, 16] x, float[8, 3, 3, 3] w1, float[8] b1, float[8] s, float[8] sb, float[8] m, float[16, 8, 3, 3] w2,
   float[10, 256] fw, float[10] fb) => (float[2, 10] y) {
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1, b1)
  var = Constant<value = float[8] {1, 2, 0.5, 1, 1, 3, 1, 0.25}>()
  n1 = BatchNormalization(c1, s, sb, m, var)
  r1 = Relu(n1)
  p1 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(r1)
  c2 = Conv<pads = [1, 1, 1, 1]>(p1, w2)
  r2 = Relu(c2)
  p2 = AveragePool<kernel_shape = [2, 2], strides = [2, 2]>(r2)
  f = Flatten(p2)
  l = Gemm<transB = 1>(f, fw, fb)
  y = Softmax(l)
})");
}

}  // namespace
}  // namespace batchconv::testing

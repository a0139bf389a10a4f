// The ops image networks are written in beyond convs, pools and the basic
// arithmetic: reductions over axes (torchvision's x.mean([2, 3]), the Reduce*
// family, GlobalMaxPool), MobileNetV3's HardSwish and HardSigmoid,
// EfficientNet's SiLU (Sigmoid * x) and squeeze-excite, and what PyTorch
// exports LayerNorm and GELU as (ReduceMean, Pow, Sqrt, Erf). Models in ONNX
// text syntax on fresh random data against the reference interpreter (1e-4
// relative), with baked weights and with weights as inputs, under every
// layout policy.
#include "layout_test_support.h"

namespace batchconv::testing {
namespace {

using namespace layout_support;

std::string header(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + ", \"batchconv\" : 1]>\n";
}

// Means, sums and maxima over the spatial axes of a conv's result (the
// global-pool stage of the layout plan), keepdims or not, and over other
// axes and sets of axes (the general reduction), at opsets 13 and 17 (axes
// an attribute, ReduceSum's an input; ONNX 1.12, the importer's, knows no
// opset 18, where every Reduce op takes them as an input).
TEST(ModelOps, ReductionsOverAxes) {
  const std::string outs =
      "float[2, 24] m, float[2, 24, 1, 1] mk, float[2, 24, 1, 1] s, float[2, 24] mx, float[2, 24, 1, 1] gm, "
      "float[2, 1, 7, 1] r1, float[24] r2, float[] all, float[2, 24, 7] l2, float[2, 24, 9] mn, "
      "float[5, 7] pr, float[2, 9] l1, float[2, 5, 1, 9] ss, float[2, 5, 7, 9] same";
  for (int opset : {13, 17}) {
    // Axes as an attribute before opset 18, as an input from it (ReduceSum: from 13).
    auto axes = [&](const std::string& op, const std::string& out, const std::string& in,
                    const std::vector<int64_t>& a, bool keep) {
      std::string k = keep ? "" : "keepdims = 0";
      const bool as_input = op == "ReduceSum" ? opset >= 13 : opset >= 18;
      if (!as_input) {
        std::string list = "[" + dims(a) + "]";
        return "  " + out + " = " + op + "<axes = " + list + (keep ? "" : ", " + k) + ">(" + in + ")\n";
      }
      return "  " + out + "_axes = Constant<value = int64[" + std::to_string(a.size()) + "] {" + dims(a) + "}>()\n  " +
             out + " = " + op + (keep ? "" : "<" + k + ">") + "(" + in + ", " + out + "_axes)\n";
    };
    for (bool baked : {true, false}) {
      Weights w{baked};
      w.add("w1", {24, 5, 3, 3});
      std::string text = header(opset) + w.signature("float[2, 5, 7, 9] x", outs) +
                          "  c = Conv<pads = [1, 1, 1, 1]>(x, w1)\n  r = Relu(c)\n";
      text += axes("ReduceMean", "m", "r", {2, 3}, false);
      text += axes("ReduceMean", "mk", "r", {-2, -1}, true);
      text += axes("ReduceSum", "s", "r", {2, 3}, true);
      text += axes("ReduceMax", "mx", "c", {3, 2}, false);
      text += "  gm = GlobalMaxPool(c)\n";
      text += axes("ReduceMean", "r1", "c", {1, 3}, true);
      text += axes("ReduceSum", "r2", "c", {0, 2, 3}, false);
      text += "  all = ReduceSumSquare<keepdims = 0>(x)\n";  // no axes: every axis
      text += axes("ReduceL2", "l2", "c", {3}, false);
      text += axes("ReduceMin", "mn", "c", {2}, false);
      text += axes("ReduceMax", "xs", "x", {3}, false);
      text += axes("ReduceProd", "pr", "xs", {0}, false);
      text += axes("ReduceL1", "l1", "x", {1, 2}, false);
      text += axes("ReduceSumSquare", "ss", "x", {2}, true);
      // Empty axes with noop_with_empty_axes: the input itself.
      text += "  none = Constant<value = int64[0] {}>()\n  same = ReduceSum<noop_with_empty_axes = 1>(x, none)\n}";
      for (LayoutPolicy p : kPolicies) check(text, p, w);
    }
  }
}

// Activations: MobileNetV3's HardSwish and HardSigmoid (its own alpha and
// beta too), SiLU as PyTorch exports it (x * Sigmoid(x)), fused into the
// convs they follow, and the other unary and binary ops image networks use.
TEST(ModelOps, Activations) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {32, 6, 3, 3});
    w.add("w2", {16, 32, 1, 1});
    const std::string text = header(17) +
                             w.signature("float[2, 6, 9, 10] x, float[2, 6, 9, 10] z",
                                         "float[2, 16, 9, 10] y, float[2, 6, 9, 10] u, float[2, 6, 9, 10] v") +
                             R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  h1 = HardSwish(c1)
  c2 = Conv(h1, w2)
  s2 = Sigmoid(c2)
  silu = Mul(c2, s2)
  hs = HardSigmoid<alpha = 0.3, beta = 0.4>(silu)
  y = Add(hs, silu)
  a = Abs(z)
  one = Constant<value = float {1.0}>()
  ap = Add(a, one)
  e = Erf(x)
  rp = Reciprocal(ap)
  lg = Log(ap)
  sp = Softplus(x)
  two = Constant<value = float {2.0}>()
  three = Constant<value = float {3.0}>()
  half = Constant<value = float {0.5}>()
  p2 = Pow(x, two)
  p3 = Pow(x, three)
  ph = Pow(ap, half)
  pz = Pow(ap, x)
  mx = Max(e, rp)
  mn = Min(lg, sp)
  t1 = Add(p2, p3)
  t2 = Add(t1, ph)
  t3 = Add(t2, pz)
  u = Add(t3, mx)
  hsig = HardSigmoid(z)
  v = Add(mn, hsig)
})";
    for (LayoutPolicy p : kPolicies) check(text, p, w);
  }
}

// Squeeze-excite as MobileNetV3 and EfficientNet write it: the block's conv
// result, its spatial mean, two 1x1 convs, a gate, and the channel-wise Mul
// with the result; then the network's head, x.mean([2, 3]) and a Linear.
TEST(ModelOps, SqueezeExcite) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {48, 16, 3, 3});
    w.add("wd", {48, 1, 3, 3});
    w.add("ws", {12, 48, 1, 1});
    w.add("bs", {12});
    w.add("we", {48, 12, 1, 1});
    w.add("be", {48});
    w.add("wp", {32, 48, 1, 1});
    w.add("fc", {10, 32});
    const std::string text = header(13) + w.signature("float[2, 16, 11, 9] x", "float[2, 10] y") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  a1 = HardSigmoid<alpha = 0.1666667, beta = 0.5>(c1)
  h1 = Mul(c1, a1)
  d = Conv<group = 48, pads = [1, 1, 1, 1], strides = [2, 2]>(h1, wd)
  sd = Sigmoid(d)
  e = Mul(d, sd)
  m = ReduceMean<axes = [2, 3]>(e)
  s = Conv(m, ws, bs)
  sr = Relu(s)
  g = Conv(sr, we, be)
  gs = HardSigmoid<alpha = 0.1666667, beta = 0.5>(g)
  se = Mul(e, gs)
  p = Conv(se, wp)
  pm = ReduceMean<axes = [2, 3], keepdims = 0>(p)
  y = Gemm<transB = 1>(pm, fc)
})";
    for (LayoutPolicy p : kPolicies) check(text, p, w);
  }
}

// LayerNorm and GELU as PyTorch 1.13 exports them at opset 13 (ConvNeXt's
// and the vision transformers' blocks): a mean over the last axis, Pow(d, 2),
// Sqrt, and x * 0.5 * (1 + Erf(x / sqrt 2)), after a permute to channels last.
TEST(ModelOps, LayerNormAndGelu) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {24, 8, 3, 3});
    w.add("gamma", {24}, 0);
    w.add("beta", {24}, 0);
    const std::string text = header(13) + w.signature("float[2, 8, 7, 6] x", "float[2, 7, 6, 24] y") + R"(
  c = Conv<pads = [1, 1, 1, 1]>(x, w1)
  t = Transpose<perm = [0, 2, 3, 1]>(c)
  mu = ReduceMean<axes = [-1]>(t)
  d = Sub(t, mu)
  two = Constant<value = float {2.0}>()
  sq = Pow(d, two)
  var = ReduceMean<axes = [-1]>(sq)
  eps = Constant<value = float {0.00001}>()
  ve = Add(var, eps)
  sd = Sqrt(ve)
  n = Div(d, sd)
  ng = Mul(n, gamma)
  ln = Add(ng, beta)
  r2 = Constant<value = float {1.4142135}>()
  q = Div(ln, r2)
  er = Erf(q)
  one = Constant<value = float {1.0}>()
  e1 = Add(er, one)
  ge = Mul(ln, e1)
  half = Constant<value = float {0.5}>()
  y = Mul(ge, half)
})";
    for (LayoutPolicy p : kPolicies) check(text, p, w);
  }
}

}  // namespace
}  // namespace batchconv::testing

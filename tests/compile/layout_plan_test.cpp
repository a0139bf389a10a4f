// The layout plan (compiler/layout_plan.h): conv results stored channels
// innermost between channels-family convs, NCHW where any reader needs it,
// and every policy computing the model's function. Models in ONNX text
// syntax, run through Halide's JIT on fresh random inputs against the
// reference interpreter (1e-4 relative), with baked weights (packed at
// compile time for the channels family) and with weights as inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

using compiler::LayoutPolicy;

std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

// A weight declaration: an initializer with random data ("float[..] w = {..}")
// or a graph input ("float[..] w"). Values are uniform with the variance of
// 1 / fan-in (the elements past the first `outer` dims), so activations stay
// near 1 through a chain of convs and 1e-4 is a relative bound.
struct Weights {
  bool baked;
  std::mt19937 rng{std::random_device{}()};
  std::vector<std::string> inputs, inits;
  std::map<std::string, float> scale;  // inputs: what the random [-1, 1] values are scaled by
  void add(const std::string& name, const std::vector<int64_t>& shape, int outer = 1) {
    std::string decl = "float[" + dims(shape) + "] " + name;
    int64_t n = 1, fan_in = 1;
    for (size_t k = 0; k < shape.size(); ++k) n *= shape[k], fan_in *= static_cast<int>(k) >= outer ? shape[k] : 1;
    const float a = shape.size() > static_cast<size_t>(outer) ? std::sqrt(3.0f / static_cast<float>(fan_in)) : 0.5f;
    if (!baked) {
      inputs.push_back(decl);
      scale[name] = a;
      return;
    }
    std::uniform_real_distribution<float> u(-a, a);
    std::ostringstream v;
    for (int64_t k = 0; k < n; ++k) v << (k ? "," : "") << u(rng);
    inits.push_back(decl + " = {" + v.str() + "}");
  }
  // "g (x..., weights...) => (outs) <inits> {"
  std::string signature(const std::string& ins, const std::string& outs) const {
    std::string s = "g (" + ins;
    for (const std::string& i : inputs) s += ", " + i;
    s += ") => (" + outs + ")";
    if (!inits.empty()) {
      s += " <";
      for (size_t k = 0; k < inits.size(); ++k) s += (k ? ", " : "") + inits[k];
      s += ">";
    }
    return s + " {\n";
  }
};

// Lowers under `policy`, checks the result against the interpreter; returns the plan's lines.
std::vector<std::string> check(const std::string& text, LayoutPolicy policy, const Weights& w) {
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LowerOptions o;
  o.layouts = policy;
  compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
  const uint64_t seed = std::random_device{}();
  interp::TensorMap in = interp::random_inputs(*m, seed);
  for (const auto& [name, a] : w.scale)
    for (float& v : in.at(name).f) v *= a;
  interp::TensorMap want = run_reference(*m, in);
  interp::TensorMap got = run_jit(low, *m, in);
  for (const auto& [name, w] : want) {
    EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-4)
        << name << " seed " << seed << " layouts " << compiler::layout_policy_name(policy) << "\n"
        << text.substr(0, 2000);
  }
  return low.layout_explanations;
}

// The plan's line for the conv whose output is `value`.
std::string line_of(const std::vector<std::string>& lines, const std::string& value) {
  for (const std::string& l : lines)
    if (l.find(" -> '" + value + "': ") != std::string::npos) return l;
  return "";
}

bool stored_channels_innermost(const std::vector<std::string>& lines, const std::string& node) {
  return line_of(lines, node).find("result channels innermost") != std::string::npos;
}
bool input_channels_innermost(const std::vector<std::string>& lines, const std::string& node) {
  return line_of(lines, node).find("input read channels innermost") != std::string::npos;
}

const LayoutPolicy kPolicies[] = {LayoutPolicy::Auto, LayoutPolicy::Nchw, LayoutPolicy::ChannelsLast};

// Three channels-family convs (72 and 288 taps, 32 and 20 output channels)
// with a fused Relu, a residual Add and a Relu between them.
std::string residual_stack(Weights& w) {
  w.add("w1", {32, 8, 3, 3});
  w.add("b1", {32});
  w.add("w2", {32, 32, 3, 3});
  w.add("w3", {20, 32, 3, 3});
  w.add("b3", {20});
  return std::string(kHeader) + w.signature("float[2, 8, 9, 11] x", "float[2, 20, 5, 6] y") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1, b1)
  r1 = Relu(c1)
  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2)
  a = Add(c2, r1)
  r2 = Relu(a)
  y = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(r2, w3, b3)
})";
}

TEST(LayoutPlan, ChannelsFamilyChainStaysChannelsInnermost) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    const std::string text = residual_stack(w);
    for (LayoutPolicy p : kPolicies) {
      const std::vector<std::string> lines = check(text, p, w);
      ASSERT_EQ(lines.size(), 3u);
      const bool cl = p != LayoutPolicy::Nchw;
      EXPECT_EQ(stored_channels_innermost(lines, "c1"), cl) << line_of(lines, "c1");
      EXPECT_EQ(stored_channels_innermost(lines, "c2"), cl) << line_of(lines, "c2");
      EXPECT_EQ(input_channels_innermost(lines, "c2"), cl) << line_of(lines, "c2");
      EXPECT_EQ(input_channels_innermost(lines, "y"), cl) << line_of(lines, "y");
      EXPECT_FALSE(stored_channels_innermost(lines, "y")) << line_of(lines, "y");
      EXPECT_NE(line_of(lines, "y").find("graph output"), std::string::npos) << line_of(lines, "y");
    }
  }
}

// The rows-family baseline (LowerOptions::rows_family_only, model-layouts
// --nchw=rows): every conv on the rows family, every result NCHW, the same
// function.
TEST(LayoutPlan, RowsFamilyBaseline) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    const std::string text = residual_stack(w);
    std::unique_ptr<ir::Model> m = parse(text);
    compiler::LowerOptions o;
    o.rows_family_only = true;
    compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
    ASSERT_EQ(low.conv_schedules.size(), 3u);
    for (const std::string& s : low.conv_schedules) EXPECT_NE(s.find("family=rows"), std::string::npos) << s;
    for (const char* v : {"c1", "c2", "y"})
      EXPECT_FALSE(stored_channels_innermost(low.layout_explanations, v)) << line_of(low.layout_explanations, v);
    interp::TensorMap in = interp::random_inputs(*m, std::random_device{}());
    for (const auto& [name, a] : w.scale)
      for (float& v : in.at(name).f) v *= a;
    interp::TensorMap want = run_reference(*m, in);
    interp::TensorMap got = run_jit(low, *m, in);
    EXPECT_LE(interp::max_relative_difference(got.at("y"), want.at("y")), 1e-4);
  }
}

// Readers that need NCHW: under Auto the conv they read stays NCHW (and the
// line names the reader); under nhwc they read a channels-innermost result.
struct Blocker {
  const char* what;
  const char* body;     // reads c1 (32 channels, 9 x 11), writes y
  const char* output;   // the graph output's type
  const char* named;    // what the Auto line names
};

TEST(LayoutPlan, ReadersThatNeedNchwKeepIt) {
  const Blocker cases[] = {
      {"pool read by a reshape", "  p = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(c1)\n  f = Flatten(p)\n  y = Gemm<transB = 1>(f, qw)\n",
       "float[2, 5] y", "Flatten"},
      {"pool as a graph output", "  y = AveragePool<kernel_shape = [3, 3], strides = [2, 2]>(c1)\n", "float[2, 32, 4, 5] y",
       "graph output"},
      {"transpose", "  t = Transpose<perm = [0, 1, 3, 2]>(c1)\n  y = Conv<pads = [1, 1, 1, 1]>(t, w2)\n",
       "float[2, 32, 11, 9] y", "Transpose"},
      {"flatten", "  f = Flatten(c1)\n  y = Gemm<transB = 1>(f, gw)\n", "float[2, 5] y", "Flatten"},
      {"reshape between convs",
       "  s = Constant<value = int64[4] {2, 32, 11, 9}>()\n  t = Reshape(c1, s)\n  y = Conv<pads = [1, 1, 1, 1]>(t, w2)\n",
       "float[2, 32, 11, 9] y", "Reshape"},
      {"rows conv (1x1, 32 taps)", "  y = Conv(c1, pw)\n", "float[2, 32, 9, 11] y", "rows-family"},
      {"graph output beside a conv", "  r = Relu(c1)\n  z = Conv<pads = [1, 1, 1, 1]>(r, w2)\n  y = Sigmoid(r)\n",
       "float[2, 32, 9, 11] y, float[2, 32, 9, 11] z", "graph output"},
  };
  for (const Blocker& b : cases) {
    SCOPED_TRACE(b.what);
    Weights w{true};
    w.add("w1", {32, 8, 3, 3});
    w.add("w2", {32, 32, 3, 3});
    w.add("gw", {5, 32 * 9 * 11});
    w.add("pw", {32, 32, 1, 1});
    w.add("qw", {5, 32 * 4 * 5});
    const std::string text = std::string(kHeader) + w.signature("float[2, 8, 9, 11] x", b.output) +
                             "  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)\n" + b.body + "}\n";
    const std::vector<std::string> autos = check(text, LayoutPolicy::Auto, w);
    EXPECT_FALSE(stored_channels_innermost(autos, "c1")) << line_of(autos, "c1");
    EXPECT_NE(line_of(autos, "c1").find(b.named), std::string::npos) << line_of(autos, "c1");
    const std::vector<std::string> forced = check(text, LayoutPolicy::ChannelsLast, w);
    EXPECT_TRUE(stored_channels_innermost(forced, "c1")) << line_of(forced, "c1");
    check(text, LayoutPolicy::Nchw, w);
  }
}

// A residual read by the epilogue of a channels-family conv that writes a
// graph output (NCHW): the epilogue reads it a vector of channels at a time,
// so the conv producing it stays channels innermost; a residual read by a
// plain Add after a pool (no epilogue: a pool is no producer) keeps NCHW.
TEST(LayoutPlan, ResidualReadByAnEpilogue) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {32, 8, 3, 3});
    w.add("w2", {32, 32, 3, 3});
    w.add("w3", {32, 32, 3, 3});
    const std::string text = std::string(kHeader) +
                             w.signature("float[2, 8, 9, 11] x", "float[2, 32, 9, 11] y, float[2, 32, 9, 11] z") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  r1 = Relu(c1)
  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2)
  r2 = Relu(c2)
  c3 = Conv<pads = [1, 1, 1, 1]>(r2, w3)
  a = Add(c3, r1)
  y = Relu(a)
  p = MaxPool<kernel_shape = [3, 3], pads = [1, 1, 1, 1]>(r2)
  z = Add(p, c2)
})";
    for (LayoutPolicy p : kPolicies) {
      const std::vector<std::string> lines = check(text, p, w);
      const bool cl = p != LayoutPolicy::Nchw;
      EXPECT_EQ(stored_channels_innermost(lines, "c1"), cl) << line_of(lines, "c1");
      EXPECT_EQ(input_channels_innermost(lines, "c2"), cl) << line_of(lines, "c2");
      if (p == LayoutPolicy::Auto) {
        EXPECT_NE(line_of(lines, "c1").find("the epilogues of channels-family convs 'Conv_2' (Conv)"), std::string::npos)
            << line_of(lines, "c1");
        // c2 feeds a plain Add that writes graph output z: NCHW.
        EXPECT_FALSE(stored_channels_innermost(lines, "c2")) << line_of(lines, "c2");
      }
    }
  }
}

// Pools between channels-family convs (a 2 x 2 MaxPool of stride 2, a 3 x 3
// AveragePool with padding, a MaxPool reading a pool) keep the chain
// channels innermost: each pool stores its result so where its input is;
// with 32 channels (whole vectors) and 20 (a ragged last vector).
TEST(LayoutPlan, PoolsBetweenConvsKeepChannelsInnermost) {
  for (int64_t c : {32, 20}) {
    for (bool baked : {true, false}) {
      Weights w{baked};
      w.add("w1", {c, 8, 3, 3});
      w.add("w2", {c, c, 3, 3});
      w.add("w3", {16, c, 3, 3});
      const std::string text = std::string(kHeader) +
                               w.signature("float[2, 8, 12, 14] x", "float[2, 16, 3, 3] y") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  r1 = Relu(c1)
  p1 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(r1)
  c2 = Conv<pads = [1, 1, 1, 1]>(p1, w2)
  p2 = AveragePool<kernel_shape = [3, 3], pads = [1, 1, 1, 1]>(c2)
  p3 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(p2)
  y = Conv<pads = [1, 1, 1, 1]>(p3, w3)
})";
      SCOPED_TRACE("channels " + std::to_string(c) + (baked ? ", baked" : ", runtime weights"));
      for (LayoutPolicy p : kPolicies) {
        const std::vector<std::string> lines = check(text, p, w);
        ASSERT_EQ(lines.size(), 6u);
        const bool cl = p != LayoutPolicy::Nchw;
        for (const char* v : {"c1", "p1", "c2", "p2", "p3"})
          EXPECT_EQ(stored_channels_innermost(lines, v), cl) << line_of(lines, v);
        EXPECT_EQ(input_channels_innermost(lines, "c2"), cl) << line_of(lines, "c2");
        EXPECT_EQ(input_channels_innermost(lines, "y"), cl) << line_of(lines, "y");
        if (cl) {
          EXPECT_NE(line_of(lines, "c2").find("input read channels innermost from 'MaxPool' (MaxPool)"), std::string::npos) << line_of(lines, "c2");
          EXPECT_NE(line_of(lines, "p3").find("its input is, from 'AveragePool' (AveragePool)"), std::string::npos)
              << line_of(lines, "p3");
        }
      }
    }
  }
}

// A ResNet's tail: a global average pool reads the last conv's result in
// channel vectors (its (N, C, 1, 1) result is the same in either order, here
// also a graph output), so that conv stays channels innermost; 40 channels
// (a ragged vector on AVX-512).
TEST(LayoutPlan, GlobalPoolReadsChannelsInnermost) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {32, 8, 3, 3});
    w.add("w2", {40, 32, 3, 3});
    w.add("fw", {5, 40});
    const std::string text = std::string(kHeader) +
                             w.signature("float[2, 8, 9, 11] x", "float[2, 5] y, float[2, 40, 1, 1] g") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  r1 = Relu(c1)
  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2)
  r2 = Relu(c2)
  g = GlobalAveragePool(r2)
  f = Flatten(g)
  y = Gemm<transB = 1>(f, fw)
})";
    for (LayoutPolicy p : kPolicies) {
      const std::vector<std::string> lines = check(text, p, w);
      const bool cl = p != LayoutPolicy::Nchw;
      EXPECT_EQ(stored_channels_innermost(lines, "c2"), cl) << line_of(lines, "c2");
      EXPECT_EQ(line_of(lines, "g").find("input read channels innermost from 'Conv_1' (Conv)") != std::string::npos, cl)
          << line_of(lines, "g");
      if (p == LayoutPolicy::Auto)
        EXPECT_NE(line_of(lines, "c2").find("global pools 'GlobalAveragePool'"), std::string::npos) << line_of(lines, "c2");
    }
  }
}

// A Concat of a channels-innermost conv result and an NCHW graph input, read
// by a conv; and 20 output channels (not a multiple of a vector) stored
// channels innermost.
TEST(LayoutPlan, MixedConcatAndRaggedChannels) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {20, 8, 3, 3});
    w.add("w2", {24, 28, 3, 3});
    const std::string text = std::string(kHeader) + w.signature("float[1, 8, 7, 13] x", "float[1, 24, 7, 13] y") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)
  r1 = Relu(c1)
  k = Concat<axis = 1>(r1, x)
  y = Conv<pads = [1, 1, 1, 1]>(k, w2)
})";
    for (LayoutPolicy p : kPolicies) {
      const std::vector<std::string> lines = check(text, p, w);
      EXPECT_EQ(stored_channels_innermost(lines, "c1"), p != LayoutPolicy::Nchw) << line_of(lines, "c1");
      EXPECT_EQ(input_channels_innermost(lines, "y"), p != LayoutPolicy::Nchw) << line_of(lines, "y");
    }
  }
}

// The batched-weight op (a MAML-like stack: per-task weights), 1-D and 2-D.
TEST(LayoutPlan, BatchedWeightStack) {
  for (bool baked : {true, false}) {
    Weights w{baked};
    w.add("w1", {3, 32, 8, 3, 3}, 2);
    w.add("b1", {3, 32}, 2);
    w.add("w2", {3, 16, 32, 3, 3}, 2);
    w.add("v1", {3, 32, 16, 5}, 2);
    w.add("v2", {3, 16, 32, 3}, 2);
    const std::string text = std::string(kHeader) +
                             w.signature("float[3, 2, 8, 6, 9] x, float[3, 2, 16, 21] s",
                                         "float[3, 2, 16, 6, 9] y, float[3, 2, 16, 15] z") + R"(
  c1 = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(x, w1, b1)
  r1 = Relu(c1)
  y = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(r1, w2)
  d1 = batchconv.BatchedWeightConv<dilations = [1]>(s, v1)
  e1 = Relu(d1)
  z = batchconv.BatchedWeightConv(e1, v2)
})";
    for (LayoutPolicy p : kPolicies) {
      const std::vector<std::string> lines = check(text, p, w);
      EXPECT_EQ(stored_channels_innermost(lines, "c1"), p != LayoutPolicy::Nchw) << line_of(lines, "c1");
      EXPECT_EQ(stored_channels_innermost(lines, "d1"), p != LayoutPolicy::Nchw) << line_of(lines, "d1");
    }
  }
}

// Random two-conv chains (groups, stride, dilation, asymmetric padding,
// bias) under every policy: whatever the plan decides, the function is the same.
TEST(LayoutPlan, RandomChainsComputeTheSameFunction) {
  std::mt19937 rng(std::random_device{}());
  auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t n = pick({1, 2}), c = pick({8, 16}), h = pick({5, 8, 9}), wd = pick({7, 12, 17});
    const int64_t c1 = pick({16, 20, 32, 48}), g2 = pick({1, 1, 2, 4}), c2 = pick({16, 32}) * g2;
    const int64_t k2 = pick({1, 3}), s2 = pick({1, 2}), d2 = k2 == 3 ? pick({1, 2}) : 1;
    if (c1 % g2 != 0) continue;
    const std::vector<int64_t> pads = {pick({0, 1, 2}), pick({0, 1}), pick({0, 2}), pick({1, 2})};
    const int64_t oh = (h + pads[0] + pads[2] - d2 * (k2 - 1) - 1) / s2 + 1;
    const int64_t ow = (wd + pads[1] + pads[3] - d2 * (k2 - 1) - 1) / s2 + 1;
    if (oh < 1 || ow < 1) continue;
    const bool bias = pick({0, 1}) == 1;
    Weights w{trial % 2 == 0};
    w.add("w1", {c1, c, 3, 3});
    w.add("w2", {c2, c1 / g2, k2, k2});
    if (bias) w.add("b2", {c2});
    std::ostringstream t;
    t << kHeader << w.signature("float[" + dims({n, c, h, wd}) + "] x", "float[" + dims({n, c2, oh, ow}) + "] y")
      << "  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1)\n  r1 = Relu(c1)\n  y = Conv<group = " << g2 << ", strides = ["
      << s2 << ", " << s2 << "], dilations = [" << d2 << ", " << d2 << "], pads = [" << dims(pads) << "]>(r1, w2"
      << (bias ? ", b2" : "") << ")\n}\n";
    for (LayoutPolicy p : kPolicies) check(t.str(), p, w);
  }
}

}  // namespace
}  // namespace batchconv::testing

namespace batchconv::testing {
namespace {

// (N, C, H, W) <-> (N, H, W, C) data, or (N, C, W) <-> (N, W, C).
ir::Tensor to_channels_last(const ir::Tensor& t, bool back) {
  ir::Tensor out = t;
  const std::vector<int64_t>& s = t.shape;
  const bool four = s.size() == 4;
  const int64_t n = s[0], c = back ? s.back() : s[1];
  const int64_t h = four ? (back ? s[1] : s[2]) : 1, w = back ? s[s.size() - 2] : s.back();
  out.shape = back ? (four ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, c, w})
                   : (four ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, w, c});
  for (int64_t a = 0; a < n; ++a)
    for (int64_t b = 0; b < c; ++b)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((a * c + b) * h + y) * w + x, nhwc = ((a * h + y) * w + x) * c + b;
          out.f[static_cast<size_t>(back ? nchw : nhwc)] = t.f[static_cast<size_t>(back ? nhwc : nchw)];
        }
  return out;
}

// Inputs and outputs passed channels-last (--edge-layout): the library's
// arguments have the NHWC / NWC shapes, and the results are the model's.
TEST(EdgeLayouts, ChannelsLastInputsAndOutputs) {
  for (LayoutPolicy p : kPolicies) {
    Weights w{true};
    const std::string text = residual_stack(w);
    std::unique_ptr<ir::Model> m = parse(text);
    compiler::LowerOptions o;
    o.layouts = p;
    o.channels_last_edges = {"x", "y"};
    compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
    ASSERT_EQ(low.inputs[0].shape, (std::vector<int64_t>{2, 9, 11, 8}));
    EXPECT_EQ(low.inputs[0].layout, "NHWC");
    ASSERT_EQ(low.outputs[0].shape, (std::vector<int64_t>{2, 5, 6, 20}));
    if (p == LayoutPolicy::Auto) {
      // The last conv's result is read only by the channels-last output: stored channels innermost.
      EXPECT_TRUE(stored_channels_innermost(low.layout_explanations, "y")) << line_of(low.layout_explanations, "y");
    }
    const uint64_t seed = std::random_device{}();
    interp::TensorMap in = interp::random_inputs(*m, seed);
    interp::TensorMap want = run_reference(*m, in);
    interp::TensorMap cl = in;
    cl["x"] = to_channels_last(in.at("x"), false);
    interp::TensorMap got = run_jit(low, *m, cl);
    EXPECT_LE(interp::max_relative_difference(to_channels_last(got.at("y"), true), want.at("y")), 1e-4)
        << "seed " << seed << " layouts " << compiler::layout_policy_name(p);
  }
  // 1-D: (N, C, W) as NWC.
  Weights w{false};
  w.add("v", {24, 8, 3});
  const std::string text = std::string(kHeader) + w.signature("float[3, 8, 19] s", "float[3, 24, 17] z") +
                           "  z = Conv(s, v)\n}\n";
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LowerOptions o;
  o.channels_last_edges = {"s", "z"};
  compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
  EXPECT_EQ(low.inputs[0].layout, "NWC");
  interp::TensorMap in = interp::random_inputs(*m, 5);
  for (float& v : in.at("v").f) v *= w.scale.at("v");
  interp::TensorMap want = run_reference(*m, in);
  interp::TensorMap cl = in;
  cl["s"] = to_channels_last(in.at("s"), false);
  interp::TensorMap got = run_jit(low, *m, cl);
  EXPECT_LE(interp::max_relative_difference(to_channels_last(got.at("z"), true), want.at("z")), 1e-4);
}

TEST(EdgeLayouts, EdgesWithoutAChannelsLastFormAreErrorsNamingThem) {
  const std::string text = std::string(kHeader) +
                           "g (float[2, 5] a, float[2, 3, 4] x, float[6, 3, 1] w) => (float[2, 5] b, float[2, 6, 4] y) {\n"
                           "  b = Relu(a)\n  y = Conv(x, w)\n}\n";
  std::unique_ptr<ir::Model> m = parse(text);
  auto message = [&](std::set<std::string> edges) {
    compiler::LowerOptions o;
    o.channels_last_edges = std::move(edges);
    try {
      compiler::lower_model(*m, "test.onnxtxt", o);
    } catch (const compiler::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string rank = message({"a"});
  EXPECT_NE(rank.find("input 'a' has shape (2, 5)"), std::string::npos) << rank;
  EXPECT_NE(rank.find("4-D (N, C, H, W) or 3-D (N, C, W)"), std::string::npos) << rank;
  const std::string out = message({"b"});
  EXPECT_NE(out.find("output 'b' has shape (2, 5)"), std::string::npos) << out;
  const std::string unknown = message({"q"});
  EXPECT_NE(unknown.find("'q', which is no graph input or output; they are 'a', 'x', 'w', 'b', 'y'"), std::string::npos)
      << unknown;
}

}  // namespace
}  // namespace batchconv::testing

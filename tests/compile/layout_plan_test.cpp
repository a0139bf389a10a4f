// The layout plan (compiler/layout_plan.h): conv results stored channels
// innermost between channels-family convs, NCHW where any reader needs it,
// and every policy computing the model's function. Models in ONNX text
// syntax, run through Halide's JIT on fresh random inputs against the
// reference interpreter (1e-4 relative), with baked weights (packed at
// compile time for the channels family) and with weights as inputs.
#include <set>

#include "layout_test_support.h"

namespace batchconv::testing {
namespace {

using namespace layout_support;

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
      // (A compiled conv with a vector of output channels per group takes
      // the channels family, and one whose Cout_g divides no vector cannot
      // take the lanes family: 6 per group keeps the rows family.)
      {"rows conv (1x1, 6 output channels per group)", "  y = Conv<group = 8>(c1, pw)\n", "float[2, 48, 9, 11] y",
       "rows-family"},
      {"graph output beside a conv", "  r = Relu(c1)\n  z = Conv<pads = [1, 1, 1, 1]>(r, w2)\n  y = Sigmoid(r)\n",
       "float[2, 32, 9, 11] y, float[2, 32, 9, 11] z", "graph output"},
  };
  for (const Blocker& b : cases) {
    SCOPED_TRACE(b.what);
    Weights w{true};
    w.add("w1", {32, 8, 3, 3});
    w.add("w2", {32, 32, 3, 3});
    w.add("gw", {5, 32 * 9 * 11});
    w.add("pw", {48, 4, 1, 1});
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

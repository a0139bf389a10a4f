// The layout plan through pools, global pools and residuals read by a conv's
// epilogue (compiler/layout_plan.h): models in ONNX text syntax under every
// policy against the reference interpreter (1e-4 relative), with baked
// weights and with weights as inputs, and the plan's lines for each.
#include "layout_test_support.h"

namespace batchconv::testing {
namespace {

using namespace layout_support;

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

}  // namespace
}  // namespace batchconv::testing

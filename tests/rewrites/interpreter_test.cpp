// The reference interpreter's Conv and BatchedWeightConv against a plain-loop
// double-precision reference on fresh random data over swept geometry, and its
// errors (they name the node).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"

namespace interp = batchconv::interp;
namespace io = batchconv::io;
using namespace batchconv::ir;

namespace {

struct Geo {
  int spatial;  // 1 or 2
  int64_t n, c, m, group, h, w, kh, kw;
  int64_t sh, sw, dh, dw, ph0, pw0, ph1, pw1;
  bool bias;
};

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t;
  t.shape = std::move(shape);
  std::uniform_real_distribution<float> u(-1, 1);
  t.f.resize(t.numel());
  for (float& x : t.f) x = u(rng);
  return t;
}

// y[n, m, oh, ow] = b[m] + sum over the group's channels and the kernel, in double.
std::vector<double> reference_conv(const Geo& g, const float* x, const float* w, const float* b, int64_t oh_n,
                                   int64_t ow_n) {
  const int64_t cg = g.c / g.group, mg = g.m / g.group;
  std::vector<double> y(g.n * g.m * oh_n * ow_n);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double s = b ? b[m] : 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                int64_t ih = oh * g.sh - g.ph0 + i * g.dh, iw = ow * g.sw - g.pw0 + j * g.dw;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                int64_t c = (m / mg) * cg + ci;
                s += double(x[((n * g.c + c) * g.h + ih) * g.w + iw]) * w[((m * cg + ci) * g.kh + i) * g.kw + j];
              }
          y[((n * g.m + m) * oh_n + oh) * ow_n + ow] = s;
        }
  return y;
}

Node* conv_node(Graph& gr, const Geo& g, const std::string& op, const std::string& domain) {
  Node* n = gr.add_node(op, {}, {gr.add_value("y")}, "conv_under_test");
  n->domain = domain;
  Attribute grp;
  grp.kind = Attribute::Kind::Int;
  grp.i = g.group;
  n->attrs["group"] = grp;
  auto ints = [](std::vector<int64_t> v) {
    Attribute a;
    a.kind = Attribute::Kind::Ints;
    a.ints = std::move(v);
    return a;
  };
  if (g.spatial == 2) {
    n->attrs["strides"] = ints({g.sh, g.sw});
    n->attrs["dilations"] = ints({g.dh, g.dw});
    n->attrs["pads"] = ints({g.ph0, g.pw0, g.ph1, g.pw1});
  } else {
    n->attrs["strides"] = ints({g.sw});
    n->attrs["dilations"] = ints({g.dw});
    n->attrs["pads"] = ints({g.pw0, g.pw1});
  }
  return n;
}

std::vector<Geo> sweep() {
  std::vector<Geo> out;
  for (int spatial : {1, 2})
    for (int64_t group : {1, 2, 6})
      for (int64_t s : {1, 2})
        for (int64_t d : {1, 2})
          for (int64_t pad : {0, 1})
            for (bool bias : {false, true}) {
              Geo g{spatial, 2, 6, group == 6 ? 12 : 4, group, spatial == 2 ? 7 : 1, 9, spatial == 2 ? 3 : 1, 3,
                    spatial == 2 ? s : 1, s, spatial == 2 ? d : 1, d, spatial == 2 ? pad : 0, pad,
                    spatial == 2 ? pad + 1 : 0, pad, bias};
              out.push_back(g);
            }
  return out;
}

void expect_close(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.f.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k)
    ASSERT_NEAR(got.f[k], want[k], 1e-5 * std::max(1.0, std::fabs(want[k]))) << what << " element " << k;
}

}  // namespace

TEST(Interpreter, ConvMatchesDoubleReferenceOverSweptGeometry) {
  std::mt19937 rng(12345);
  int cases = 0;
  for (const Geo& g : sweep()) {
    Graph gr;
    Node* n = conv_node(gr, g, "Conv", "");
    std::vector<int64_t> xs = {g.n, g.c, g.h, g.w}, ws = {g.m, g.c / g.group, g.kh, g.kw};
    if (g.spatial == 1) {
      xs = {g.n, g.c, g.w};
      ws = {g.m, g.c / g.group, g.kw};
    }
    Tensor x = random_tensor(xs, rng), w = random_tensor(ws, rng), b = random_tensor({g.m}, rng);
    auto out = interp::run_node(*n, {&x, &w, g.bias ? &b : nullptr}, 13);
    int64_t oh = (g.h + g.ph0 + g.ph1 - (g.kh - 1) * g.dh - 1) / g.sh + 1;
    int64_t ow = (g.w + g.pw0 + g.pw1 - (g.kw - 1) * g.dw - 1) / g.sw + 1;
    std::vector<int64_t> want_shape = {g.n, g.m, oh, ow};
    if (g.spatial == 1) want_shape = {g.n, g.m, ow};
    ASSERT_EQ(out[0].shape, want_shape);
    expect_close(out[0], reference_conv(g, x.f.data(), w.f.data(), g.bias ? b.f.data() : nullptr, oh, ow),
                 "conv case " + std::to_string(cases));
    ++cases;
  }
  EXPECT_EQ(cases, 96);
}

TEST(Interpreter, BatchedWeightConvIsOneConvPerTask) {
  std::mt19937 rng(777);
  for (int64_t tasks : {1, 3})
    for (const Geo& g : sweep()) {
      if (g.sh != g.sw || g.bias == false) continue;
      Graph gr;
      Node* n = conv_node(gr, g, "BatchedWeightConv", "batchconv");
      std::vector<int64_t> xs = {tasks, g.n, g.c, g.h, g.w}, ws = {tasks, g.m, g.c / g.group, g.kh, g.kw};
      if (g.spatial == 1) {
        xs = {tasks, g.n, g.c, g.w};
        ws = {tasks, g.m, g.c / g.group, g.kw};
      }
      Tensor x = random_tensor(xs, rng), w = random_tensor(ws, rng), b = random_tensor({tasks, g.m}, rng);
      auto out = interp::run_node(*n, {&x, &w, &b}, 1);
      int64_t oh = (g.h + g.ph0 + g.ph1 - (g.kh - 1) * g.dh - 1) / g.sh + 1;
      int64_t ow = (g.w + g.pw0 + g.pw1 - (g.kw - 1) * g.dw - 1) / g.sw + 1;
      std::vector<double> want;
      const int64_t xstep = x.numel() / tasks, wstep = w.numel() / tasks;
      for (int64_t t = 0; t < tasks; ++t) {
        auto y = reference_conv(g, x.f.data() + t * xstep, w.f.data() + t * wstep, b.f.data() + t * g.m, oh, ow);
        want.insert(want.end(), y.begin(), y.end());
      }
      EXPECT_EQ(out[0].shape[0], tasks);
      EXPECT_EQ(out[0].shape[1], g.n);
      EXPECT_EQ(out[0].shape[2], g.m);
      expect_close(out[0], want, "batched conv");
    }
}

TEST(Interpreter, AutoPadSameMatchesExplicitPads) {
  std::mt19937 rng(5);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    Geo g{2, 1, 2, 3, 1, 6, 5, 4, 3, 2, 2, 1, 1, 0, 0, 0, 0, false};
    // out = ceil(in / stride); total pad = (out-1)*stride + k - in, extra at the end for SAME_UPPER.
    int64_t oh = 3, ow = 3, th = (oh - 1) * 2 + 4 - 6, tw = (ow - 1) * 2 + 3 - 5;
    bool upper = std::string(mode) == "SAME_UPPER";
    g.ph0 = upper ? th / 2 : th - th / 2;
    g.ph1 = th - g.ph0;
    g.pw0 = upper ? tw / 2 : tw - tw / 2;
    g.pw1 = tw - g.pw0;
    Graph gr;
    Node* n = conv_node(gr, g, "Conv", "");
    n->attrs.erase("pads");
    Attribute ap;
    ap.kind = Attribute::Kind::String;
    ap.s = mode;
    n->attrs["auto_pad"] = ap;
    Tensor x = random_tensor({1, 2, 6, 5}, rng), w = random_tensor({3, 2, 4, 3}, rng);
    auto out = interp::run_node(*n, {&x, &w}, 13);
    ASSERT_EQ(out[0].shape, (std::vector<int64_t>{1, 3, oh, ow}));
    expect_close(out[0], reference_conv(g, x.f.data(), w.f.data(), nullptr, oh, ow), mode);
  }
}

TEST(Interpreter, ErrorsNameTheNode) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    auto m = io::parse_model(text);
    try {
      interp::run(*m, interp::random_inputs(*m, 1));
      ADD_FAILURE() << "no error, expected " << needle;
    } catch (const interp::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,4,5] x) => (float[1,4,5] y) { y = Softsign(x) })",
               "(Softsign): the reference interpreter has no kernel");
  expect_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,6,5] x) => (float[1,4,5] y) <float[4,4,1] w = {1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1}>
{ y = Conv<group=4>(x, w) })",
               "group 4 x weight in-channels 4 != input channels 6");
  expect_error(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,2] x) => (float[1,1,1] y) <float[1,1,5] w = {1,1,1,1,1}>
{ y = Conv(x, w) })",
               "kernel extent 5 exceeds padded input 2");
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[2] x) => (float[2] y) { y = Relu(x) })");
  EXPECT_THROW(interp::run(*m, {}), interp::Error);
  interp::TensorMap wrong;
  wrong["x"] = Tensor{DType::Float, {3}, {1, 2, 3}, {}, {}};
  EXPECT_THROW(interp::run(*m, wrong), interp::Error);
}

TEST(Interpreter, RunsAGraphAndComparesOutputs) {
  auto m = io::parse_model(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[N,3] x) => (float[N,6] y) <int64[2] r = {1, 2}>
{ t = Tile(x, r)
  y = Relu(t) })");
  auto in = interp::random_inputs(*m, 3, {{"N", 4}});
  ASSERT_EQ(in["x"].shape, (std::vector<int64_t>{4, 3}));
  auto out = interp::run(*m, in);
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{4, 6}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(y.f[i * 6 + j], std::max(0.0f, in["x"].f[i * 3 + j % 3]));
  Tensor other = y;
  EXPECT_EQ(interp::max_relative_difference(other, y), 0.0);
  other.f[5] += 0.5f;
  EXPECT_GT(interp::max_relative_difference(other, y), 0.1);
  other.shape = {6, 4};
  EXPECT_TRUE(std::isinf(interp::max_relative_difference(other, y)));
}

#include "model_specs.h"

#include <sstream>

namespace model_layouts {
namespace {

std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

bcbench::ConvGeom geom(int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t k, int64_t groups = 1) {
  bcbench::ConvGeom g;
  g.n = n, g.cin = cin, g.h = h, g.w = w, g.cout = cout, g.kh = k, g.kw = k, g.groups = groups;
  g.pt = g.pl = g.pb = g.pr = k / 2;
  g.oh = h, g.ow = w;
  return g;
}

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

// MAML-like: 4 batched-weight 3x3 convs with ReLU, every task its own weights.
ModelSpec maml_stack() {
  const int64_t B = 8, N = 10, C = 32, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({B, N, 3, H, W}) << "] x";
  t << ", float[" << dims({B, C, 3, 3, 3}) << "] w0, float[" << dims({B, C}) << "] b0";
  for (int l = 1; l < 4; ++l) t << ", float[" << dims({B, C, C, 3, 3}) << "] w" << l << ", float[" << dims({B, C}) << "] b" << l;
  t << ") => (float[" << dims({B, N, C, H, W}) << "] y) {\n";
  std::string in = "x";
  for (int l = 0; l < 4; ++l) {
    const std::string c = "c" + std::to_string(l), r = l == 3 ? "y" : "r" + std::to_string(l);
    t << "  " << c << " = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(" << in << ", w" << l << ", b" << l << ")\n";
    t << "  " << r << " = Relu(" << c << ")\n";
    in = r;
  }
  t << "}\n";
  ModelSpec m{"maml_stack", "8 tasks x 10 images, 3->32->32->32->32, 28x28, batched-weight 3x3 + ReLU", t.str(), B, {}};
  for (int l = 0; l < 4; ++l) m.peer.push_back({geom(N, l ? C : 3, H, W, C, 3), l});
  return m;
}

// VGG-like: three dense 3x3 convs with ReLU and a residual Add.
ModelSpec conv_stack() {
  const int64_t N = 4, C = 64, H = 56, W = 56;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x";
  for (int l = 0; l < 3; ++l) t << ", float[" << dims({C, C, 3, 3}) << "] w" << l << ", float[" << C << "] b" << l;
  t << ") => (float[" << dims({N, C, H, W}) << "] y) {\n"
    << "  c0 = Conv<pads = [1, 1, 1, 1]>(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv<pads = [1, 1, 1, 1]>(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2, b2)\n  a = Add(c2, r0)\n  y = Relu(a)\n}\n";
  ModelSpec m{"conv_stack", "N=4, 64->64 x3, 56x56, 3x3 + ReLU, residual Add", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, C, 3), 0}, {geom(N, C, H, W, C, 3), 1}, {geom(N, C, H, W, C, 3), 2, 1}};
  return m;
}

// VGG-like with pools: 3x3 convs with ReLU, a 2 x 2 max pool after the
// first two (56 -> 28 -> 14).
ModelSpec vgg_pools() {
  const int64_t N = 4, C0 = 64, C1 = 128, H = 56, W = 56;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C0, H, W}) << "] x, float[" << dims({C0, C0, 3, 3}) << "] w0, float[" << C0
    << "] b0, float[" << dims({C1, C0, 3, 3}) << "] w1, float[" << C1 << "] b1, float[" << dims({C1, C1, 3, 3})
    << "] w2, float[" << C1 << "] b2) => (float[" << dims({N, C1, H / 4, W / 4}) << "] y) {\n"
    << "  c0 = Conv<pads = [1, 1, 1, 1]>(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  p0 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(r0)\n"
    << "  c1 = Conv<pads = [1, 1, 1, 1]>(p0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  p1 = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(r1)\n"
    << "  c2 = Conv<pads = [1, 1, 1, 1]>(p1, w2, b2)\n  y = Relu(c2)\n}\n";
  ModelSpec m{"vgg_pools", "N=4, 3x3 64->64 at 56x56, max pool 2, 64->128 at 28x28, max pool 2, 128->128 at 14x14, ReLU each",
              t.str(), 1, {}};
  m.peer = {{geom(N, C0, H, W, C0, 3), 0, -1, true, 2}, {geom(N, C0, H / 2, W / 2, C1, 3), 1, -1, true, 2},
            {geom(N, C1, H / 4, W / 4, C1, 3), 2}};
  return m;
}

// ResNeXt block: 1x1, grouped 3x3 (32 groups of 4), 1x1, residual, ReLU.
ModelSpec resnext_block() {
  const int64_t N = 8, C = 256, M = 128, H = 14, W = 14;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x, float[" << dims({M, C, 1, 1}) << "] w0, float[" << M
    << "] b0, float[" << dims({M, 4, 3, 3}) << "] w1, float[" << M << "] b1, float[" << dims({C, M, 1, 1})
    << "] w2, float[" << C << "] b2) => (float[" << dims({N, C, H, W}) << "] y) {\n"
    << "  c0 = Conv(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv<group = 32, pads = [1, 1, 1, 1]>(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv(r1, w2, b2)\n  a = Add(c2, x)\n  y = Relu(a)\n}\n";
  ModelSpec m{"resnext_block", "N=8, 256->128 1x1, 128 g=32 3x3, 128->256 1x1, 14x14, + x, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, M, 1), 0}, {geom(N, M, H, W, M, 3, 32), 1}, {geom(N, M, H, W, C, 1), 2, 0}};
  return m;
}

// The ResNeXt block's grouped conv alone (32 groups of 4 channels).
ModelSpec resnext_grouped() {
  const int64_t N = 8, M = 128, H = 14, W = 14;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, M, H, W}) << "] x, float[" << dims({M, 4, 3, 3}) << "] w0, float[" << M
    << "] b0) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = 32, pads = [1, 1, 1, 1]>(x, w0, b0)\n  y = Relu(c0)\n}\n";
  ModelSpec m{"resnext_grouped", "the block's grouped 3x3 alone: N=8, 128 g=32, 14x14, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, M, H, W, M, 3, 32), 0}};
  return m;
}

// The depthwise-separable block's second depthwise conv alone.
ModelSpec depthwise() {
  const int64_t N = 8, M = 128, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, M, H, W}) << "] x, float[" << dims({M, 1, 3, 3}) << "] w0, float[" << M
    << "] b0) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = " << M << ", pads = [1, 1, 1, 1]>(x, w0, b0)\n  y = Relu(c0)\n}\n";
  ModelSpec m{"depthwise", "depthwise 3x3 alone: N=8, 128 channels, 28x28, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, M, H, W, M, 3, M), 0}};
  return m;
}

// Depthwise-separable (MobileNet): depthwise 3x3 + ReLU, pointwise 1x1 + ReLU, twice.
ModelSpec dw_separable() {
  const int64_t N = 8, C = 64, M = 128, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x, float[" << dims({C, 1, 3, 3}) << "] w0, float[" << C
    << "] b0, float[" << dims({M, C, 1, 1}) << "] w1, float[" << M << "] b1, float[" << dims({M, 1, 3, 3})
    << "] w2, float[" << M << "] b2, float[" << dims({M, M, 1, 1}) << "] w3, float[" << M
    << "] b3) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = " << C << ", pads = [1, 1, 1, 1]>(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv<group = " << M << ", pads = [1, 1, 1, 1]>(r1, w2, b2)\n  r2 = Relu(c2)\n"
    << "  c3 = Conv(r2, w3, b3)\n  y = Relu(c3)\n}\n";
  ModelSpec m{"dw_separable", "N=8, dw 3x3 64, 1x1 64->128, dw 3x3 128, 1x1 128->128, 28x28, ReLU each", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, C, 3, C), 0}, {geom(N, C, H, W, M, 1), 1}, {geom(N, M, H, W, M, 3, M), 2},
            {geom(N, M, H, W, M, 1), 3}};
  return m;
}

// Seed 1 at N = 1e6: the shared input through 4 linear layers, as the rewriter leaves it (one 1-D conv).
ModelSpec seed1() {
  const int64_t N = 1000000;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({1, 16, N}) << "] x, float[" << dims({64, 16, 1}) << "] w0, float[64] b0) => (float["
    << dims({1, 64, N}) << "] y) {\n  y = Conv(x, w0, b0)\n}\n";
  ModelSpec m{"seed1", "N = 1e6, 16 -> 4 x 16 as one 1x1 1-D conv (the rewritten seed 1)", t.str(), 1, {}};
  bcbench::ConvGeom g = geom(1, 16, 1, N, 64, 1);
  g.kh = 1, g.one_d = true;
  m.peer = {{g, 0, -1, false}};
  return m;
}

// An MLP: three Gemms with ReLU between them (a classifier head's shapes);
// trans_b: as PyTorch's Linear layers export it (Gemm transB = 1, weights (out, in)).
ModelSpec mlp(bool trans_b) {
  const int64_t N = 256, D = 1024, O = 10;
  const std::string gemm = trans_b ? "Gemm<transB = 1>" : "Gemm";
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, D}) << "] x, float[" << dims({D, D}) << "] w0, float[" << D
    << "] b0, float[" << dims({D, D}) << "] w1, float[" << D << "] b1, float["
    << (trans_b ? dims({O, D}) : dims({D, O})) << "] w2, float[" << O << "] b2) => (float[" << dims({N, O})
    << "] y) {\n"
    << "  h0 = " << gemm << "(x, w0, b0)\n  r0 = Relu(h0)\n  h1 = " << gemm << "(r0, w1, b1)\n  r1 = Relu(h1)\n"
    << "  y = " << gemm << "(r1, w2, b2)\n}\n";
  ModelSpec m{trans_b ? "mlp_linear" : "mlp",
              trans_b ? "the MLP as PyTorch's Linear exports it (Gemm transB = 1, weights (out, in))"
                      : "256 rows, 1024 -> 1024 -> 1024 -> 10, Gemm + ReLU",
              t.str(), 1, {}, {}};
  m.gemms = {{N, D, D, true, trans_b}, {N, D, D, true, trans_b}, {N, D, O, false, trans_b}};
  return m;
}

}  // namespace

std::vector<ModelSpec> benchmark_models() {
  return {maml_stack(), conv_stack(), vgg_pools(), resnext_block(), resnext_grouped(), dw_separable(), depthwise(), seed1(), mlp(false), mlp(true)};
}

}  // namespace model_layouts

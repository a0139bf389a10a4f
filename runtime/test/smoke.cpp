// Smoke test of the runtime: each op on a few small shapes (every kernel
// path: depthwise, 1-D, dense, narrow groups, tiny) against a plain loop in
// double, plus one bad-input error. The real sweeps live in tests/kernels.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "batchconv/batchconv.h"

namespace {

using batchconv::ConvDesc;
using batchconv::TensorView;

std::mt19937 rng(7);

std::vector<float> random_vec(size_t n) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

// Plain-loop conv of one batch slice: x (N, C, H, W), w (Co, C/g, KH, KW).
double conv_at(const float* x, const float* w, const float* bias, int C, int H, int W, int Co,
               int KH, int KW, const ConvDesc& d, int n, int co, int oy, int ox) {
  int g = d.groups, cin_g = C / g, cout_g = Co / g, grp = co / cout_g;
  double s = bias ? bias[co] : 0.0;
  for (int ci = 0; ci < cin_g; ++ci)
    for (int ky = 0; ky < KH; ++ky)
      for (int kx = 0; kx < KW; ++kx) {
        int iy = oy * d.stride[0] + ky * d.dilation[0] - d.pad_begin[0];
        int ix = ox * d.stride[1] + kx * d.dilation[1] - d.pad_begin[1];
        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
        int c = grp * cin_g + ci;
        s += double(x[((size_t(n) * C + c) * H + iy) * W + ix]) *
             w[((size_t(co) * cin_g + ci) * KH + ky) * KW + kx];
      }
  if (d.activation == batchconv::Activation::ReLU && s < 0) s = 0;
  return s;
}

int failures = 0;

void expect_close(const char* what, double got, double want) {
  if (std::fabs(got - want) > 1e-4 * (1 + std::fabs(want))) {
    if (failures++ < 10) std::printf("FAIL %s: got %g want %g\n", what, got, want);
  }
}

void check_grouped(int N, int C, int H, int W, int Co, int KH, int KW, ConvDesc d, bool bias) {
  auto x = random_vec(size_t(N) * C * H * W);
  auto w = random_vec(size_t(Co) * (C / d.groups) * KH * KW);
  auto b = random_vec(Co);
  TensorView xv(x.data(), {N, C, H, W}), wv(w.data(), {Co, C / d.groups, KH, KW}), bv(b.data(), {Co});
  auto ys = batchconv::grouped_conv_output_shape(xv, wv, d);
  std::vector<float> y(ys[0] * ys[1] * ys[2] * ys[3]);
  batchconv::grouped_conv(xv, wv, bias ? &bv : nullptr, TensorView(y.data(), ys), d);
  for (int n = 0; n < N; ++n)
    for (int co = 0; co < Co; ++co)
      for (int oy = 0; oy < ys[2]; ++oy)
        for (int ox = 0; ox < ys[3]; ++ox)
          expect_close("grouped_conv",
                       y[((size_t(n) * Co + co) * ys[2] + oy) * ys[3] + ox],
                       conv_at(x.data(), w.data(), bias ? b.data() : nullptr, C, H, W, Co, KH, KW,
                               d, n, co, oy, ox));
}

void check_batched_and_broadcast(int B, int N, int C, int H, int W, int Co, int K, ConvDesc d) {
  auto x = random_vec(size_t(B) * N * C * H * W);
  auto w = random_vec(size_t(B) * Co * (C / d.groups) * K * K);
  auto b = random_vec(size_t(B) * Co);
  TensorView xv(x.data(), {B, N, C, H, W}), wv(w.data(), {B, Co, C / d.groups, K, K});
  TensorView bv(b.data(), {B, Co});
  auto ys = batchconv::batched_weight_conv_output_shape(xv, wv, d);
  const int OH = ys[3], OW = ys[4];
  std::vector<float> y(size_t(B) * N * Co * OH * OW), yc(y.size());
  batchconv::batched_weight_conv(xv, wv, &bv, TensorView(y.data(), ys), d);
  // broadcast: x slice 0 shared by all banks, concatenated layout (N, B*Co, OH, OW).
  TensorView x0(x.data(), {N, C, H, W});
  batchconv::broadcast_input_conv(x0, wv, &bv, TensorView(yc.data(), {N, B * Co, OH, OW}), d,
                                  batchconv::BroadcastLayout::Concatenated);
  const size_t xs = size_t(N) * C * H * W, ws = size_t(Co) * (C / d.groups) * K * K;
  for (int bi = 0; bi < B; ++bi)
    for (int n = 0; n < N; ++n)
      for (int co = 0; co < Co; ++co)
        for (int oy = 0; oy < OH; ++oy)
          for (int ox = 0; ox < OW; ++ox) {
            expect_close("batched_weight_conv",
                         y[(((size_t(bi) * N + n) * Co + co) * OH + oy) * OW + ox],
                         conv_at(x.data() + bi * xs, w.data() + bi * ws, b.data() + bi * Co, C, H,
                                 W, Co, K, K, d, n, co, oy, ox));
            expect_close("broadcast_input_conv",
                         yc[((size_t(n) * B * Co + bi * Co + co) * OH + oy) * OW + ox],
                         conv_at(x.data(), w.data() + bi * ws, b.data() + bi * Co, C, H, W, Co, K,
                                 K, d, n, co, oy, ox));
          }
}

void check_linear(int B, int N, int K, int M, bool shared) {
  auto x = random_vec(size_t(shared ? 1 : B) * N * K), w = random_vec(size_t(B) * K * M);
  auto b = random_vec(size_t(B) * M);
  std::vector<float> y(size_t(B) * N * M);
  TensorView xv = shared ? TensorView(x.data(), {N, K}) : TensorView(x.data(), {B, N, K});
  TensorView wv(w.data(), {B, K, M}), bv(b.data(), {B, M});
  batchconv::batched_linear(xv, wv, &bv, TensorView(y.data(), {B, N, M}));
  for (int bi = 0; bi < B; ++bi)
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < M; ++m) {
        double s = b[bi * M + m];
        for (int k = 0; k < K; ++k)
          s += double(x[(size_t(shared ? 0 : bi) * N + n) * K + k]) * w[(size_t(bi) * K + k) * M + m];
        expect_close("batched_linear", y[(size_t(bi) * N + n) * M + m], s);
      }
}

}  // namespace

int main() {
  ConvDesc pad1 = ConvDesc::with_padding(1);
  check_grouped(2, 16, 20, 37, 24, 3, 3, pad1, true);  // dense
  ConvDesc dw = pad1;
  dw.groups = 16;
  check_grouped(2, 16, 19, 40, 16, 3, 3, dw, false);  // depthwise
  check_grouped(1, 16, 9, 9, 32, 3, 3, dw, true);     // depthwise, multiplier 2
  ConvDesc grp = pad1;
  grp.groups = 4;
  grp.activation = batchconv::Activation::ReLU;
  check_grouped(2, 16, 12, 33, 16, 3, 3, grp, true);  // narrow groups
  ConvDesc odd;
  odd.stride = {2, 3};
  odd.dilation = {2, 1};
  odd.pad_begin = {0, 2};
  odd.pad_end = {1, 0};
  check_grouped(3, 5, 13, 11, 7, 2, 3, odd, true);  // small, strided, dilated
  check_grouped(1, 16, 1, 300, 64, 1, 1, ConvDesc{}, true);  // 1-D as H = 1
  check_batched_and_broadcast(3, 2, 3, 12, 35, 8, 3, pad1);
  check_linear(3, 13, 20, 40, true);
  check_linear(2, 5, 7, 9, false);
  try {
    ConvDesc bad;
    bad.groups = 3;
    float z[64] = {};
    batchconv::grouped_conv(TensorView(z, {1, 4, 2, 2}), TensorView(z, {3, 1, 1, 1}), nullptr,
                            TensorView(z, {1, 3, 2, 2}), bad);
    std::printf("FAIL: groups = 3 over 4 channels was accepted\n");
    ++failures;
  } catch (const batchconv::Error& e) {
    std::printf("expected error: %s\n", e.what());
  }
  std::printf("target %s, threads %d: %s\n", batchconv::selected_target().c_str(),
              batchconv::num_threads(), failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}

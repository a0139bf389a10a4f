// Checks of the reference itself (tests/reference), independent of the kernels:
// - a one-tap kernel must pick exactly the input element the definition names
//   (y[n, c, oh, ow] = x[n, c, oh*s - p + kh*d, ow*s - p + kw*d], or 0 in the padding);
// - non-contiguous views must give the same numbers as contiguous copies;
// - the batched ops must equal the grouped op applied slice by slice;
// - max_rel_error must see a single wrong element of a strided y.
// (The conformance tests also run the reference on ONNX's stored outputs.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference.h"
#include "test_support.h"

namespace batchconv::test {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ReferenceSelf, OneTapKernelSelectsTheDefinedInputElement) {
  auto rng = case_rng("onetap");
  const int64_t N = 2, C = 3, H = 6, W = 7, K = 3;
  for (int s : {1, 2})
    for (int dil : {1, 2})
      for (int pad : {0, 2})
        for (int64_t kh0 = 0; kh0 < K; ++kh0)
          for (int64_t kw0 = 0; kw0 < K; ++kw0) {
            Tensor x({N, C, H, W}, Layout::Contiguous), w({C, C, K, K}, Layout::Contiguous);
            x.fill_random(rng, kNaN);
            w.fill(0, 0);
            for (int64_t c = 0; c < C; ++c) w.at({c, c, kh0, kw0}) = 1;
            ConvDesc d = ConvDesc::with_padding(pad);
            d.stride = {s, s}, d.dilation = {dil, dil};
            std::vector<int64_t> shape;
            const auto y = ref::grouped_conv(x.view(), w.view(), nullptr, d, &shape);
            const int64_t OH = (H + 2 * pad - dil * (K - 1) - 1) / s + 1;
            const int64_t OW = (W + 2 * pad - dil * (K - 1) - 1) / s + 1;
            ASSERT_EQ(shape_str(shape), shape_str({N, C, OH, OW}));
            size_t i = 0;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t c = 0; c < C; ++c)
                for (int64_t oh = 0; oh < OH; ++oh)
                  for (int64_t ow = 0; ow < OW; ++ow, ++i) {
                    const int64_t ih = oh * s - pad + kh0 * dil, iw = ow * s - pad + kw0 * dil;
                    const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                    ASSERT_EQ(y[i], in ? x.at({n, c, ih, iw}) : 0.0f)
                        << "s=" << s << " d=" << dil << " p=" << pad << " tap " << kh0 << "," << kw0;
                  }
          }
}

TEST(ReferenceSelf, StridedViewsEqualContiguousCopies) {
  auto rng = case_rng("strided");
  for (Layout l : {Layout::Padded, Layout::InnerStrided}) {
    Tensor x({2, 6, 5, 9}, l), w({3, 6, 2, 3, 2}, l), b({3, 6}, l);
    x.fill_random(rng, kNaN), w.fill_random(rng, kNaN), b.fill_random(rng, kNaN);
    auto xc = x.to_contiguous(), wc = w.to_contiguous(), bc = b.to_contiguous();
    TensorView xv(xc.data(), x.shape()), wv(wc.data(), w.shape()), bv(bc.data(), b.shape());
    ConvDesc d = ConvDesc::with_padding(1);
    d.groups = 3;
    d.activation = Activation::ReLU;
    // grouped conv on bank 0 of w, and the broadcast-input conv on all banks
    const auto& ws = w.strides();
    TensorView w0(w.view().data, {6, 2, 3, 2}, {ws[1], ws[2], ws[3], ws[4]});
    TensorView w0c(wc.data(), {6, 2, 3, 2});
    TensorView b0(b.view().data, {6}, {b.strides()[1]}), b0c(bc.data(), {6});
    EXPECT_EQ(ref::grouped_conv(x.view(), w0, &b0, d), ref::grouped_conv(xv, w0c, &b0c, d))
        << layout_name(l);
    for (auto layout : {BroadcastLayout::Concatenated, BroadcastLayout::Batched})
      EXPECT_EQ(ref::broadcast_input_conv(x.view(), w.view(), b.view_ptr(), d, layout),
                ref::broadcast_input_conv(xv, wv, &bv, d, layout))
          << layout_name(l);
    Tensor xl({3, 4, 6}, l), wl({3, 6, 5}, l);
    xl.fill_random(rng, kNaN), wl.fill_random(rng, kNaN);
    auto xlc = xl.to_contiguous(), wlc = wl.to_contiguous();
    EXPECT_EQ(ref::batched_linear(xl.view(), wl.view(), nullptr, Activation::None),
              ref::batched_linear(TensorView(xlc.data(), {3, 4, 6}), TensorView(wlc.data(), {3, 6, 5}),
                                  nullptr, Activation::None))
        << layout_name(l);
  }
}

TEST(ReferenceSelf, BatchedOpsEqualGroupedOpPerSlice) {
  auto rng = case_rng("slices");
  const int64_t B = 3, N = 2, Cin = 4, Cout = 6, H = 5, W = 6;
  Tensor x({B, N, Cin, H, W}, Layout::Contiguous), w({B, Cout, 2, 3, 3}, Layout::Contiguous),
      b({B, Cout}, Layout::Contiguous);
  x.fill_random(rng, kNaN), w.fill_random(rng, kNaN), b.fill_random(rng, kNaN);
  ConvDesc d = ConvDesc::with_padding(1);
  d.groups = 2;
  std::vector<int64_t> shape;
  const auto bw = ref::batched_weight_conv(x.view(), w.view(), b.view_ptr(), d, &shape);
  ASSERT_EQ(shape_str(shape), shape_str({B, N, Cout, H, W}));
  const auto bc = ref::broadcast_input_conv(TensorView(x.view().data, {N, Cin, H, W}), w.view(),
                                            b.view_ptr(), d, BroadcastLayout::Concatenated, &shape);
  ASSERT_EQ(shape_str(shape), shape_str({N, B * Cout, H, W}));
  const size_t plane = H * W, slice = N * Cout * plane;
  for (int64_t i = 0; i < B; ++i) {
    TensorView xi(x.view().data + i * N * Cin * plane, {N, Cin, H, W});
    TensorView wi(w.view().data + i * Cout * 2 * 9, {Cout, 2, 3, 3});
    TensorView bi(b.view().data + i * Cout, {Cout});
    const auto g = ref::grouped_conv(xi, wi, &bi, d);
    EXPECT_TRUE(std::equal(g.begin(), g.end(), bw.begin() + i * slice)) << "batched slice " << i;
    TensorView x0(x.view().data, {N, Cin, H, W});  // broadcast: every bank reads slice 0 of x
    const auto g0 = ref::grouped_conv(x0, wi, &bi, d);
    for (int64_t n = 0; n < N; ++n)
      EXPECT_TRUE(std::equal(g0.begin() + n * Cout * plane, g0.begin() + (n + 1) * Cout * plane,
                             bc.begin() + (n * B + i) * Cout * plane))
          << "broadcast bank " << i << " n " << n;
  }
}

TEST(ReferenceSelf, MaxRelErrorSeesOneWrongElementOfAStridedView) {
  auto rng = case_rng("maxrel");
  Tensor y({2, 3, 4}, Layout::Padded);
  y.fill_random(rng, kSentinel);
  const auto c = y.to_contiguous();
  std::vector<double> ref(c.begin(), c.end());
  EXPECT_EQ(ref::max_rel_error(y.view(), ref), 0.0);
  y.at({1, 2, 3}) += 0.5f;
  EXPECT_GT(ref::max_rel_error(y.view(), ref), 0.1);
  y.at({1, 2, 3}) = kNaN;
  EXPECT_FALSE(ref::max_rel_error(y.view(), ref) < 1.0);
}

}  // namespace
}  // namespace batchconv::test

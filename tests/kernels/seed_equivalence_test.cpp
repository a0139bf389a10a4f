// The user reports in shared/seeds/ as tests: each workaround formulation the
// report arrives at must give the same numbers as the op batchconv offers.
//  Seed 2: the correct transpose + grouped-conv formulation == batched_weight_conv
//          on a zero-copy (G, n, C, H, W) view of x (G*n, C, H, W); the first,
//          transpose-less attempt is wrong for 1 < G < N (checked, so the
//          comparison is known to be able to fail).
//  Seed 1: grouped_conv on an explicitly repeated x == broadcast_input_conv
//          (Concatenated) == a dense grouped_conv (groups = 1) on the un-repeated x.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "reference.h"
#include "test_support.h"

namespace batchconv::test {
namespace {

std::vector<double> as_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// (lead, C, [H,] W) for 1-D / 2-D.
std::vector<int64_t> sp(int dims, std::vector<int64_t> lead, int64_t c, int64_t h, int64_t w) {
  lead.push_back(c);
  if (dims == 2) lead.push_back(h);
  lead.push_back(w);
  return lead;
}

ConvDesc geometry(int dims, int stride, int pad, bool relu, int groups) {
  ConvDesc d;
  const int n = dims == 2 ? 2 : 1;
  for (int i = 0; i < n; ++i) d.stride[i] = stride, d.pad_begin[i] = pad, d.pad_end[i] = pad;
  d.groups = groups;
  d.activation = relu ? Activation::ReLU : Activation::None;
  return d;
}

struct Seed2Case { int dims; int64_t G, n; int stride, pad; bool bias, relu; };

class Seed2 : public ::testing::TestWithParam<Seed2Case> {};

TEST_P(Seed2, TransposeGroupedConvEqualsBatchedWeightConv) {
  const Seed2Case p = GetParam();
  const int64_t N = p.G * p.n, C = 3, H = 9, W = 10, Cout = 5, K = 3;
  std::ostringstream name;
  name << "seed2 " << p.dims << "-D G=" << p.G << " n=" << p.n << " stride=" << p.stride
       << " pad=" << p.pad << (p.bias ? " bias" : "") << (p.relu ? " relu" : "");
  auto rng = case_rng(name.str());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x(sp(p.dims, {N}, C, H, W), Layout::Contiguous);
  Tensor w(sp(p.dims, {p.G, Cout}, C, K, K), Layout::Contiguous);
  Tensor bias({p.G, Cout}, Layout::Contiguous);
  x.fill_random(rng, nan), w.fill_random(rng, nan), bias.fill_random(rng, nan);
  const ConvDesc d = geometry(p.dims, p.stride, p.pad, p.relu, 1);
  const int64_t OW = (W + 2 * p.pad - K) / p.stride + 1;
  const int64_t OH = p.dims == 2 ? (H + 2 * p.pad - K) / p.stride + 1 : 1;
  const int64_t plane = OH * OW, in_plane = (p.dims == 2 ? H : 1) * W;

  // batchconv: x (G*n, C, H, W) viewed as (G, n, C, H, W) without a copy.
  TensorView xv(x.storage().data(), sp(p.dims, {p.G, p.n}, C, H, W));
  TensorView bv(bias.storage().data(), {p.G, Cout});
  Tensor y(sp(p.dims, {p.G, p.n}, Cout, OH, OW), Layout::Contiguous);
  poison_output(y);
  batched_weight_conv(xv, w.view(), p.bias ? &bv : nullptr, y.view(), d);

  // The correct formulation: x_fastB = x.reshape(G, n, C, ..).transpose(0, 1)
  // .reshape(n, G*C, ..); conv with groups = G; de-interleave the output.
  Tensor xb(sp(p.dims, {p.n}, p.G * C, H, W), Layout::Contiguous);
  for (int64_t g = 0; g < p.G; ++g)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t e = 0; e < C * in_plane; ++e)
        xb.storage()[(j * p.G + g) * C * in_plane + e] = x.storage()[(g * p.n + j) * C * in_plane + e];
  TensorView wf(w.storage().data(), sp(p.dims, {p.G * Cout}, C, K, K));
  TensorView bf(bias.storage().data(), {p.G * Cout});
  ConvDesc dg = d;
  dg.groups = static_cast<int>(p.G);
  Tensor out(sp(p.dims, {p.n}, p.G * Cout, OH, OW), Layout::Contiguous);
  grouped_conv(xb.view(), wf, p.bias ? &bf : nullptr, out.view(), dg);
  std::vector<float> out_b(static_cast<size_t>(N * Cout * plane));
  for (int64_t g = 0; g < p.G; ++g)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t e = 0; e < Cout * plane; ++e)
        out_b[(g * p.n + j) * Cout * plane + e] = out.storage()[(j * p.G + g) * Cout * plane + e];

  const auto ref = ref::batched_weight_conv(xv, w.view(), p.bias ? &bv : nullptr, d);
  EXPECT_LT(ref::max_rel_error(y.view(), as_double(out_b)), kTolerance)
      << name.str() << ": batched_weight_conv != transpose + grouped conv; " << seed_note(name.str());
  EXPECT_LT(ref::max_rel_error(y.view(), ref), kTolerance) << name.str() << ": vs reference; "
                                                           << seed_note(name.str());

  // The first attempt (no transpose) must differ when 1 < G < N: this shows
  // the comparison above can tell the two apart.
  if (p.G > 1 && p.n > 1) {
    TensorView xf(x.storage().data(), sp(p.dims, {p.n}, p.G * C, H, W));
    grouped_conv(xf, wf, p.bias ? &bf : nullptr, out.view(), dg);
    TensorView wrong(out.storage().data(), sp(p.dims, {p.G, p.n}, Cout, OH, OW));
    EXPECT_GT(ref::max_rel_error(wrong, ref), 1e-2) << name.str() << ": wrong formulation agreed";
  }
}

std::vector<Seed2Case> seed2_cases() {
  std::vector<Seed2Case> v;
  for (int dims : {1, 2})
    for (auto gn : std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {2, 4}, {4, 2}, {8, 1}, {3, 3}})
      for (int geo = 0; geo < 3; ++geo)
        v.push_back({dims, gn.first, gn.second, geo == 2 ? 2 : 1, geo, geo != 1, geo == 1});
  return v;
}
INSTANTIATE_TEST_SUITE_P(Sweep, Seed2, ::testing::ValuesIn(seed2_cases()));

struct Seed1Case { int dims; int64_t G, C, Cout, K, N, L; bool bias; };

class Seed1 : public ::testing::TestWithParam<Seed1Case> {};

TEST_P(Seed1, RepeatGroupedEqualsBroadcastEqualsDense) {
  const Seed1Case p = GetParam();
  std::ostringstream name;
  name << "seed1 " << p.dims << "-D G=" << p.G << " C=" << p.C << " Cout=" << p.Cout
       << " K=" << p.K << " N=" << p.N << " L=" << p.L << (p.bias ? " bias" : "");
  auto rng = case_rng(name.str());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t H = p.dims == 2 ? 5 : 1, pad = p.K / 2;
  Tensor x(sp(p.dims, {p.N}, p.C, H, p.L), Layout::Contiguous);
  Tensor w(sp(p.dims, {p.G * p.Cout}, p.C, p.K, p.K), Layout::Contiguous);
  Tensor bias({p.G * p.Cout}, Layout::Contiguous);
  x.fill_random(rng, nan), w.fill_random(rng, nan), bias.fill_random(rng, nan);
  const TensorView* bv = p.bias ? bias.view_ptr() : nullptr;
  ConvDesc d = geometry(p.dims, 1, static_cast<int>(pad), false, 1);
  const auto out_shape = sp(p.dims, {p.N}, p.G * p.Cout, H, p.L);  // 'same' padding

  // (a) x.repeat along channels, materialised, then a grouped conv.
  Tensor xr(sp(p.dims, {p.N}, p.G * p.C, H, p.L), Layout::Contiguous);
  const int64_t block = p.C * H * p.L;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t g = 0; g < p.G; ++g)
      for (int64_t e = 0; e < block; ++e)
        xr.storage()[(n * p.G + g) * block + e] = x.storage()[n * block + e];
  Tensor ya(out_shape, Layout::Contiguous), yb(out_shape, Layout::Contiguous),
      yc(out_shape, Layout::Contiguous);
  poison_output(ya), poison_output(yb), poison_output(yc);
  ConvDesc dg = d;
  dg.groups = static_cast<int>(p.G);
  grouped_conv(xr.view(), w.view(), bv, ya.view(), dg);
  // (b) broadcast_input_conv: the same weights as G banks, x never repeated.
  TensorView wb(w.storage().data(), sp(p.dims, {p.G, p.Cout}, p.C, p.K, p.K));
  TensorView bb(bias.storage().data(), {p.G, p.Cout});
  broadcast_input_conv(x.view(), wb, p.bias ? &bb : nullptr, yb.view(), d,
                       BroadcastLayout::Concatenated);
  // (c) one dense conv (groups = 1) on the un-repeated x.
  grouped_conv(x.view(), w.view(), bv, yc.view(), d);

  const auto ref = ref::grouped_conv(x.view(), w.view(), bv, d);
  const auto yc_d = as_double(yc.to_contiguous());
  EXPECT_LT(ref::max_rel_error(ya.view(), yc_d), kTolerance) << name.str() << ": repeat+grouped != dense";
  EXPECT_LT(ref::max_rel_error(yb.view(), yc_d), kTolerance) << name.str() << ": broadcast != dense";
  EXPECT_LT(ref::max_rel_error(yc.view(), ref), kTolerance) << name.str() << ": dense vs reference";
  EXPECT_LT(ref::max_rel_error(ya.view(), ref), kTolerance) << name.str() << ": repeat vs reference";
  if (HasFailure()) ADD_FAILURE() << seed_note(name.str());
}

INSTANTIATE_TEST_SUITE_P(
    Sweep, Seed1,
    ::testing::Values(Seed1Case{1, 4, 16, 16, 1, 1, 100, true},  // the report's Conv1d(64,64,1,groups=4)
                      Seed1Case{1, 4, 16, 16, 1, 1, 100, false}, Seed1Case{1, 1, 16, 16, 1, 2, 37, true},
                      Seed1Case{1, 7, 3, 5, 3, 2, 29, true}, Seed1Case{1, 2, 5, 3, 5, 3, 16, false},
                      Seed1Case{2, 4, 8, 8, 1, 2, 9, true}, Seed1Case{2, 3, 4, 6, 3, 1, 11, false},
                      Seed1Case{2, 2, 3, 17, 3, 2, 7, true}, Seed1Case{1, 16, 2, 2, 1, 1, 1000, true}));

}  // namespace
}  // namespace batchconv::test

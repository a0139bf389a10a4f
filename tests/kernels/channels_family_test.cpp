// The channels schedule family through the public API: channels-last (NHWC)
// views of x and y in both families, packed weights reused across calls,
// updated and invalidated, reorders between layouts, the chooser's
// decisions, and the errors for views and packed weights that do not match.
// Every result is checked against the double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <string>
#include <vector>

#include "conv_check.h"
#include "layout_views.h"
#include "conv_chooser.h"
#include "reference.h"

namespace batchconv::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Shape {
  const char* name;
  int dims;
  int64_t B, N, groups, cin_g, cout_g, H, W, K;
  int stride, pad;
};

const Shape kShapes[] = {
    {"dense3x3", 2, 2, 2, 1, 16, 64, 9, 13, 3, 1, 1},
    {"odd_cout", 2, 2, 1, 1, 8, 40, 7, 10, 3, 2, 1},
    {"grouped", 2, 3, 2, 2, 8, 32, 6, 11, 3, 1, 0},
    {"depthwise", 2, 2, 2, 8, 1, 1, 8, 9, 3, 1, 1},
    {"conv1d", 1, 2, 2, 1, 12, 48, 1, 37, 5, 1, 2},
};

class ChannelsLast : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

// x and y channels-last, every op, both families and the chooser.
TEST_P(ChannelsLast, MatchesReference) {
  const Shape& s = kShapes[std::get<0>(GetParam())];
  const int op = std::get<1>(GetParam());
  const ScheduleFamily family = static_cast<ScheduleFamily>(std::get<2>(GetParam()));
  set_schedule_family(family);
  const std::string what = std::string(s.name) + " op " + std::to_string(op) + " family " +
                           std::to_string(static_cast<int>(family));
  auto rng = case_rng(what);
  ConvDesc d = ConvDesc::with_padding(s.pad);
  d.groups = static_cast<int>(s.groups);
  d.stride = {s.stride, s.stride};
  d.activation = Activation::ReLU;
  const int64_t cin = s.groups * s.cin_g, cout = s.groups * s.cout_g;
  auto spatial = [&](std::vector<int64_t> lead, int64_t c, int64_t h, int64_t w) {
    lead.push_back(c);
    if (s.dims == 2) lead.push_back(h);
    lead.push_back(w);
    return lead;
  };
  const int64_t oh = s.dims == 2 ? (s.H + 2 * s.pad - s.K) / s.stride + 1 : 1;
  const int64_t ow = (s.W + 2 * s.pad - s.K) / s.stride + 1;
  const bool batched_x = op == 1;
  const int64_t kh = s.dims == 2 ? s.K : 1;
  ChannelsLastTensor x(spatial(batched_x ? std::vector<int64_t>{s.B, s.N} : std::vector<int64_t>{s.N},
                               cin, s.H, s.W),
                       batched_x ? 2 : 1);
  Tensor w(spatial(op == 0 ? std::vector<int64_t>{cout} : std::vector<int64_t>{s.B, cout}, s.cin_g,
                   kh, s.K),
           Layout::Contiguous);
  Tensor bias(op == 0 ? std::vector<int64_t>{cout} : std::vector<int64_t>{s.B, cout}, Layout::Contiguous);
  x.fill_random(rng);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  const std::vector<int64_t> yshape =
      spatial(op == 0 ? std::vector<int64_t>{s.N} : std::vector<int64_t>{s.B, s.N}, cout, oh, ow);
  ChannelsLastTensor y(yshape, op == 0 ? 1 : 2);
  std::vector<int64_t> ref_shape;
  std::vector<double> ref;
  if (op == 0) {
    grouped_conv(x.view, w.view(), bias.view_ptr(), y.view, d);
    ref = ref::grouped_conv(x.view, w.view(), bias.view_ptr(), d, &ref_shape);
  } else if (op == 1) {
    batched_weight_conv(x.view, w.view(), bias.view_ptr(), y.view, d);
    ref = ref::batched_weight_conv(x.view, w.view(), bias.view_ptr(), d, &ref_shape);
  } else {
    broadcast_input_conv(x.view, w.view(), bias.view_ptr(), y.view, d, BroadcastLayout::Batched);
    ref = ref::broadcast_input_conv(x.view, w.view(), bias.view_ptr(), d, BroadcastLayout::Batched,
                                    &ref_shape);
  }
  if (family == ScheduleFamily::Channels) EXPECT_EQ(last_conv_family(), "channels") << what;
  if (family == ScheduleFamily::Rows) EXPECT_EQ(last_conv_family(), "rows") << what;
  expect_view_matches(y.view, ref, ref_shape, what);
  set_schedule_family(ScheduleFamily::Auto);
}

INSTANTIATE_TEST_SUITE_P(Views, ChannelsLast,
                         ::testing::Combine(::testing::Range(0, 5), ::testing::Range(0, 3),
                                            ::testing::Range(0, 3)));

// A layout that does not match the view's strides is an error naming it.
TEST(ChannelsLastErrors, StridesMustMatchLayout) {
  std::vector<float> xs(2 * 8 * 5 * 5), ws(8 * 8 * 9), ys(2 * 8 * 5 * 5);
  TensorView x(xs.data(), {2, 8, 5, 5}), w(ws.data(), {8, 8, 3, 3}), y(ys.data(), {2, 8, 5, 5});
  x.layout = batchconv::Layout::NHWC;
  x.strides = {200, 25, 5, 1};  // NCHW strides
  try {
    grouped_conv(x, w, nullptr, y, ConvDesc::with_padding(1));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x has layout NHWC"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(channels_last(xs.data(), {2, 8, 5, 5}, 4), Error);
}

// Packed weights: reused across calls, updated, invalidated.
TEST(PackedWeightsTest, ReusedUpdatedInvalidated) {
  auto rng = case_rng("packed");
  const int64_t N = 2, C = 16, M = 64, H = 7, W = 9;
  Tensor x({N, C, H, W}, Layout::Contiguous), w({M, C, 3, 3}, Layout::Padded),
      w2({M, C, 3, 3}, Layout::Contiguous), y({N, M, H, W}, Layout::Contiguous);
  x.fill_random(rng, kNaN);
  w.fill_random(rng, kNaN);
  w2.fill_random(rng, kNaN);
  const ConvDesc d = ConvDesc::with_padding(1);
  PackedWeights packed(w.view(), 1, false);
  EXPECT_EQ(packed.view().stride(0), 1) << "the output channel is innermost";
  for (ScheduleFamily f : {ScheduleFamily::Channels, ScheduleFamily::Rows, ScheduleFamily::Auto}) {
    set_schedule_family(f);
    for (int call = 0; call < 2; ++call) {
      poison_output(y);
      grouped_conv(x.view(), packed, nullptr, y.view(), d);
      std::vector<int64_t> shape;
      expect_matches(y, ref::grouped_conv(x.view(), w.view(), nullptr, d, &shape), shape,
                     "packed call " + std::to_string(call));
    }
  }
  set_schedule_family(ScheduleFamily::Auto);
  // Copies and moves keep their own packed data.
  PackedWeights copy = packed;
  PackedWeights moved = std::move(copy);
  EXPECT_FALSE(copy.valid());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(moved.view().data) % 64, 0u) << "64-byte aligned";
  grouped_conv(x.view(), moved, nullptr, y.view(), d);
  {
    std::vector<int64_t> s;
    expect_matches(y, ref::grouped_conv(x.view(), w.view(), nullptr, d, &s), s, "moved copy");
  }
  packed.update(w2.view());
  grouped_conv(x.view(), packed, nullptr, y.view(), d);
  std::vector<int64_t> shape;
  expect_matches(y, ref::grouped_conv(x.view(), w2.view(), nullptr, d, &shape), shape, "updated");
  packed.invalidate();
  EXPECT_FALSE(packed.valid());
  try {
    grouped_conv(x.view(), packed, nullptr, y.view(), d);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalidated"), std::string::npos) << e.what();
  }
}

TEST(PackedWeightsTest, BatchedAndBroadcastMatchReference) {
  auto rng = case_rng("packed_batched");
  const int64_t B = 3, N = 2, C = 8, M = 32, H = 6, W = 17;
  Tensor xb({B, N, C, H, W}, Layout::Contiguous), xs({N, C, H, W}, Layout::Contiguous),
      w({B, M, C, 3, 3}, Layout::Contiguous), bias({B, M}, Layout::Contiguous),
      y({B, N, M, H, W}, Layout::Contiguous);
  xb.fill_random(rng, kNaN);
  xs.fill_random(rng, kNaN);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  const ConvDesc d = ConvDesc::with_padding(1);
  const PackedWeights packed(w.view(), 1, true);
  std::vector<int64_t> shape;
  batched_weight_conv(xb.view(), packed, bias.view_ptr(), y.view(), d);
  expect_matches(y, ref::batched_weight_conv(xb.view(), w.view(), bias.view_ptr(), d, &shape), shape,
                 "batched");
  broadcast_input_conv(xs.view(), packed, bias.view_ptr(), y.view(), d, BroadcastLayout::Batched);
  expect_matches(y, ref::broadcast_input_conv(xs.view(), w.view(), bias.view_ptr(), d,
                                              BroadcastLayout::Batched, &shape),
                 shape, "broadcast");
}

// Packed weights used with another shape or geometry: a clear error, y untouched.
TEST(PackedWeightsTest, MismatchesAreErrors) {
  std::vector<float> xs(2 * 8 * 5 * 5), ws(16 * 4 * 9), ys(2 * 16 * 5 * 5, 7.0f);
  TensorView x(xs.data(), {2, 8, 5, 5}), w(ws.data(), {16, 4, 3, 3}), y(ys.data(), {2, 16, 5, 5});
  const PackedWeights grouped2(w, 2, false);
  ConvDesc d = ConvDesc::with_padding(1);
  auto expect_error = [&](auto call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    for (float v : ys) ASSERT_EQ(v, 7.0f) << "y written on error";
  };
  d.groups = 1;  // packed for groups = 2
  expect_error([&] { grouped_conv(x, grouped2, nullptr, y, d); }, "groups=2");
  d.groups = 2;
  std::vector<float> xb(2 * 8 * 5 * 5);
  TensorView x5(xb.data(), {1, 2, 8, 5, 5}), y5(ys.data(), {1, 2, 16, 5, 5});
  expect_error([&] { batched_weight_conv(x5, grouped2, nullptr, y5, d); }, "unbatched");
  TensorView x_other(xs.data(), {2, 6, 5, 5});  // 6 channels: packed weights need 8
  expect_error([&] { grouped_conv(x_other, grouped2, nullptr, y, d); }, "w");
  PackedWeights p(w, 2, false);
  std::vector<float> other(16 * 4 * 5 * 5);
  EXPECT_THROW(p.update(TensorView(other.data(), {16, 4, 5, 5})), Error);
  EXPECT_THROW(PackedWeights(w, 3, false), Error);
  EXPECT_THROW(PackedWeights().view(), Error);
}

TEST(Reorder, RoundTripsBetweenLayouts) {
  auto rng = case_rng("reorder");
  Tensor a({3, 5, 4, 7}, Layout::Padded), back({3, 5, 4, 7}, Layout::Contiguous);
  a.fill_random(rng, kNaN);
  ChannelsLastTensor nhwc({3, 5, 4, 7}, 1);
  reorder(a.view(), nhwc.view);
  reorder(nhwc.view, back.view());
  int64_t mismatches = 0;
  for_each_index(a.shape(), [&](const std::vector<int64_t>& idx) {
    if (a.at(idx) != back.at(idx)) ++mismatches;
  });
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(nhwc.view.stride(1), 1);
  Tensor wrong({3, 5, 4, 6}, Layout::Contiguous);
  EXPECT_THROW(reorder(a.view(), wrong.view()), Error);
}

// Copies of 2^18 elements or more run as parallel tasks and transpose 4 x 4
// blocks in SSE registers: sizes around and off multiples of 4 and of the
// 32 x 32 tiles, every element checked (NCHW -> NHWC -> padded NCHW, and a
// transposed 3-D view).
TEST(Reorder, LargeCopiesMatchElementByElement) {
  auto rng = case_rng("reorder large");
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{3, 37, 61, 45}, {2, 64, 33, 67}, {1, 131, 45, 47}, {5, 16, 57, 63}}) {
    Tensor a(shape, Layout::Contiguous), back(shape, Layout::Padded);
    a.fill_random(rng, kNaN);
    back.fill(kNaN, -3.0f);
    ChannelsLastTensor nhwc(shape, 1);
    reorder(a.view(), nhwc.view);
    const int64_t c = shape[1], h = shape[2], w = shape[3];
    int64_t wrong_nhwc = 0, wrong_back = 0;
    for_each_index(shape, [&](const std::vector<int64_t>& i) {
      const float want = a.at(i);
      if (nhwc.data[((i[0] * h + i[2]) * w + i[3]) * c + i[1]] != want) ++wrong_nhwc;
    });
    reorder(nhwc.view, back.view());
    for_each_index(shape, [&](const std::vector<int64_t>& i) {
      if (back.at(i) != a.at(i)) ++wrong_back;
    });
    EXPECT_EQ(wrong_nhwc, 0) << shape_str(shape);
    EXPECT_EQ(wrong_back, 0) << shape_str(shape);
    EXPECT_TRUE(back.untouched_outside_view(-3.0f)) << shape_str(shape);
  }
  // (rows, cols) transposed: the 3-D case with one outer axis.
  const int64_t rows = 517, cols = 1031;
  std::vector<float> src(static_cast<size_t>(rows * cols)), dst(src.size(), kNaN);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : src) v = u(rng);
  reorder(TensorView(src.data(), {1, rows, cols}), TensorView(dst.data(), {1, rows, cols}, {rows * cols, 1, rows}));
  int64_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < cols; ++q)
      if (dst[q * rows + r] != src[r * cols + q]) ++wrong;
  EXPECT_EQ(wrong, 0);
}

// The chooser's decisions on the seed shapes, for AVX-512 and AVX2 facts.
TEST(Chooser, Decisions) {
  using namespace batchconv_gen;
  struct Want {
    const char* what;
    int64_t cin_g, cout_g, k;
    bool channels_last;
    ConvFamily family;
  };
  const Want wants[] = {
      {"B=1 / MAML 64 -> 64, 3x3", 64, 64, 3, false, ConvFamily::Channels},
      {"seed 2: 3 -> 64, 7x7 (147 taps)", 3, 64, 7, false, ConvFamily::Channels},
      {"seed 3: 3 -> 64, 3x3 (27 taps)", 3, 64, 3, false, ConvFamily::Rows},
      {"seed 3 channels-last (27 taps)", 3, 64, 3, true, ConvFamily::Channels},
      {"channels-last 4 -> 64, 3x3 (36 taps)", 4, 64, 3, true, ConvFamily::Channels},
      {"seed 1 channels-last (16 taps)", 16, 64, 1, true, ConvFamily::Channels},
      {"channels-last 1 -> 64, 1x1 (1 tap)", 1, 64, 1, true, ConvFamily::Channels},
      {"depthwise", 1, 1, 3, false, ConvFamily::Rows},
      {"depthwise channels-last", 1, 1, 3, true, ConvFamily::Rows},
      {"ResNeXt 4 -> 4 per group", 4, 4, 3, false, ConvFamily::Rows},
      {"seed 1: 16 -> 64, 1x1", 16, 64, 1, false, ConvFamily::Rows},
  };
  for (int vec : {16, 8}) {
    TargetFacts t;
    t.vector_floats = vec;
    t.registers = vec == 16 ? 32 : 16;
    for (const Want& w : wants) {
      ConvProblem p;
      p.cin_g = w.cin_g, p.cout_g = w.cout_g, p.kernel_w = p.kernel_h = w.k;
      p.in_w = p.in_h = p.out_w = p.out_h = 32;
      p.x_channels_last = p.y_channels_last = w.channels_last;
      const ConvChoice c = choose_conv_schedule(p, t);
      EXPECT_EQ(family_name(c.schedule.family), std::string(family_name(w.family)))
          << w.what << " (vec " << vec << "): " << c.reason;
      EXPECT_EQ(validate_conv_schedule(c.schedule, t), "") << w.what;
      EXPECT_FALSE(c.reason.empty());
    }
  }
}

// The runtime follows the chooser (and records what ran).
TEST(Chooser, RuntimeFollowsIt) {
  set_schedule_family(ScheduleFamily::Auto);
  auto rng = case_rng("runtime_choice");
  Tensor x({1, 64, 12, 12}, Layout::Contiguous), w({64, 64, 3, 3}, Layout::Contiguous),
      y({1, 64, 12, 12}, Layout::Contiguous), w3({64, 3, 3, 3}, Layout::Contiguous),
      x3({1, 3, 12, 12}, Layout::Contiguous);
  for (Tensor* t : {&x, &w, &w3, &x3}) t->fill_random(rng, kNaN);
  grouped_conv(x.view(), w.view(), nullptr, y.view(), ConvDesc::with_padding(1));
  EXPECT_EQ(last_conv_family(), "channels");
  grouped_conv(x3.view(), w3.view(), nullptr, y.view(), ConvDesc::with_padding(1));
  EXPECT_EQ(last_conv_family(), "rows");
  // The same 27-tap conv on channels-last tensors runs the channels family
  // in place (no NCHW copies), and computes the same numbers.
  ChannelsLastTensor xl({2, 3, 12, 11}, 1), yl({2, 64, 12, 11}, 1);
  xl.fill_random(rng);
  grouped_conv(xl.view, w3.view(), nullptr, yl.view, ConvDesc::with_padding(1));
  EXPECT_EQ(last_conv_family(), "channels");
  std::vector<int64_t> ref_shape;
  const auto ref = ref::grouped_conv(xl.view, w3.view(), nullptr, ConvDesc::with_padding(1), &ref_shape);
  expect_view_matches(yl.view, ref, ref_shape, "channels-last 3 -> 64, 3x3");
}

}  // namespace
}  // namespace batchconv::test

// The channels family's kernels with tiles fitted to the row
// (*_channels_fitted: two channel vectors x 14, 11 or 7 columns where that
// divides the row, on reductions of 128 taps or more) through the public
// API, the chooser left to decide as applications call: grouped,
// batched-weight and broadcast-input convs on rows the fitted tiles divide
// and on near misses (127 taps, a row the default tile divides, 11 columns
// at stride 2, a vector of input channels, which the blocked kernels take),
// NCHW and channels-last, against the double-precision reference. Each case
// also checks which kernel ran, by the rule written out here (independent
// of the runtime's fitted_kernel_fits): the fitted kernel only on a variant
// with 32 registers (AVX-512), never on AVX2 or baseline ones.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "batchconv/tuning.h"
#include "conv_check.h"
#include "conv_chooser.h"
#include "layout_views.h"
#include "reference.h"

namespace batchconv::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class Op { Grouped, Batched, Broadcast };

const char* op_name(Op op) {
  return op == Op::Grouped ? "grouped_conv" : op == Op::Batched ? "batched_weight_conv" : "broadcast_input_conv";
}

struct Shape {
  Op op;
  int dims;
  int64_t B, N, groups, cin_g, cout_g, H, W, KH, KW;
  int stride, dilation, pad_begin, pad_end;  // along x (and y for 2-D)
  BroadcastLayout layout = BroadcastLayout::Concatenated;
};

std::string describe(const Shape& s) {
  return std::string(op_name(s.op)) + " " + std::to_string(s.dims) + "-D B=" + std::to_string(s.B) +
         " N=" + std::to_string(s.N) + " groups=" + std::to_string(s.groups) + " cin_g=" +
         std::to_string(s.cin_g) + " cout_g=" + std::to_string(s.cout_g) + " in=" + std::to_string(s.H) + "x" +
         std::to_string(s.W) + " k=" + std::to_string(s.KH) + "x" + std::to_string(s.KW) +
         " stride=" + std::to_string(s.stride) + " dil=" + std::to_string(s.dilation) +
         " pad=" + std::to_string(s.pad_begin) + "/" + std::to_string(s.pad_end) +
         (s.op == Op::Broadcast ? (s.layout == BroadcastLayout::Batched ? " batched" : " concat") : "");
}

struct Facts {
  int vec, registers;
};

Facts variant() {
  const batchconv_gen::TargetFacts f = batchconv_gen::facts_of_variant(selected_target());
  return {f.vector_floats, f.registers};
}

// The fitted tiles run where the blocked kernels do not (fewer input
// channels than a vector), the reduction has 128 taps or more, there are
// two channel vectors of outputs, the default tile (4 vectors x 6 columns
// with 32 registers) does not divide the row, and 14 or 11 (unit stride)
// or 7 columns do. The images here are small: every task is a whole row.
bool wants_fitted(const Shape& s, int64_t out_w) {
  const Facts f = variant();
  if (f.registers < 2 * 7 + 3 || s.cin_g >= f.vec) return false;
  if (s.cout_g < 2 * f.vec || s.cin_g * s.KH * s.KW < 128) return false;
  if (s.cout_g >= 4 * f.vec && out_w % 6 == 0) return false;
  return out_w % 14 == 0 || (s.stride == 1 && out_w % 11 == 0) || out_w % 7 == 0;
}

std::vector<int64_t> spatial(const Shape& s, std::vector<int64_t> lead, int64_t h, int64_t w) {
  if (s.dims == 2) lead.push_back(h);
  lead.push_back(w);
  return lead;
}

// Runs `s` with x and y channels-last or NCHW; returns whether the fitted
// kernel ran.
bool run_case(const Shape& s, bool x_last, bool y_last, bool bias_on, bool relu, const std::string& what) {
  auto rng = case_rng(what);
  ConvDesc d;
  d.stride = {s.stride, s.stride};
  d.dilation = {s.dilation, s.dilation};
  d.pad_begin = {s.pad_begin, s.pad_begin};
  d.pad_end = {s.pad_end, s.pad_end};
  d.groups = static_cast<int>(s.groups);
  d.activation = relu ? Activation::ReLU : Activation::None;
  const int64_t oh =
      s.dims == 2 ? conv_output_size(s.H, s.KH, s.stride, s.dilation, s.pad_begin, s.pad_end) : 1;
  const int64_t ow = conv_output_size(s.W, s.KW, s.stride, s.dilation, s.pad_begin, s.pad_end);
  const int64_t cin = s.groups * s.cin_g, cout = s.groups * s.cout_g;
  std::vector<int64_t> x_lead{s.N, cin}, y_lead{s.N, cout};
  int x_cdim = 1, y_cdim = 1;
  if (s.op == Op::Batched) {
    x_lead = {s.B, s.N, cin};
    y_lead = {s.B, s.N, cout};
    x_cdim = y_cdim = 2;
  } else if (s.op == Op::Broadcast) {
    const bool batched = s.layout == BroadcastLayout::Batched;
    y_lead = batched ? std::vector<int64_t>{s.B, s.N, cout} : std::vector<int64_t>{s.N, s.B * cout};
    y_cdim = batched ? 2 : 1;
  }
  ChannelsLastTensor x(spatial(s, x_lead, s.H, s.W), x_cdim), y(spatial(s, y_lead, oh, ow), y_cdim);
  if (!x_last) x.view = TensorView(x.data.data(), spatial(s, x_lead, s.H, s.W));
  if (!y_last) y.view = TensorView(y.data.data(), spatial(s, y_lead, oh, ow));
  x.fill_random(rng);
  std::vector<int64_t> w_lead{cout, s.cin_g};
  if (s.op != Op::Grouped) w_lead.insert(w_lead.begin(), s.B);
  Tensor w(spatial(s, w_lead, s.KH, s.KW), Layout::Contiguous);
  Tensor bias(s.op == Op::Grouped ? std::vector<int64_t>{cout} : std::vector<int64_t>{s.B, cout},
              Layout::Contiguous);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  scale_weights_to_taps(w.view(), s.cin_g * s.KH * s.KW);
  const TensorView* bv = bias_on ? bias.view_ptr() : nullptr;
  std::vector<int64_t> ref_shape;
  std::vector<double> ref;
  if (s.op == Op::Grouped) {
    grouped_conv(x.view, w.view(), bv, y.view, d);
    ref = ref::grouped_conv(x.view, w.view(), bv, d, &ref_shape);
  } else if (s.op == Op::Batched) {
    batched_weight_conv(x.view, w.view(), bv, y.view, d);
    ref = ref::batched_weight_conv(x.view, w.view(), bv, d, &ref_shape);
  } else {
    broadcast_input_conv(x.view, w.view(), bv, y.view, d, s.layout);
    ref = ref::broadcast_input_conv(x.view, w.view(), bv, d, s.layout, &ref_shape);
  }
  EXPECT_EQ(last_conv_family(), "channels") << what;
  // B = 1 batched-weight convs run the grouped kernels.
  const bool grouped_kernel = s.op == Op::Grouped || (s.op == Op::Batched && s.B == 1);
  const bool fitted = wants_fitted(s, ow);
  const bool blocked = s.cin_g >= variant().vec;
  const std::string kernel = std::string("batchconv_") + (grouped_kernel ? "grouped_conv" : op_name(s.op)) +
                             "_channels" + (blocked ? "_blocked" : fitted ? "_fitted" : "");
  EXPECT_EQ(last_conv_kernel(), kernel) << what;
  expect_view_matches(y.view, ref, ref_shape, what);
  return fitted;
}

// Rows the fitted tiles divide (2-D and 1-D, stride 1 and 2, dilation,
// asymmetric padding, groups) and near misses, for every op.
std::vector<Shape> shapes() {
  const int vec = variant().vec;
  const int64_t c2 = 2 * vec, c3 = 3 * vec, c4 = 4 * vec;
  using O = Op;
  return {
      // seed 2's rows: 3 -> 64, 7x7, 28x28 -> 22 columns (11-column tiles)
      {O::Grouped, 2, 1, 2, 1, 3, c4, 28, 28, 7, 7, 1, 1, 0, 0},
      // 28 columns (14), 2 channel vectors
      {O::Grouped, 2, 1, 2, 1, 3, c2, 9, 34, 7, 7, 1, 1, 0, 0},
      // 11 columns, 3 channel vectors, 5x5 taps of 8 channels, padding
      {O::Grouped, 2, 1, 1, 1, 8, c3, 6, 11, 5, 5, 1, 1, 2, 2},
      // stride 2, 7 columns (11 and 14 take unit stride only)
      {O::Grouped, 2, 1, 2, 1, 3, c4, 19, 19, 7, 7, 2, 1, 0, 0},
      // stride 2, 22 columns: no fitted tile (11 needs unit stride)
      {O::Grouped, 2, 1, 1, 1, 3, c4, 49, 49, 7, 7, 2, 1, 0, 1},
      // 24 columns, which the default tile divides: its own tile
      {O::Grouped, 2, 1, 1, 1, 3, c4, 8, 30, 7, 7, 1, 1, 0, 0},
      // 126 taps (14 channels, 3x3): too short a reduction
      {O::Grouped, 2, 1, 1, 1, 14, c2, 7, 14, 3, 3, 1, 1, 1, 1},
      // 135 taps, dilation 2, asymmetric padding, 14 columns
      {O::Grouped, 2, 1, 1, 1, 15, c2, 9, 16, 3, 3, 1, 2, 2, 0},
      // two groups, 7 columns
      {O::Grouped, 2, 1, 2, 2, 3, c2, 13, 13, 7, 7, 1, 1, 0, 0},
      // a vector of input channels: the blocked kernel
      {O::Grouped, 2, 1, 1, 1, vec, c2, 6, 16, 3, 3, 1, 1, 0, 0},
      // 1-D: 8 channels x 17 taps, 28 columns
      {O::Grouped, 1, 1, 3, 1, 8, c2, 1, 44, 1, 17, 1, 1, 0, 0},
      // batched weights: B = 3 and B = 1 (the grouped kernel), 22 columns
      {O::Batched, 2, 3, 2, 1, 3, c4, 28, 28, 7, 7, 1, 1, 0, 0},
      {O::Batched, 2, 1, 2, 1, 3, c4, 10, 28, 7, 7, 1, 1, 0, 0},
      // batched weights, 5x5 of 6 channels, 14 columns, two groups
      {O::Batched, 2, 2, 1, 2, 6, c2, 7, 16, 5, 5, 1, 1, 1, 1},
      // broadcast input, both y layouts, 14 and 11 columns
      {O::Broadcast, 2, 2, 2, 1, 6, c2, 7, 18, 5, 5, 1, 1, 0, 0, BroadcastLayout::Concatenated},
      {O::Broadcast, 2, 3, 1, 1, 3, c3, 17, 17, 7, 7, 1, 1, 0, 0, BroadcastLayout::Batched},
      // broadcast input, 75 taps: too short
      {O::Broadcast, 2, 2, 1, 1, 3, c2, 9, 18, 5, 5, 1, 1, 0, 0, BroadcastLayout::Batched},
  };
}

TEST(ChannelsFittedKernel, RowsTheFittedTilesDivideAndNearMisses) {
  int fitted = 0, cases = 0;
  const std::vector<Shape> all = shapes();
  for (size_t i = 0; i < all.size(); ++i) {
    for (int layouts = 0; layouts < 4; ++layouts) {
      // x NCHW, y NCHW, both channels-last, both NCHW (where the chooser
      // takes the channels family on NCHW tensors: 64 taps or more).
      const bool x_last = layouts == 1 || layouts == 2, y_last = layouts == 0 || layouts == 2;
      if (layouts == 3 && all[i].cin_g * all[i].KH * all[i].KW < 64) continue;
      const std::string what = describe(all[i]) + " x=" + (x_last ? "nhwc" : "nchw") +
                               " y=" + (y_last ? "nhwc" : "nchw");
      SCOPED_TRACE(what);
      fitted += run_case(all[i], x_last, y_last, (i + layouts) % 2 == 0, (i + layouts) % 3 == 0,
                         "fitted_" + std::to_string(i) + "_" + std::to_string(layouts))
                    ? 1
                    : 0;
      ++cases;
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // On AVX-512 most cases take the fitted kernel; AVX2 and baseline
  // variants have no registers for it.
  if (variant().registers >= 32) EXPECT_GE(fitted, cases / 2) << "too few cases took the fitted kernel";
  else EXPECT_EQ(fitted, 0);
}

// A tuned or forced family does not reach the fitted kernel by accident:
// the rows family forced runs the rows kernel on a fitted shape.
TEST(ChannelsFittedKernel, ForcedRowsFamilyIsNotFitted) {
  const Shape s = shapes().front();
  set_schedule_family(ScheduleFamily::Rows);
  ChannelsLastTensor x({s.N, s.cin_g, s.H, s.W}, 1);
  x.view = TensorView(x.data.data(), {s.N, s.cin_g, s.H, s.W});
  auto rng = case_rng("fitted_forced_rows");
  x.fill_random(rng);
  Tensor w({s.cout_g, s.cin_g, s.KH, s.KW}, Layout::Contiguous), y({s.N, s.cout_g, 22, 22}, Layout::Contiguous);
  w.fill_random(rng, kNaN);
  grouped_conv(x.view, w.view(), nullptr, y.view(), ConvDesc{});
  set_schedule_family(ScheduleFamily::Auto);
  EXPECT_EQ(last_conv_kernel(), "batchconv_grouped_conv");
  std::vector<int64_t> shape;
  expect_view_matches(y.view(), ref::grouped_conv(x.view, w.view(), nullptr, ConvDesc{}, &shape), shape, "rows");
}

}  // namespace
}  // namespace batchconv::test

// The channels family's blocked kernels (*_channels_blocked: x staged in
// blocks of a vector of channels, register tiles stored straight into y)
// through the public API: random grouped, batched-weight and
// broadcast-input convs, x and y each channels-last (mostly) or NCHW,
// forced to the channels family, against the double-precision reference.
// Each case also checks which kernel ran: the blocked one where a group has
// at least a vector of input channels, the unblocked one otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "batchconv/tuning.h"
#include "conv_check.h"
#include "conv_chooser.h"
#include "layout_views.h"
#include "random_geometry.h"
#include "reference.h"

namespace batchconv::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

int vector_floats() { return batchconv_gen::facts_of_variant(selected_target()).vector_floats; }

enum class Op { Grouped, Batched, Broadcast };

const char* op_name(Op op) {
  return op == Op::Grouped ? "grouped_conv" : op == Op::Batched ? "batched_weight_conv" : "broadcast_input_conv";
}

struct Case {
  Op op = Op::Grouped;
  int dims = 2;
  int64_t B = 1, N = 1, groups = 1, cin_g = 1, cout_g = 1, H = 1, W = 1, KH = 1, KW = 1;
  ConvDesc d;
  BroadcastLayout layout = BroadcastLayout::Concatenated;
  bool bias = false, x_last = true, y_last = true;
  std::string describe() const {
    return std::string(op_name(op)) + " " + std::to_string(dims) + "-D B=" + std::to_string(B) +
           " N=" + std::to_string(N) + " groups=" + std::to_string(groups) + " cin_g=" +
           std::to_string(cin_g) + " cout_g=" + std::to_string(cout_g) + " in=" + std::to_string(H) + "x" +
           std::to_string(W) + " k=" + std::to_string(KH) + "x" + std::to_string(KW) + " stride=" +
           std::to_string(d.stride[0]) + "," + std::to_string(d.stride[1]) + " dil=" +
           std::to_string(d.dilation[0]) + "," + std::to_string(d.dilation[1]) + " pad=" +
           std::to_string(d.pad_begin[0]) + "," + std::to_string(d.pad_begin[1]) + "/" +
           std::to_string(d.pad_end[0]) + "," + std::to_string(d.pad_end[1]) + (bias ? " bias" : "") +
           (d.activation == Activation::ReLU ? " relu" : "") + " x=" + (x_last ? "nhwc" : "nchw") +
           " y=" + (y_last ? "nhwc" : "nchw") +
           (op == Op::Broadcast ? (layout == BroadcastLayout::Batched ? " batched" : " concat") : "");
  }
  // The kernel the runtime must pick for this case.
  bool wants_blocked_kernel() const { return cin_g >= vector_floats(); }
};

Case draw_case(std::mt19937_64& rng, Op op, int i) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int vec = vector_floats();
  Case c;
  c.op = op;
  c.dims = pick(0, 4) == 0 ? 1 : 2;
  // Input channels per group: mostly a vector or more (whole and partial
  // blocks), sometimes fewer (the unblocked kernel runs).
  const std::vector<int> cin_gs{vec, vec, vec + 1, 2 * vec, 3 * vec - 5, vec / 2, 3};
  c.cin_g = cin_gs[static_cast<size_t>(i) % cin_gs.size()];
  // Output channels per group: whole tiles, partial ones, under a vector.
  const std::vector<int> cout_gs{2 * vec, 4 * vec, vec, 3 * vec, 2 * vec + 3, 5, 4 * vec + vec / 2};
  c.cout_g = cout_gs[static_cast<size_t>(pick(0, static_cast<int>(cout_gs.size()) - 1))];
  c.groups = pick(0, 3) == 0 ? 2 : 1;
  c.B = op == Op::Grouped ? 1 : pick(1, 3);
  c.N = pick(1, 2);
  draw_taps_and_geometry(pick, c.dims, &c.KH, &c.KW, &c.d);
  c.d.groups = static_cast<int>(c.groups);
  c.d.activation = pick(0, 1) ? Activation::ReLU : Activation::None;
  c.bias = pick(0, 1) == 1;
  const int64_t span_w = (c.KW - 1) * c.d.dilation[1] + 1, span_h = (c.KH - 1) * c.d.dilation[0] + 1;
  // Widths around the tile's 14 columns and whole multiples of it.
  const std::vector<int> widths{14, 28, 13, 17, 3, 1, 30, 9};
  c.W = std::max<int64_t>(span_w, widths[static_cast<size_t>(pick(0, 7))] + pick(0, 1) * (c.KW - 1));
  c.H = c.dims == 2 ? std::max<int64_t>(span_h, pick(1, 7)) : 1;
  c.x_last = pick(0, 2) != 0;
  c.y_last = pick(0, 2) != 0;
  c.layout = pick(0, 1) ? BroadcastLayout::Batched : BroadcastLayout::Concatenated;
  return c;
}

// An activation tensor, channels-last when `last`, else dense NCHW.
struct Act {
  ChannelsLastTensor t;
  Act(const std::vector<int64_t>& shape, int cdim, bool last) : t(shape, cdim) {
    if (!last) t.view = TensorView(t.data.data(), shape);
  }
};

std::vector<int64_t> spatial_shape(const Case& c, std::vector<int64_t> lead, int64_t h, int64_t w) {
  if (c.dims == 2) lead.push_back(h);
  lead.push_back(w);
  return lead;
}

void run_case(const Case& c, const std::string& what) {
  auto rng = case_rng(what);
  const int64_t cin = c.groups * c.cin_g, cout = c.groups * c.cout_g;
  const int64_t oh = c.dims == 2 ? conv_output_size(c.H, c.KH, c.d.stride[0], c.d.dilation[0],
                                                    c.d.pad_begin[0], c.d.pad_end[0])
                                 : 1;
  const int64_t ow =
      conv_output_size(c.W, c.KW, c.d.stride[1], c.d.dilation[1], c.d.pad_begin[1], c.d.pad_end[1]);
  std::vector<int64_t> x_lead{c.N, cin}, y_lead{c.N, cout};
  int x_cdim = 1, y_cdim = 1;
  if (c.op == Op::Batched) {
    x_lead = {c.B, c.N, cin};
    y_lead = {c.B, c.N, cout};
    x_cdim = y_cdim = 2;
  } else if (c.op == Op::Broadcast) {
    y_lead = c.layout == BroadcastLayout::Batched ? std::vector<int64_t>{c.B, c.N, cout}
                                                  : std::vector<int64_t>{c.N, c.B * cout};
    y_cdim = c.layout == BroadcastLayout::Batched ? 2 : 1;
  }
  Act x(spatial_shape(c, x_lead, c.H, c.W), x_cdim, c.x_last);
  Act y(spatial_shape(c, y_lead, oh, ow), y_cdim, c.y_last);
  x.t.fill_random(rng);
  std::vector<int64_t> w_lead{cout, c.cin_g};
  if (c.op != Op::Grouped) w_lead.insert(w_lead.begin(), c.B);
  Tensor w(spatial_shape(c, w_lead, c.KH, c.KW), Layout::Contiguous);
  Tensor bias(c.op == Op::Grouped ? std::vector<int64_t>{cout} : std::vector<int64_t>{c.B, cout},
              Layout::Contiguous);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  scale_weights_to_taps(w.view(), c.cin_g * c.KH * c.KW);  // reductions of up to 645 taps
  const TensorView* bv = c.bias ? bias.view_ptr() : nullptr;
  std::vector<int64_t> ref_shape;
  std::vector<double> ref;
  set_schedule_family(ScheduleFamily::Channels);
  try {
    if (c.op == Op::Grouped) {
      grouped_conv(x.t.view, w.view(), bv, y.t.view, c.d);
      ref = ref::grouped_conv(x.t.view, w.view(), bv, c.d, &ref_shape);
    } else if (c.op == Op::Batched) {
      batched_weight_conv(x.t.view, w.view(), bv, y.t.view, c.d);
      ref = ref::batched_weight_conv(x.t.view, w.view(), bv, c.d, &ref_shape);
    } else {
      broadcast_input_conv(x.t.view, w.view(), bv, y.t.view, c.d, c.layout);
      ref = ref::broadcast_input_conv(x.t.view, w.view(), bv, c.d, c.layout, &ref_shape);
    }
  } catch (const std::exception& e) {
    set_schedule_family(ScheduleFamily::Auto);
    FAIL() << what << ": threw on valid input: " << e.what();
  }
  set_schedule_family(ScheduleFamily::Auto);
  EXPECT_EQ(last_conv_family(), "channels") << what;
  // B = 1 batched-weight convs run the grouped kernels.
  const bool grouped_kernel = c.op == Op::Grouped || (c.op == Op::Batched && c.B == 1);
  const std::string kernel = std::string("batchconv_") + (grouped_kernel ? "grouped_conv" : op_name(c.op)) +
                             "_channels" + (c.wants_blocked_kernel() ? "_blocked" : "");
  // Unblocked calls may take the kernel with tiles fitted to the row
  // (channels_fitted_kernel_test checks which do).
  if (c.wants_blocked_kernel() || last_conv_kernel() != kernel + "_fitted") EXPECT_EQ(last_conv_kernel(), kernel) << what;
  expect_view_matches(y.t.view, ref, ref_shape, what);
}

// `cases` random cases; at least a third must take the blocked kernel.
void sweep(Op op, uint64_t seed, int cases) {
  std::mt19937_64 rng(seed);
  int blocked = 0;
  for (int i = 0; i < cases; ++i) {
    const Case c = draw_case(rng, op, i);
    SCOPED_TRACE(c.describe());
    run_case(c, std::string(op_name(op)) + "_" + std::to_string(i));
    if (::testing::Test::HasFatalFailure()) return;
    blocked += c.wants_blocked_kernel() ? 1 : 0;
  }
  EXPECT_GE(blocked, cases / 3) << "too few cases took the blocked kernel";
}

TEST(ChannelsBlockedKernel, GroupedSweep) { sweep(Op::Grouped, 20261203, 140); }
TEST(ChannelsBlockedKernel, BatchedWeightSweep) { sweep(Op::Batched, 20261204, 100); }
TEST(ChannelsBlockedKernel, BroadcastInputSweep) { sweep(Op::Broadcast, 20261205, 80); }

// Packed weights reused across calls and updated; the chooser left to
// decide (Auto), as an application would run it.
TEST(ChannelsBlockedKernel, PackedWeightsAndChooser) {
  auto rng = case_rng("channels_blocked_packed");
  const int vec = vector_floats();
  const int64_t N = 2, C = 2 * vec, K = 4 * vec, H = 9, W = 28;
  ChannelsLastTensor x({N, C, H, W}, 1), y({N, K, H, W}, 1);
  x.fill_random(rng);
  Tensor w({K, C, 3, 3}, Layout::Contiguous), w2({K, C, 3, 3}, Layout::Contiguous);
  w.fill_random(rng, kNaN);
  w2.fill_random(rng, kNaN);
  ConvDesc d = ConvDesc::with_padding(1);
  PackedWeights packed(w.view(), 1, false);
  std::vector<int64_t> shape;
  for (int call = 0; call < 2; ++call) {
    grouped_conv(x.view, packed, nullptr, y.view, d);
    EXPECT_EQ(last_conv_kernel(), "batchconv_grouped_conv_channels_blocked") << "call " << call;
    expect_view_matches(y.view, ref::grouped_conv(x.view, w.view(), nullptr, d, &shape), shape,
                        "call " + std::to_string(call));
  }
  packed.update(w2.view());
  grouped_conv(x.view, packed, nullptr, y.view, d);
  expect_view_matches(y.view, ref::grouped_conv(x.view, w2.view(), nullptr, d, &shape), shape, "updated");
}

// NCHW x and y with a long reduction, the chooser left to decide, as most
// applications call: the blocked kernel transposes x into its blocks and
// scatters its tiles into y. Large images (several tasks per image) and x
// as a strided view (every other image) too.
TEST(ChannelsBlockedKernel, NchwWithTheChooser) {
  auto rng = case_rng("channels_blocked_nchw");
  const int vec = vector_floats();
  struct Shape {
    bool batched;
    int64_t B, N, C, K, H, W;
    bool strided_x;
  };
  const Shape shapes[] = {
      {false, 1, 5, 4 * vec, 4 * vec, 64, 64, false},
      {false, 1, 3, 2 * vec, 3 * vec, 17, 30, true},
      {true, 3, 5, 4 * vec, 4 * vec, 64, 64, false},
      {true, 2, 3, vec, 2 * vec + 5, 11, 14, true},
  };
  for (const Shape& s : shapes) {
    const std::string what = std::string(s.batched ? "batched" : "grouped") + " N=" + std::to_string(s.N) +
                             " C=" + std::to_string(s.C) + " K=" + std::to_string(s.K) + " " +
                             std::to_string(s.H) + "x" + std::to_string(s.W) + (s.strided_x ? " strided x" : "");
    std::vector<int64_t> xs{s.N, s.C, s.H, s.W}, ys{s.N, s.K, s.H, s.W}, ws{s.K, s.C, 3, 3}, bs{s.K};
    if (s.batched) {
      xs.insert(xs.begin(), s.B);
      ys.insert(ys.begin(), s.B);
      ws.insert(ws.begin(), s.B);
      bs.insert(bs.begin(), s.B);
    }
    const int n_axis = s.batched ? 1 : 0;
    std::vector<int64_t> xs_alloc = xs;
    if (s.strided_x) xs_alloc[n_axis] *= 2;
    Tensor x_alloc(xs_alloc, Layout::Contiguous), y(ys, Layout::Contiguous), w(ws, Layout::Contiguous),
        bias(bs, Layout::Contiguous);
    x_alloc.fill_random(rng, kNaN);
    w.fill_random(rng, kNaN);
    bias.fill_random(rng, kNaN);
    // Weights of about 1 / sqrt(taps), as initialised networks have: sums of
    // 576 products then stay near 1, where float32 rounding is within the
    // sweeps' tolerance.
    const TensorView wv = w.view();
    for (int64_t i = 0; i < wv.numel(); ++i) wv.data[i] *= 0.05f;
    TensorView x = x_alloc.view();
    if (s.strided_x) {
      std::vector<int64_t> strides;
      int64_t step = 1;
      for (int i = static_cast<int>(xs_alloc.size()) - 1; i >= 0; --i) {
        strides.insert(strides.begin(), step);
        step *= xs_alloc[i];
      }
      strides[n_axis] *= 2;
      x = TensorView(x.data, xs, strides);
    }
    ConvDesc d = ConvDesc::with_padding(1);
    d.activation = Activation::ReLU;
    std::vector<int64_t> shape;
    std::vector<double> ref;
    if (s.batched) {
      batched_weight_conv(x, w.view(), bias.view_ptr(), y.view(), d);
      ref = ref::batched_weight_conv(x, w.view(), bias.view_ptr(), d, &shape);
    } else {
      grouped_conv(x, w.view(), bias.view_ptr(), y.view(), d);
      ref = ref::grouped_conv(x, w.view(), bias.view_ptr(), d, &shape);
    }
    EXPECT_EQ(last_conv_family(), "channels") << what;
    EXPECT_EQ(last_conv_kernel(), std::string("batchconv_") + (s.batched ? "batched_weight_conv" : "grouped_conv") +
                                      "_channels_blocked")
        << what;
    expect_view_matches(y.view(), ref, shape, what);
  }
}

}  // namespace
}  // namespace batchconv::test

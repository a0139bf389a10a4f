// The lanes schedule family's AOT kernels through the public API: random
// grouped and batched-weight convs with few output channels per group
// (depthwise with multiplier, ResNeXt-style groups), x and y channels-last
// or NCHW each, forced to the lanes
// family, against the double-precision reference; PackedWeights reused;
// the chooser's decision between lanes and rows; and a lanes kernel
// registered as a tuned kernel (tuning.h), run only where lanes fits.
#include <gtest/gtest.h>

#include <algorithm>
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

// The runtime's own lanes kernel for grouped_conv, registered below as a
// tuned kernel under another name.
extern "C" int batchconv_grouped_conv_lanes(halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias,
                                            int32_t stride_x, int32_t stride_y, int32_t dilation_x,
                                            int32_t dilation_y, int32_t pad_x, int32_t pad_y, bool relu,
                                            halide_buffer_t* y);

namespace batchconv::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

int vector_floats() { return batchconv_gen::facts_of_variant(selected_target()).vector_floats; }

// One random lanes case: shape, geometry and layouts drawn from `rng`.
struct LanesCase {
  bool batched = false;
  int dims = 2;
  int64_t B = 1, N = 1, groups = 1, cin_g = 1, cout_g = 1, H = 1, W = 1, KH = 1, KW = 1;
  ConvDesc d;
  bool bias = false, x_last = true, y_last = true;
  std::string describe() const {
    return std::string(batched ? "batched" : "grouped") + " " + std::to_string(dims) + "-D B=" +
           std::to_string(B) + " N=" + std::to_string(N) + " groups=" + std::to_string(groups) +
           " cin_g=" + std::to_string(cin_g) + " cout_g=" + std::to_string(cout_g) + " in=" +
           std::to_string(H) + "x" + std::to_string(W) + " k=" + std::to_string(KH) + "x" +
           std::to_string(KW) + " stride=" + std::to_string(d.stride[0]) + "," + std::to_string(d.stride[1]) +
           " dil=" + std::to_string(d.dilation[0]) + "," + std::to_string(d.dilation[1]) + " pad=" +
           std::to_string(d.pad_begin[0]) + "," + std::to_string(d.pad_begin[1]) + "/" +
           std::to_string(d.pad_end[0]) + "," + std::to_string(d.pad_end[1]) + (bias ? " bias" : "") +
           (d.activation == Activation::ReLU ? " relu" : "") + " x=" + (x_last ? "nhwc" : "nchw") +
           " y=" + (y_last ? "nhwc" : "nchw");
  }
};

LanesCase draw_case(std::mt19937_64& rng, bool batched, int i) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int vec = vector_floats();
  LanesCase c;
  c.batched = batched;
  c.dims = pick(0, 4) == 0 ? 1 : 2;
  // The kernels' Cout_g: the divisors of a vector below it.
  const std::vector<int> cout_gs = batchconv_gen::lanes_specialized_cout_g(
      batchconv_gen::facts_of_variant(selected_target()));
  c.cout_g = cout_gs[static_cast<size_t>(i) % cout_gs.size()];
  c.cin_g = pick(0, 2) == 0 ? 1 : pick(1, 5);
  const int64_t min_groups = (vec + c.cout_g - 1) / c.cout_g;
  c.groups = min_groups + pick(0, 9);
  c.B = batched ? pick(1, 3) : 1;
  c.N = pick(1, 3);
  draw_taps_and_geometry(pick, c.dims, &c.KH, &c.KW, &c.d);
  c.d.groups = static_cast<int>(c.groups);
  c.d.activation = pick(0, 1) ? Activation::ReLU : Activation::None;
  c.bias = pick(0, 1) == 1;
  const int64_t span_w = (c.KW - 1) * c.d.dilation[1] + 1, span_h = (c.KH - 1) * c.d.dilation[0] + 1;
  c.W = std::max<int64_t>(span_w, pick(1, 19));
  c.H = c.dims == 2 ? std::max<int64_t>(span_h, pick(1, 11)) : 1;
  c.x_last = pick(0, 3) != 0;
  c.y_last = pick(0, 3) != 0;
  return c;
}

// Activation shape (lead..., C, [H,] W).
std::vector<int64_t> act_shape(const LanesCase& c, int64_t channels, int64_t h, int64_t w) {
  std::vector<int64_t> s;
  if (c.batched) s.push_back(c.B);
  s.push_back(c.N);
  s.push_back(channels);
  if (c.dims == 2) s.push_back(h);
  s.push_back(w);
  return s;
}

// x or y: channels-last when `last`, else a dense NCHW tensor.
struct Activation4 {
  ChannelsLastTensor last;
  bool is_last;
  Activation4(const std::vector<int64_t>& shape, int cdim, bool channels_last)
      : last(shape, cdim), is_last(channels_last) {
    if (!channels_last) last.view = TensorView(last.data.data(), shape);
  }
};

void run_case(const LanesCase& c, const std::string& what) {
  auto rng = case_rng(what);
  const int cdim = c.batched ? 2 : 1;
  const int64_t cin = c.groups * c.cin_g, cout = c.groups * c.cout_g;
  const int64_t oh = c.dims == 2 ? conv_output_size(c.H, c.KH, c.d.stride[0], c.d.dilation[0],
                                                    c.d.pad_begin[0], c.d.pad_end[0])
                                 : 1;
  const int64_t ow =
      conv_output_size(c.W, c.KW, c.d.stride[1], c.d.dilation[1], c.d.pad_begin[1], c.d.pad_end[1]);
  Activation4 x(act_shape(c, cin, c.H, c.W), cdim, c.x_last), y(act_shape(c, cout, oh, ow), cdim, c.y_last);
  x.last.fill_random(rng);
  std::vector<int64_t> wshape;
  if (c.batched) wshape.push_back(c.B);
  wshape.push_back(cout);
  wshape.push_back(c.cin_g);
  if (c.dims == 2) wshape.push_back(c.KH);
  wshape.push_back(c.KW);
  Tensor w(wshape, Layout::Contiguous);
  Tensor bias(c.batched ? std::vector<int64_t>{c.B, cout} : std::vector<int64_t>{cout}, Layout::Contiguous);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  const TensorView* bv = c.bias ? bias.view_ptr() : nullptr;
  std::vector<int64_t> ref_shape;
  std::vector<double> ref;
  set_schedule_family(ScheduleFamily::Lanes);
  try {
    if (c.batched) {
      batched_weight_conv(x.last.view, w.view(), bv, y.last.view, c.d);
      ref = ref::batched_weight_conv(x.last.view, w.view(), bv, c.d, &ref_shape);
    } else {
      grouped_conv(x.last.view, w.view(), bv, y.last.view, c.d);
      ref = ref::grouped_conv(x.last.view, w.view(), bv, c.d, &ref_shape);
    }
  } catch (const std::exception& e) {
    set_schedule_family(ScheduleFamily::Auto);
    FAIL() << what << ": threw on valid input: " << e.what();
  }
  set_schedule_family(ScheduleFamily::Auto);
  EXPECT_EQ(last_conv_family(), "lanes") << what;
  expect_view_matches(y.last.view, ref, ref_shape, what);
}

TEST(LanesFamily, GroupedSweep) {
  std::mt19937_64 rng(20261201);
  for (int i = 0; i < 160; ++i) {
    const LanesCase c = draw_case(rng, false, i);
    SCOPED_TRACE(c.describe());
    run_case(c, "grouped_" + std::to_string(i));
    if (HasFatalFailure()) return;
  }
}

TEST(LanesFamily, BatchedWeightSweep) {
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 120; ++i) {
    const LanesCase c = draw_case(rng, true, i);
    SCOPED_TRACE(c.describe());
    run_case(c, "batched_" + std::to_string(i));
    if (HasFatalFailure()) return;
  }
}

// Packed weights reused across calls and updated, channels-last x and y.
TEST(LanesFamily, PackedWeightsReused) {
  auto rng = case_rng("lanes_packed");
  const int64_t N = 2, G = 32, H = 9, W = 12;
  ChannelsLastTensor x({N, G, H, W}, 1), y({N, 2 * G, H, W}, 1);
  x.fill_random(rng);
  Tensor w({2 * G, 1, 3, 3}, Layout::Contiguous), w2({2 * G, 1, 3, 3}, Layout::Contiguous);
  w.fill_random(rng, kNaN);
  w2.fill_random(rng, kNaN);
  ConvDesc d = ConvDesc::with_padding(1);
  d.groups = static_cast<int>(G);
  PackedWeights packed(w.view(), d.groups, false);
  set_schedule_family(ScheduleFamily::Lanes);
  std::vector<int64_t> shape;
  for (int call = 0; call < 2; ++call) {
    grouped_conv(x.view, packed, nullptr, y.view, d);
    EXPECT_EQ(last_conv_family(), "lanes");
    expect_view_matches(y.view, ref::grouped_conv(x.view, w.view(), nullptr, d, &shape), shape,
                        "call " + std::to_string(call));
  }
  packed.update(w2.view());
  grouped_conv(x.view, packed, nullptr, y.view, d);
  expect_view_matches(y.view, ref::grouped_conv(x.view, w2.view(), nullptr, d, &shape), shape, "updated");
  set_schedule_family(ScheduleFamily::Auto);
}

// The chooser: lanes for channels-last convs with few channels per group,
// rows for the same convs on NCHW tensors and where lanes does not fit.
TEST(LanesFamily, ChooserPicksLanesOnlyWhereItPays) {
  auto rng = case_rng("lanes_chooser");
  const int vec = vector_floats();
  struct Pick {
    int64_t groups, cin_g, cout_g;
    bool last;
    const char* want;
  };
  const Pick picks[] = {
      {2 * vec, 1, 1, true, "lanes"},   // depthwise, channels-last
      {vec, 4, 4, true, "lanes"},       // ResNeXt-style groups, channels-last
      {2 * vec, 1, 1, false, "rows"},   // the same on NCHW tensors
      {vec, 4, 4, false, "rows"},
      {vec / 2 - 1, 1, 1, true, "rows"},  // fewer than a vector of output channels
      {vec, 1, 3, true, "rows"},          // a Cout_g that does not divide the vector
  };
  for (const Pick& p : picks) {
    const std::string what = "groups=" + std::to_string(p.groups) + " cout_g=" + std::to_string(p.cout_g) +
                             (p.last ? " nhwc" : " nchw");
    ChannelsLastTensor x({2, p.groups * p.cin_g, 8, 8}, 1), y({2, p.groups * p.cout_g, 8, 8}, 1);
    if (!p.last) {
      x.view = TensorView(x.data.data(), x.view.shape);
      y.view = TensorView(y.data.data(), y.view.shape);
    }
    x.fill_random(rng);
    Tensor w({p.groups * p.cout_g, p.cin_g, 3, 3}, Layout::Contiguous);
    w.fill_random(rng, kNaN);
    ConvDesc d = ConvDesc::with_padding(1);
    d.groups = static_cast<int>(p.groups);
    grouped_conv(x.view, w.view(), nullptr, y.view, d);
    EXPECT_EQ(last_conv_family(), p.want) << what;
    std::vector<int64_t> shape;
    expect_view_matches(y.view, ref::grouped_conv(x.view, w.view(), nullptr, d, &shape), shape, what);
  }
}

// A tuning record of the lanes family (what a tuning database built with a
// lanes point registers): the call of its shape runs it, through the lanes
// path and its weight packing; a record whose shape the lanes kernels do not
// fit leaves that call on the rows family's default kernel; an unknown
// family is refused with a message naming the families.
TEST(LanesFamily, TunedLanesKernelRunsOnlyWhereLanesFits) {
  auto rng = case_rng("lanes_tuned");
  const int vec = vector_floats();
  struct Case {
    int64_t groups, cout_g;
    const char* family;  // that runs
    bool tuned;          // whether the tuned kernel runs
  };
  const Case cases[] = {
      {2 * vec, 1, "lanes", true},  // depthwise (x and y channels-last in every case)
      {vec, 2, "lanes", true},      // channel multiplier 2
      {vec, 3, "rows", false},      // Cout_g 3: no lanes kernel
  };
  for (const Case& c : cases) {
    const std::string what = "groups=" + std::to_string(c.groups) + " cout_g=" + std::to_string(c.cout_g);
    ChannelsLastTensor x({2, c.groups, 7, 10}, 1), y({2, c.groups * c.cout_g, 7, 10}, 1);
    x.fill_random(rng);
    Tensor w({c.groups * c.cout_g, 1, 3, 3}, Layout::Contiguous), bias({c.groups * c.cout_g}, Layout::Contiguous);
    w.fill_random(rng, kNaN);
    bias.fill_random(rng, kNaN);
    ConvDesc d = ConvDesc::with_padding(1);
    d.groups = static_cast<int>(c.groups);
    clear_tuned_conv_kernels();
    grouped_conv(x.view, w.view(), bias.view_ptr(), y.view, d);  // the shape key of this call
    TunedConvKernel k;
    k.op = "grouped_conv";
    k.shape_key = last_conv_shape_key();
    k.generator = "grouped_conv";
    k.family = "lanes";
    k.fn = batchconv_grouped_conv_lanes;
    k.name = "tuned_lanes_test_kernel";
    ASSERT_TRUE(register_tuned_conv_kernel(k)) << what;
    std::fill(y.data.begin(), y.data.end(), kNaN);  // every output written again
    grouped_conv(x.view, w.view(), bias.view_ptr(), y.view, d);
    EXPECT_EQ(last_conv_family(), c.family) << what;
    EXPECT_EQ(last_conv_kernel() == k.name, c.tuned) << what << ": ran " << last_conv_kernel();
    std::vector<int64_t> shape;
    expect_view_matches(y.view, ref::grouped_conv(x.view, w.view(), bias.view_ptr(), d, &shape), shape, what);
  }
  TunedConvKernel bad;
  bad.op = bad.generator = "grouped_conv";
  bad.family = "blocked";
  bad.fn = batchconv_grouped_conv_lanes;
  bad.name = "bad";
  bad.shape_key = "b=1";
  try {
    register_tuned_conv_kernel(bad);
    ADD_FAILURE() << "family 'blocked' was registered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not rows, channels or lanes"), std::string::npos) << e.what();
  }
  clear_tuned_conv_kernels();
}

}  // namespace
}  // namespace batchconv::test

// The kernels' scratch memory stays bounded: each parallel task copies a
// padded input chunk sized to L2 (conv_schedule_cpu.h), so the heap used by a
// call beyond its inputs and output is a few hundred KB per thread whatever
// the image width, channel count or N. Measured with the bench's counting
// malloc (tools/batchconv-bench/alloc_counter.h), which sees halide_malloc.
// A schedule that sized a task by whole rows of a wide, many-channel image
// (19 MB per task for the first case) fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "alloc_counter.h"
#include "batchconv/batchconv.h"

namespace {

using batchconv::TensorView;

std::vector<float> random_data(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& f : v) f = u(rng);
  return v;
}

size_t count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t s : shape) n *= size_t(s);
  return n;
}

// Peak heap bytes above the live bytes before the call, for the second call
// (the first creates the thread pool and other one-time state).
template <typename F>
int64_t extra_bytes(F call) {
  call();
  bcbench::mem::trim();
  const int64_t before = bcbench::mem::live_bytes();
  bcbench::mem::reset_peak();
  call();
  return bcbench::mem::peak_bytes() - before;
}

// Sampled check of a 2-D grouped conv (stride 1, dilation 1, symmetric pad):
// 3000 random outputs recomputed in double, max |y - ref| / max(1, |ref|).
double sampled_error_2d(const std::vector<float>& x, const std::vector<int64_t>& xs,
                        const std::vector<float>& w, const std::vector<int64_t>& ws, int groups,
                        int pad, const std::vector<float>& y, const std::vector<int64_t>& ys) {
  std::mt19937 rng(7);
  const int64_t cin_g = ws[1], cout_g = ws[0] / groups, kh = ws[2], kw = ws[3];
  double worst = 0, scale = 1;
  for (int s = 0; s < 3000; s++) {
    const int64_t n = rng() % ys[0], co = rng() % ys[1], oy = rng() % ys[2], ox = rng() % ys[3];
    const int64_t g = co / cout_g;
    double acc = 0;
    for (int64_t ci = 0; ci < cin_g; ci++)
      for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
          const int64_t iy = oy + ky - pad, ix = ox + kx - pad;
          if (iy < 0 || ix < 0 || iy >= xs[2] || ix >= xs[3]) continue;
          acc += double(x[((n * xs[1] + g * cin_g + ci) * xs[2] + iy) * xs[3] + ix]) *
                 w[((co * cin_g + ci) * kh + ky) * kw + kx];
        }
    const double got = y[((n * ys[1] + co) * ys[2] + oy) * ys[3] + ox];
    worst = std::max(worst, std::abs(got - acc));
    scale = std::max(scale, std::abs(acc));
  }
  return worst / scale;
}

// Per-thread allowance: a 256 KB (2-D) or 512 KB (1-D) padded chunk, the
// accumulator tile and Halide's bookkeeping.
int64_t allowance() { return int64_t(batchconv::num_threads()) * (1 << 20) + (256 << 10); }

TEST(ScratchMemory, CountingMallocIsActive) { ASSERT_TRUE(bcbench::mem::counting_active()); }

TEST(ScratchMemory, WideManyChannelImage) {
  // 256 -> 64 channels, 3x3 pad 1, 12 x 1024: one row of its padded input is 1 MB.
  std::vector<int64_t> xs{1, 256, 12, 1024}, ws{64, 256, 3, 3};
  auto x = random_data(count(xs), 1), w = random_data(count(ws), 2);
  const batchconv::ConvDesc d = batchconv::ConvDesc::with_padding(1);
  TensorView xv(x.data(), xs), wv(w.data(), ws);
  auto ys = batchconv::grouped_conv_output_shape(xv, wv, d);
  std::vector<float> y(count(ys));
  // Both schedule families; the channels family also packs the weights
  // (O(weights), once per call without PackedWeights).
  for (auto family : {batchconv::ScheduleFamily::Rows, batchconv::ScheduleFamily::Channels}) {
    batchconv::set_schedule_family(family);
    std::fill(y.begin(), y.end(), 0.0f);
    const int64_t extra =
        extra_bytes([&] { batchconv::grouped_conv(xv, wv, nullptr, TensorView(y.data(), ys), d); });
    const bool channels = family == batchconv::ScheduleFamily::Channels;
    const int64_t weights = channels ? int64_t(count(ws) * sizeof(float)) : 0;
    EXPECT_LE(extra, allowance() + weights)
        << "scratch of a 256-channel, 1024-wide conv, " << batchconv::last_conv_family() << " family";
    // Column-chunked tasks give the same numbers.
    EXPECT_LT(sampled_error_2d(x, xs, w, ws, 1, 1, y, ys), 1e-5) << batchconv::last_conv_family();
  }
  batchconv::set_schedule_family(batchconv::ScheduleFamily::Auto);
}

TEST(ScratchMemory, DepthwiseLargePlanes) {
  std::vector<int64_t> xs{2, 32, 256, 256}, ws{32, 1, 3, 3};
  auto x = random_data(count(xs), 3), w = random_data(count(ws), 4);
  batchconv::ConvDesc d = batchconv::ConvDesc::with_padding(1);
  d.groups = 32;
  TensorView xv(x.data(), xs), wv(w.data(), ws);
  auto ys = batchconv::grouped_conv_output_shape(xv, wv, d);
  std::vector<float> y(count(ys));
  const int64_t extra = extra_bytes([&] { batchconv::grouped_conv(xv, wv, nullptr, TensorView(y.data(), ys), d); });
  EXPECT_LE(extra, allowance()) << "scratch of a depthwise conv on 256x256 planes";
  EXPECT_LT(sampled_error_2d(x, xs, w, ws, 32, 1, y, ys), 1e-5);
}

TEST(ScratchMemory, BroadcastConv1dIndependentOfN) {
  // Seed 1's shape at lengths 8x apart stays under the same N-independent
  // bound. (The two peaks themselves differ by how many threads' chunks
  // happen to be live at once, so they are not compared with each other.)
  for (int64_t length : {int64_t(100000), int64_t(800000)}) {
    std::vector<int64_t> xs{1, 16, length}, ws{4, 16, 16, 1};
    auto x = random_data(count(xs), 5), w = random_data(count(ws), 6);
    const batchconv::ConvDesc d;
    TensorView xv(x.data(), xs), wv(w.data(), ws);
    auto ys = batchconv::broadcast_input_conv_output_shape(xv, wv, d, batchconv::BroadcastLayout::Concatenated);
    std::vector<float> y(count(ys));
    const int64_t extra = extra_bytes([&] {
      batchconv::broadcast_input_conv(xv, wv, nullptr, TensorView(y.data(), ys), d,
                                      batchconv::BroadcastLayout::Concatenated);
    });
    EXPECT_LE(extra, allowance()) << "N = " << length;
  }
}

}  // namespace

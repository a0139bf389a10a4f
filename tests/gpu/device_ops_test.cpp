// The GPU kernels (gpu schedule family) against the double-precision
// reference, through one device library: compiled twice, for OpenCL
// (run on PoCL in CI) and for CUDA (run by scripts/device-check.sh on a GPU;
// every case skips, saying why, where no CUDA driver or device is present).
// Each op: 120 random cases over 1-D/2-D, groups 1 / G / depthwise (with
// multiplier), B = 1, stride, dilation, asymmetric padding, odd and size-1
// sizes, channel counts around the 8-channel thread tile, bias and ReLU,
// and every seventh case at least one block tile large (the shifted-tile
// kernels).
// BATCHCONV_TEST_SEED reproduces a run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "batchconv/device.h"
#include "reference.h"

#if defined(BATCHCONV_TEST_CUDA)
namespace api = batchconv::cuda;
#else
namespace api = batchconv::opencl;
#endif

namespace batchconv::test {
namespace {

constexpr int kCases = 120;
constexpr double kTolerance = 1e-4;

unsigned seed() {
  static unsigned s = [] {
    const char* env = std::getenv("BATCHCONV_TEST_SEED");
    unsigned v = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : std::random_device{}();
    std::printf("gpu device test: seed %u (BATCHCONV_TEST_SEED reproduces)\n", v);
    return v;
  }();
  return s;
}

std::vector<float> random_data(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = u(rng);
  return v;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + ")";
}

enum class Op { Grouped, Batched, Broadcast };

struct ConvCase {
  std::vector<int64_t> x, w, bias;
  ConvDesc d;
  BroadcastLayout layout = BroadcastLayout::Batched;
  bool has_bias = false;
  std::string text;
};

// A random valid conv case of `op`.
ConvCase draw_conv(std::mt19937& rng, Op op, int i) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    ConvCase c;
    const bool one_d = i % 4 == 3;
    const int mode = i % 3;  // 0: groups 1, 1: G groups, 2: depthwise
    const int64_t B = (i % 5 == 0) ? 1 : pick(1, 3);
    const int64_t N = pick(1, 2);
    int64_t G = 1, cin_g = pick(1, 5), cout_g = pick(1, 10);
    if (mode == 1) G = pick(2, 3);
    if (mode == 2) {
      G = pick(2, 6);
      cin_g = 1;
      cout_g = pick(1, 2);
    }
    // Every seventh case is at least one block tile of the default gpu point
    // (32 x 16 outputs, 128 in 1-D, 8 channels) at unit stride, so the
    // shifted-tile kernels run (conv_schedule_gpu.h); the rest are small.
    const bool large = i % 7 == 3;  // cycles through the modes and 1-D
    if (large && mode != 2) cout_g = pick(8, 12);
    const int64_t H = one_d ? 1 : (large ? pick(18, 40) : pick(1, 11));
    const int64_t W = large ? pick(one_d ? 130 : 34, one_d ? 300 : 70) : pick(1, one_d ? 40 : 13);
    const int64_t KH = one_d ? 1 : pick(1, 3), KW = pick(1, 3);
    c.d.groups = static_cast<int>(G);
    const int sp = one_d ? 1 : 2;
    for (int a = 0; a < sp; ++a) {
      c.d.stride[a] = large ? 1 : pick(1, 3);
      c.d.dilation[a] = pick(1, 2);
      c.d.pad_begin[a] = pick(0, 2);
      c.d.pad_end[a] = pick(0, 2);
    }
    const int64_t ext[2] = {one_d ? W : H, W}, k[2] = {one_d ? KW : KH, KW};
    bool ok = true;
    for (int a = 0; a < sp; ++a) {
      const int64_t span = ext[a] + c.d.pad_begin[a] + c.d.pad_end[a] - (k[a] - 1) * c.d.dilation[a];
      ok = ok && span >= 1;
    }
    if (!ok) continue;
    c.d.activation = pick(0, 1) ? Activation::ReLU : Activation::None;
    c.has_bias = pick(0, 1) == 1;
    const int64_t cin = G * cin_g, cout = G * cout_g;
    std::vector<int64_t> sx = one_d ? std::vector<int64_t>{W} : std::vector<int64_t>{H, W};
    std::vector<int64_t> sk = one_d ? std::vector<int64_t>{KW} : std::vector<int64_t>{KH, KW};
    auto with = [](std::vector<int64_t> head, const std::vector<int64_t>& tail) {
      head.insert(head.end(), tail.begin(), tail.end());
      return head;
    };
    if (op == Op::Grouped) {
      c.x = with({B * N, cin}, sx);
      c.w = with({cout, cin_g}, sk);
      c.bias = {cout};
    } else {
      c.x = op == Op::Batched ? with({B, N, cin}, sx) : with({N, cin}, sx);
      c.w = with({B, cout, cin_g}, sk);
      c.bias = {B, cout};
      if (op == Op::Broadcast && pick(0, 1)) c.layout = BroadcastLayout::Concatenated;
    }
    c.text = "x " + shape_str(c.x) + " w " + shape_str(c.w) + " groups " + std::to_string(G) + " stride " +
             std::to_string(c.d.stride[0]) + "," + std::to_string(c.d.stride[1]) + " dilation " +
             std::to_string(c.d.dilation[0]) + "," + std::to_string(c.d.dilation[1]) + " pad " +
             std::to_string(c.d.pad_begin[0]) + "/" + std::to_string(c.d.pad_end[0]) + "," +
             std::to_string(c.d.pad_begin[1]) + "/" + std::to_string(c.d.pad_end[1]) +
             (c.has_bias ? " bias" : "") + (c.d.activation == Activation::ReLU ? " relu" : "") +
             (c.layout == BroadcastLayout::Concatenated ? " concat" : "");
    return c;
  }
}

#define SKIP_WITHOUT_DEVICE()                                                              \
  do {                                                                                     \
    const std::string why = api::unavailable_reason();                                     \
    if (!why.empty()) GTEST_SKIP() << "skipped: " << why;                                  \
  } while (0)

void run_conv_sweep(Op op) {
  std::mt19937 rng(seed() + static_cast<unsigned>(op) * 7919u);
  int checked = 0;
  for (int i = 0; i < kCases; ++i) {
    ConvCase c = draw_conv(rng, op, i);
    std::vector<float> x = random_data(rng, numel(c.x)), w = random_data(rng, numel(c.w)),
                       b = random_data(rng, numel(c.bias));
    TensorView xv(x.data(), c.x), wv(w.data(), c.w), bv(b.data(), c.bias);
    const TensorView* bp = c.has_bias ? &bv : nullptr;
    std::vector<int64_t> ys;
    std::vector<double> ref;
    if (op == Op::Grouped) {
      ref = ref::grouped_conv(xv, wv, bp, c.d, &ys);
    } else if (op == Op::Batched) {
      ref = ref::batched_weight_conv(xv, wv, bp, c.d, &ys);
    } else {
      ref = ref::broadcast_input_conv(xv, wv, bp, c.d, c.layout, &ys);
    }
    std::vector<float> y(static_cast<size_t>(numel(ys)), -7.0f);
    TensorView yv(y.data(), ys);
    DeviceContext ctx;
    try {
      if (op == Op::Grouped) {
        api::grouped_conv(xv, wv, bp, yv, c.d, ctx);
      } else if (op == Op::Batched) {
        api::batched_weight_conv(xv, wv, bp, yv, c.d, ctx);
      } else {
        api::broadcast_input_conv(xv, wv, bp, yv, c.d, c.layout, ctx);
      }
    } catch (const std::exception& e) {
      FAIL() << "case " << i << ": " << c.text << ": " << e.what();
    }
    const double err = ref::max_rel_error(yv, ref);
    EXPECT_LT(err, kTolerance) << "case " << i << ": " << c.text;
    ++checked;
  }
  EXPECT_EQ(checked, kCases);
}

TEST(GpuKernels, GroupedConvSweep) {
  SKIP_WITHOUT_DEVICE();
  run_conv_sweep(Op::Grouped);
}
TEST(GpuKernels, BatchedWeightConvSweep) {
  SKIP_WITHOUT_DEVICE();
  run_conv_sweep(Op::Batched);
}
TEST(GpuKernels, BroadcastInputConvSweep) {
  SKIP_WITHOUT_DEVICE();
  run_conv_sweep(Op::Broadcast);
}

TEST(GpuKernels, BatchedLinearSweep) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(seed() + 17u);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < kCases; ++i) {
    const int64_t B = i % 5 == 0 ? 1 : pick(1, 4), N = pick(1, 13), K = pick(1, 40), M = pick(1, 70);
    const bool shared = i % 3 == 0, has_bias = pick(0, 1) == 1;
    const Activation act = pick(0, 1) ? Activation::ReLU : Activation::None;
    std::vector<int64_t> xs = shared ? std::vector<int64_t>{N, K} : std::vector<int64_t>{B, N, K};
    std::vector<float> x = random_data(rng, numel(xs)), w = random_data(rng, B * K * M), b = random_data(rng, B * M);
    TensorView xv(x.data(), xs), wv(w.data(), {B, K, M}), bv(b.data(), {B, M});
    std::vector<int64_t> ys;
    const std::vector<double> ref = ref::batched_linear(xv, wv, has_bias ? &bv : nullptr, act, &ys);
    std::vector<float> y(static_cast<size_t>(numel(ys)), -7.0f);
    TensorView yv(y.data(), ys);
    api::batched_linear(xv, wv, has_bias ? &bv : nullptr, yv, act, DeviceContext{});
    EXPECT_LT(ref::max_rel_error(yv, ref), kTolerance)
        << "case " << i << ": x " << shape_str(xs) << " w " << shape_str({B, K, M}) << (has_bias ? " bias" : "");
  }
}

// Strided host views (seed 2's (G*n, C, H, W) viewed as (G, n, C, H, W),
// a sliced channel range) go through the same kernels.
TEST(GpuKernels, StridedHostViews) {
  SKIP_WITHOUT_DEVICE();
  std::mt19937 rng(seed() + 23u);
  const int64_t G = 3, n = 2, C = 4, H = 7, W = 9, M = 5;
  std::vector<float> x = random_data(rng, G * n * C * H * W), w = random_data(rng, G * M * C * 9);
  TensorView xv(x.data(), {G, n, C, H, W});
  TensorView wv(w.data(), {G, M, C, 3, 3});
  ConvDesc d = ConvDesc::with_padding(1);
  std::vector<int64_t> ys;
  const std::vector<double> ref = ref::batched_weight_conv(xv, wv, nullptr, d, &ys);
  // y written into every other channel plane of a wider buffer.
  std::vector<float> big(static_cast<size_t>(G * n * 2 * M * H * W), 0.0f);
  TensorView yv(big.data(), ys, {n * 2 * M * H * W, 2 * M * H * W, 2 * H * W, W, 1});
  api::batched_weight_conv(xv, wv, nullptr, yv, d, DeviceContext{});
  EXPECT_LT(ref::max_rel_error(yv, ref), kTolerance);
}

// Bad input on host views: the CPU ops' validation, before anything runs.
TEST(GpuBadInput, ShapesAreValidatedFirst) {
  std::vector<float> x(2 * 4 * 5 * 5), w(6 * 2 * 3 * 3), y(2 * 6 * 3 * 3, 42.0f);
  ConvDesc d;
  d.groups = 3;  // 3 does not divide 4 input channels
  try {
    api::grouped_conv(TensorView(x.data(), {2, 4, 5, 5}), TensorView(w.data(), {6, 2, 3, 3}), nullptr,
                      TensorView(y.data(), {2, 6, 3, 3}), d, DeviceContext{});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("group"), std::string::npos) << e.what();
  }
  EXPECT_EQ(y[0], 42.0f);
  d.groups = 2;
  try {
    api::grouped_conv(TensorView(x.data(), {2, 4, 5, 5}), TensorView(w.data(), {6, 2, 3, 3}), nullptr,
                      TensorView(y.data(), {2, 6, 4, 3}), d, DeviceContext{});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("y has shape (2, 6, 4, 3) but expected (2, 6, 3, 3)"), std::string::npos)
        << e.what();
  }
  std::vector<float> lx(2 * 3), lw(2 * 3 * 4), ly(2 * 2 * 4);
  try {
    api::batched_linear(TensorView(lx.data(), {2, 3}), TensorView(lw.data(), {2, 4, 4}), nullptr,
                        TensorView(ly.data(), {2, 2, 4}), Activation::None, DeviceContext{});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x has shape"), std::string::npos) << e.what();
  }
}

// Where the device or its driver is missing (CUDA on this CI machine;
// OpenCL in the ctest entry that hides every ICD): a clear Error, and the
// CPU kernels only when the caller asked.
TEST(GpuNoDevice, ClearErrorAndFallbackOnlyWhenAsked) {
  if (api::available()) GTEST_SKIP() << "skipped: a device is present here";
  const std::string why = api::unavailable_reason();
  std::printf("unavailable: %s\n", why.c_str());
  EXPECT_NE(why.find("no "), std::string::npos) << why;
  std::vector<float> x(1 * 2 * 4 * 4, 1.0f), w(3 * 2 * 1 * 1, 0.5f), y(1 * 3 * 4 * 4, -1.0f);
  TensorView xv(x.data(), {1, 2, 4, 4}), wv(w.data(), {3, 2, 1, 1}), yv(y.data(), {1, 3, 4, 4});
  try {
    api::grouped_conv(xv, wv, nullptr, yv, ConvDesc{}, DeviceContext{});
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu_fallback"), std::string::npos) << e.what();
  }
  EXPECT_EQ(y[0], -1.0f);
  DeviceContext fallback;
  fallback.cpu_fallback = true;
  api::grouped_conv(xv, wv, nullptr, yv, ConvDesc{}, fallback);
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  // Device memory never falls back.
  DeviceTensor dx(1, {1, 2, 4, 4}), dw(2, {3, 2, 1, 1}), dy(3, {1, 3, 4, 4});
  EXPECT_THROW(api::grouped_conv(dx, dw, nullptr, dy, ConvDesc{}, fallback), Error);
}

}  // namespace
}  // namespace batchconv::test

// layout-pairs: what each side's layout costs one grouped conv. Times
// batchconv::grouped_conv with x and y each NCHW or channels-last (NHWC),
// the four pairs interleaved (the order rotated every round) on the same
// reused buffers, and beside them reorder() of x from NCHW to channels-last
// and back, the copies a caller would add to run the channels-last pair on
// NCHW tensors. Every pair's output is compared with the NCHW pair's, and
// that one with a double-precision loop on the first and last image; exit
// status 1 when either differs by more than 1e-4.
//
//   layout-pairs [--conv=N,Cin,Cout,H,W,K,pad] [--rounds=R] [--threads=T]
//
// Default shape: B = 1 of the seed workloads (128 images, 64 -> 64, 56x56,
// 3x3, pad 1). Medians and minimums in ms; peak FMA is measured in the run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"
#include "machine_limits.h"
#include "parallel.h"
#include "timing.h"

namespace {

struct Shape {
  int64_t n = 128, cin = 64, cout = 64, h = 56, w = 56, k = 3, pad = 1;
};

bool parse_shape(const std::string& text, Shape* s) {
  std::vector<int64_t> v;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long x = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || x < 0 || x > (1 << 20)) return false;
    v.push_back(x);
  }
  if (v.size() != 7) return false;
  *s = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  return s->n > 0 && s->cin > 0 && s->cout > 0 && s->k > 0 && s->h + 2 * s->pad >= s->k &&
         s->w + 2 * s->pad >= s->k;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  Shape s;
  int rounds = 7, threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--conv=", 0) == 0 && parse_shape(a.substr(7), &s)) continue;
    if (a.rfind("--rounds=", 0) == 0 && std::atoi(a.c_str() + 9) > 0) {
      rounds = std::atoi(a.c_str() + 9);
      continue;
    }
    if (a.rfind("--threads=", 0) == 0 && std::atoi(a.c_str() + 10) > 0) {
      threads = std::atoi(a.c_str() + 10);
      continue;
    }
    std::fprintf(stderr,
                 "layout-pairs: %s: expected --conv=N,Cin,Cout,H,W,K,pad (kernel inside the padded "
                 "image), --rounds=R or --threads=T (R, T >= 1)\n",
                 a.c_str());
    return a == "--help" ? 0 : 2;
  }
  bcbench::set_bench_threads(threads);
  const int t = bcbench::bench_threads();
  batchconv::set_num_threads(t);

  const int64_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
  const std::vector<int64_t> xs{s.n, s.cin, s.h, s.w}, ys{s.n, s.cout, oh, ow};
  std::vector<float> x(s.n * s.cin * s.h * s.w), xl(x.size()), w(s.cout * s.cin * s.k * s.k), bias(s.cout);
  std::vector<std::vector<float>> y(4, std::vector<float>(s.n * s.cout * oh * ow, 0.0f));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : x) v = u(rng);
  const float scale = 1.0f / std::sqrt(float(s.cin * s.k * s.k));
  for (float& v : w) v = u(rng) * scale;
  for (float& v : bias) v = u(rng);

  const batchconv::TensorView x_nchw(x.data(), xs), x_nhwc = batchconv::channels_last(xl.data(), xs);
  batchconv::reorder(x_nchw, x_nhwc);  // the same values in both layouts
  const batchconv::TensorView wv(w.data(), {s.cout, s.cin, s.k, s.k}), bv(bias.data(), {s.cout});
  batchconv::ConvDesc d;
  d.pad_begin = {static_cast<int>(s.pad), static_cast<int>(s.pad)};
  d.pad_end = d.pad_begin;
  struct Pair {
    const char* name;
    batchconv::TensorView x, y;
  };
  std::vector<Pair> pairs{{"x NCHW, y NCHW", x_nchw, batchconv::TensorView(y[0].data(), ys)},
                          {"x NCHW, y NHWC", x_nchw, batchconv::channels_last(y[1].data(), ys)},
                          {"x NHWC, y NCHW", x_nhwc, batchconv::TensorView(y[2].data(), ys)},
                          {"x NHWC, y NHWC", x_nhwc, batchconv::channels_last(y[3].data(), ys)}};
  const size_t columns = pairs.size() + 2;  // + the two reorders of x
  std::vector<std::vector<double>> times(columns);
  for (int r = 0; r <= rounds; ++r) {  // round 0 warms up (first touches, packed weights)
    for (size_t j = 0; j < columns; ++j) {
      const size_t c = (j + r) % columns;
      const auto t0 = std::chrono::steady_clock::now();
      if (c < pairs.size()) batchconv::grouped_conv(pairs[c].x, wv, &bv, pairs[c].y, d);
      else if (c == pairs.size()) batchconv::reorder(x_nchw, x_nhwc);
      else batchconv::reorder(x_nhwc, x_nchw);
      if (r > 0) times[c].push_back(ms_since(t0));
    }
  }

  const bcbench::MachineLimits m = bcbench::measure_machine_limits(t, true);
  const double gflop = 2.0 * s.n * s.cout * oh * ow * s.cin * s.k * s.k * 1e-9;
  std::printf("machine: %s, %d threads; peak FMA %.1f GFLOP/s, copy bandwidth %.1f GB/s (measured now)\n",
              bcbench::cpu_description().c_str(), t, m.fma_gflops, m.copy_gbs);
  std::printf("grouped_conv x (%lld, %lld, %lld, %lld), %lldx%lld kernel, pad %lld: %.2f GFLOP; %d rounds, "
              "interleaved\n\n",
              (long long)s.n, (long long)s.cin, (long long)s.h, (long long)s.w, (long long)s.k,
              (long long)s.k, (long long)s.pad, gflop, rounds);
  std::printf("| call | median ms | min ms | of peak FMA | max diff vs x NCHW, y NCHW |\n|---|---:|---:|---:|---:|\n");
  int status = 0;
  for (size_t c = 0; c < columns; ++c) {
    const double med = bcbench::median(times[c]);
    const double mn = *std::min_element(times[c].begin(), times[c].end());
    if (c < pairs.size()) {
      // Compare values at the same (n, c, h, w) whatever the layout.
      double diff = 0;
      const batchconv::TensorView& a = pairs[0].y;
      const batchconv::TensorView& b = pairs[c].y;
      for (int64_t i0 = 0; i0 < ys[0]; ++i0)
        for (int64_t i1 = 0; i1 < ys[1]; ++i1)
          for (int64_t i2 = 0; i2 < ys[2]; ++i2)
            for (int64_t i3 = 0; i3 < ys[3]; ++i3) {
              const int64_t ia = i0 * a.stride(0) + i1 * a.stride(1) + i2 * a.stride(2) + i3 * a.stride(3);
              const int64_t ib = i0 * b.stride(0) + i1 * b.stride(1) + i2 * b.stride(2) + i3 * b.stride(3);
              diff = std::max(diff, double(std::abs(a.data[ia] - b.data[ib])));
            }
      if (diff > 1e-4) status = 1;
      std::printf("| %s | %.2f | %.2f | %.0f%% | %.1e |\n", pairs[c].name, med, mn,
                  100 * gflop / (med * 1e-3) / m.fma_gflops, diff);
    } else {
      std::printf("| reorder x %s | %.2f | %.2f | | |\n", c == pairs.size() ? "NCHW -> NHWC" : "NHWC -> NCHW",
                  med, mn);
    }
  }
  // The NCHW pair against a double-precision loop on the first and last image.
  double ref_err = 0;
  for (int64_t i0 : {int64_t{0}, s.n - 1})
    for (int64_t co = 0; co < s.cout; ++co)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = bias[co];
          for (int64_t ci = 0; ci < s.cin; ++ci)
            for (int64_t ky = 0; ky < s.k; ++ky)
              for (int64_t kx = 0; kx < s.k; ++kx) {
                const int64_t iy = oy + ky - s.pad, ix = ox + kx - s.pad;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                acc += double(x[((i0 * s.cin + ci) * s.h + iy) * s.w + ix]) *
                       w[((co * s.cin + ci) * s.k + ky) * s.k + kx];
              }
          const double got = y[0][((i0 * s.cout + co) * oh + oy) * ow + ox];
          ref_err = std::max(ref_err, std::abs(got - acc) / std::max(1.0, std::abs(acc)));
        }
  std::printf("\nx NCHW, y NCHW against a double-precision loop (images 0 and N-1): max rel error %.1e\n", ref_err);
  if (ref_err > 1e-4) status = 1;
  if (status) std::fprintf(stderr, "layout-pairs: an output differs from the reference or the NCHW pair's by more than 1e-4\n");
  return status;
}

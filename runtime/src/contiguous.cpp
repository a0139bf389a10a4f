#include "contiguous.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <xmmintrin.h>

#include "HalideRuntime.h"

namespace batchconv::detail {

namespace {

std::vector<float>& scratch(Scratch which) {
  thread_local std::vector<float> buffers[3];
  return buffers[static_cast<int>(which)];
}

std::vector<int64_t> strides_of(const TensorView& t) {
  std::vector<int64_t> s(t.shape.size());
  for (int i = 0; i < t.rank(); ++i) s[i] = t.stride(i);
  return s;
}

}  // namespace

namespace {

// One copy_strided call: the (a, b) plane of every index of the `outer` axes.
struct StridedCopy {
  const float* src;
  const std::vector<int64_t>& ss;
  float* dst;
  const std::vector<int64_t>& ds;
  const std::vector<int64_t>& shape;
  std::vector<int> outer;
  int a, b;
  bool tiled;
  int64_t planes, planes_per_task;
};

// The (a, b) plane at s0 / d0. A layout change walks it in 32 x 32 tiles so
// both sides stay in cache, transposing 4 x 4 blocks in SSE registers where
// src is dense along a and dst along b (NHWC <-> NCHW); else one axis, b
// innermost.
void copy_plane(const StridedCopy& c, const float* s0, float* d0) {
  const int64_t sa = c.ss[c.a], sb = c.ss[c.b], da = c.ds[c.a], db = c.ds[c.b];
  const int64_t nb = c.shape[c.b];
  if (!c.tiled) {
    for (int64_t j = 0; j < nb; ++j) d0[j * db] = s0[j * sb];
    return;
  }
  constexpr int64_t kTile = 32;
  const int64_t na = c.shape[c.a];
  const bool sse = sa == 1 && db == 1;
  for (int64_t a0 = 0; a0 < na; a0 += kTile) {
    for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
      const int64_t a1 = std::min(na, a0 + kTile), b1 = std::min(nb, b0 + kTile);
      int64_t i = a0;
      if (sse) {
        for (; i + 4 <= a1; i += 4) {
          int64_t j = b0;
          for (; j + 4 <= b1; j += 4) {
            const float* sp = s0 + i + j * sb;
            __m128 r0 = _mm_loadu_ps(sp), r1 = _mm_loadu_ps(sp + sb);
            __m128 r2 = _mm_loadu_ps(sp + 2 * sb), r3 = _mm_loadu_ps(sp + 3 * sb);
            _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
            float* dp = d0 + i * da + j;
            _mm_storeu_ps(dp, r0);
            _mm_storeu_ps(dp + da, r1);
            _mm_storeu_ps(dp + 2 * da, r2);
            _mm_storeu_ps(dp + 3 * da, r3);
          }
          for (; j < b1; ++j)
            for (int64_t k = 0; k < 4; ++k) d0[(i + k) * da + j] = s0[(i + k) + j * sb];
        }
      }
      for (; i < a1; ++i) {
        const float* sp = s0 + i * sa;
        float* dp = d0 + i * da;
        for (int64_t j = b0; j < b1; ++j) dp[j * db] = sp[j * sb];
      }
    }
  }
}

// Planes [first, first + count) of the flattened outer axes (first fastest).
void copy_planes(const StridedCopy& c, int64_t first, int64_t count) {
  const size_t n = c.outer.size();
  std::vector<int64_t> idx(n, 0);
  int64_t rest = first;
  for (size_t k = 0; k < n; ++k) {
    idx[k] = rest % c.shape[c.outer[k]];
    rest /= c.shape[c.outer[k]];
  }
  for (int64_t p = 0; p < count; ++p) {
    const float* s0 = c.src;
    float* d0 = c.dst;
    for (size_t k = 0; k < n; ++k) {
      s0 += idx[k] * c.ss[c.outer[k]];
      d0 += idx[k] * c.ds[c.outer[k]];
    }
    copy_plane(c, s0, d0);
    for (size_t k = 0; k < n; ++k) {
      if (++idx[k] < c.shape[c.outer[k]]) break;
      idx[k] = 0;
    }
  }
}

int copy_task(void*, int task, uint8_t* closure) {
  const auto& c = *reinterpret_cast<const StridedCopy*>(closure);
  const int64_t first = task * c.planes_per_task;
  copy_planes(c, first, std::min(c.planes_per_task, c.planes - first));
  return 0;
}

}  // namespace

void copy_strided(const float* src, const std::vector<int64_t>& ss_in, float* dst,
                  const std::vector<int64_t>& ds_in, const std::vector<int64_t>& shape_in) {
  int64_t total = 1;
  for (int64_t n : shape_in) total *= n;
  if (total <= 0) return;
  // Drop axes of extent 1 and merge neighbours that are one run in both src
  // and dst (weights (Cout, Cin, KH, KW) packed with Cout innermost are a 2-D
  // transpose of Cout x Cin*KH*KW), so the tiles below see long axes.
  std::vector<int64_t> shape, ss, ds;
  for (size_t i = 0; i < shape_in.size(); ++i) {
    if (shape_in[i] == 1) continue;
    if (!shape.empty() && ss.back() == ss_in[i] * shape_in[i] && ds.back() == ds_in[i] * shape_in[i]) {
      shape.back() *= shape_in[i];
      ss.back() = ss_in[i];
      ds.back() = ds_in[i];
      continue;
    }
    shape.push_back(shape_in[i]);
    ss.push_back(ss_in[i]);
    ds.push_back(ds_in[i]);
  }
  const int r = static_cast<int>(shape.size());
  // a: src's densest axis, b: dst's densest axis (among axes longer than 1).
  auto densest = [&](const std::vector<int64_t>& st) {
    int best = -1;
    for (int i = 0; i < r; ++i) {
      if (shape[i] > 1 && (best < 0 || std::abs(st[i]) < std::abs(st[best]))) best = i;
    }
    return best;
  };
  const int b = densest(ds);
  int a = densest(ss);
  if (b < 0) {  // one element
    *dst = *src;
    return;
  }
  const bool tiled = a >= 0 && a != b;
  if (!tiled) a = b;
  StridedCopy c{src, ss, dst, ds, shape, {}, a, b, tiled, 1, 1};
  for (int i = 0; i < r; ++i) {
    if (i != a && i != b) {
      c.outer.push_back(i);
      c.planes *= shape[i];
    }
  }
  // Large copies run as tasks of whole planes on the kernels' thread pool
  // (Halide's, or the caller's where it installed its own do_par_for).
  constexpr int64_t kParallelMin = int64_t{1} << 18;  // elements
  const int64_t tasks = total < kParallelMin ? 1 : std::min<int64_t>(c.planes, 64);
  c.planes_per_task = (c.planes + tasks - 1) / tasks;
  const int64_t count = (c.planes + c.planes_per_task - 1) / c.planes_per_task;
  if (count <= 1) {
    copy_planes(c, 0, c.planes);
    return;
  }
  halide_do_par_for(nullptr, copy_task, 0, static_cast<int>(count), reinterpret_cast<uint8_t*>(&c));
}

TensorView unit_stride_view(const TensorView& t, Scratch which, bool copy_in) {
  if (t.rank() == 0 || t.stride(t.rank() - 1) == 1) return t;
  std::vector<float>& buf = scratch(which);
  buf.resize(static_cast<size_t>(t.numel()));
  TensorView packed(buf.data(), t.shape);
  if (copy_in) copy_strided(t.data, strides_of(t), packed.data, strides_of(packed), t.shape);
  return packed;
}

TensorView channels_last_scratch(const TensorView& t, int channel_dim, Scratch which, bool copy_in) {
  std::vector<float>& buf = scratch(which);
  buf.resize(static_cast<size_t>(t.numel()));
  std::vector<int64_t> strides(t.shape.size());
  int64_t step = 1;
  strides[channel_dim] = 1;
  step = t.shape[channel_dim];
  for (int i = t.rank() - 1; i >= 0; --i) {
    if (i == channel_dim) continue;
    strides[i] = step;
    step *= t.shape[i];
  }
  TensorView packed(buf.data(), t.shape, strides);
  if (copy_in) copy_strided(t.data, strides_of(t), packed.data, strides, t.shape);
  return packed;
}

void scatter(const TensorView& src, const TensorView& dst) {
  if (src.data == dst.data) return;
  copy_strided(src.data, strides_of(src), dst.data, strides_of(dst), dst.shape);
}

}  // namespace batchconv::detail

#include "contiguous.h"

#include <algorithm>
#include <cstdlib>

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

void copy_strided(const float* src, const std::vector<int64_t>& ss, float* dst,
                  const std::vector<int64_t>& ds, const std::vector<int64_t>& shape) {
  const int r = static_cast<int>(shape.size());
  int64_t total = 1;
  for (int64_t n : shape) total *= n;
  if (total <= 0) return;
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
  // When the densest axes differ (a layout change such as NHWC to NCHW),
  // walk the (a, b) plane in tiles so both sides stay in cache; else one
  // axis, b innermost.
  const bool tiled = a >= 0 && a != b;
  if (!tiled) a = b;
  constexpr int64_t kTile = 32;
  std::vector<int> outer;
  for (int i = 0; i < r; ++i)
    if (i != a && i != b) outer.push_back(i);
  std::vector<int64_t> idx(outer.size(), 0);
  for (;;) {
    const float* s0 = src;
    float* d0 = dst;
    for (size_t k = 0; k < outer.size(); ++k) {
      s0 += idx[k] * ss[outer[k]];
      d0 += idx[k] * ds[outer[k]];
    }
    if (tiled) {
      const int64_t na = shape[a], nb = shape[b];
      for (int64_t a0 = 0; a0 < na; a0 += kTile) {
        for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
          const int64_t a1 = std::min(na, a0 + kTile), b1 = std::min(nb, b0 + kTile);
          for (int64_t i = a0; i < a1; ++i) {
            const float* sp = s0 + i * ss[a];
            float* dp = d0 + i * ds[a];
            for (int64_t j = b0; j < b1; ++j) dp[j * ds[b]] = sp[j * ss[b]];
          }
        }
      }
    } else {
      for (int64_t j = 0; j < shape[b]; ++j) d0[j * ds[b]] = s0[j * ss[b]];
    }
    size_t k = 0;
    for (; k < outer.size(); ++k) {
      if (++idx[k] < shape[outer[k]]) break;
      idx[k] = 0;
    }
    if (k == outer.size()) break;
  }
}

TensorView unit_stride_view(const TensorView& t, Scratch which, bool copy_in) {
  if (t.rank() == 0 || t.stride(t.rank() - 1) == 1) return t;
  std::vector<float>& buf = scratch(which);
  buf.resize(static_cast<size_t>(t.numel()));
  TensorView packed(buf.data(), t.shape);
  if (copy_in) copy_strided(t.data, strides_of(t), packed.data, strides_of(packed), t.shape);
  return packed;
}

void scatter(const TensorView& src, const TensorView& dst) {
  if (src.data == dst.data) return;
  copy_strided(src.data, strides_of(src), dst.data, strides_of(dst), dst.shape);
}

}  // namespace batchconv::detail

// Test helpers for tensors in any layout: channels-last buffers, and a
// check of a strided view against reference values in row-major order.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"
#include "test_support.h"

namespace batchconv::test {

// Calls f(index) for every row-major index of `shape`.
template <typename F>
void for_each_index(const std::vector<int64_t>& shape, F&& f) {
  std::vector<int64_t> idx(shape.size(), 0);
  const int64_t n = product(shape);
  for (int64_t i = 0; i < n; ++i) {
    f(idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Scales weights to about 1 / sqrt(taps), as initialised networks have, so
// that long reductions stay near 1, where float32 rounding is within the
// sweeps' tolerance (with unit weights, 645-tap sums alone passed it on some
// random draws: 1.4e-5).
inline void scale_weights_to_taps(const TensorView& w, int64_t taps) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(taps));
  for (int64_t i = 0; i < w.numel(); ++i) w.data[i] *= scale;
}

// A dense buffer holding `shape` channels-last (channel axis `cdim`).
struct ChannelsLastTensor {
  std::vector<float> data;
  TensorView view;
  ChannelsLastTensor(const std::vector<int64_t>& shape, int cdim) {
    data.assign(static_cast<size_t>(product(shape)), 0.0f);
    view = channels_last(data.data(), shape, cdim);
  }
  void fill_random(std::mt19937_64& rng) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : data) v = u(rng);
  }
};

// Expects view `y` (any strides) to match the reference values (row-major in
// `shape`) to the sweeps' tolerance.
inline void expect_view_matches(const TensorView& y, const std::vector<double>& ref,
                         const std::vector<int64_t>& shape, const std::string& what) {
  ASSERT_EQ(shape_str(y.shape), shape_str(shape)) << what;
  int64_t i = 0, bad = 0;
  double worst = 0;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * y.stride(static_cast<int>(d));
    const double got = y.data[off], want = ref[static_cast<size_t>(i++)];
    const double err = std::abs(got - want) / (1.0 + std::abs(want));
    if (!(err <= 1e-5)) ++bad;
    if (err > worst || err != err) worst = err;
  });
  EXPECT_EQ(bad, 0) << what << ": " << bad << " elements off, worst relative error " << worst;
}

}  // namespace batchconv::test

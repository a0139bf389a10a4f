// Internal: which form of a conv kernel runs a planned call.
//
// The default kernels vectorise along the output row, so a row of W'
// columns costs ceil(W' / 16) vectors (AVX-512) whatever W' is. The
// channels-in-vector kernels (generators/conv_schedule_cpu_cv.h) vectorise
// over 64 output channels instead and waste no lane on a row, but read their
// result back transposed, O(output). They win where rows fill vectors poorly
// and each output has a long reduction to amortise that: seed 2 (22 columns,
// 3x7x7 taps) ran 1.75x faster in a JIT comparison; seed 3 (27 taps) ran 2x
// slower, and 56-column rows (87.5% filled) gained nothing.
#pragma once

#include "conv_plan.h"

namespace batchconv::detail {

inline bool use_channels_in_vector(const ConvPlan& p) {
  constexpr int64_t kVector = 16, kMinChannels = 64, kMinTaps = 64;
  const int64_t width = p.out.back();
  int64_t taps = p.cin_g;
  for (int64_t k : p.kernel) taps *= k;
  const int64_t vectors = (width + kVector - 1) / kVector;
  const bool poor_fill = width * 10 < vectors * kVector * 8;  // under 80% of the lanes used
  return p.cout_g >= kMinChannels && width >= kVector && taps >= kMinTaps && poor_fill;
}

}  // namespace batchconv::detail

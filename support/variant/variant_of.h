// Which of the kernels' multi-target variants a feature set that Halide's
// wrappers ask about belongs to, for the hooks that force a variant
// (tests/kernels/target_variants_test.cpp, the Python package's test hook).
#pragma once

#include <HalideRuntime.h>

#include <cstdint>

namespace batchconv::support {

enum class Variant { Avx512 = 0, Avx2 = 1, Baseline = 2 };

inline bool has_feature(int count, const uint64_t* f, int bit) {
  return bit / 64 < count && ((f[bit / 64] >> (bit % 64)) & 1);
}

inline Variant variant_of(int count, const uint64_t* f) {
  const bool avx512 = has_feature(count, f, halide_target_feature_avx512) ||
                      has_feature(count, f, halide_target_feature_avx512_skylake) ||
                      has_feature(count, f, halide_target_feature_avx512_knl) ||
                      has_feature(count, f, halide_target_feature_avx512_cannonlake) ||
                      has_feature(count, f, halide_target_feature_avx512_sapphirerapids);
  if (avx512) return Variant::Avx512;
  const bool simd = has_feature(count, f, halide_target_feature_sse41) ||
                    has_feature(count, f, halide_target_feature_avx) ||
                    has_feature(count, f, halide_target_feature_avx2) ||
                    has_feature(count, f, halide_target_feature_fma) ||
                    has_feature(count, f, halide_target_feature_f16c);
  return simd ? Variant::Avx2 : Variant::Baseline;
}

}  // namespace batchconv::support

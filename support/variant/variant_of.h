// Which of the kernels' multi-target variants a feature set that Halide's
// wrappers ask about belongs to, for the hooks that force a variant
// (tests/kernels/target_variants_test.cpp, the Python package's test hook).
#pragma once

#include <HalideRuntime.h>

#include <cstdint>
#include <string>

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

inline const char* variant_name(Variant v) {
  return v == Variant::Avx512 ? "avx512" : v == Variant::Avx2 ? "avx2" : "baseline";
}

// Whether this CPU can run variant v's code.
inline bool cpu_supports(Variant v) {
  __builtin_cpu_init();
  if (v == Variant::Baseline) return true;
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (v == Variant::Avx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

// Forcing a variant: restrict_to(v) installs a can-use-target-features hook
// that refuses the feature sets of better variants than v; Halide's
// multi-target wrappers then run the best one accepted (they cache that
// choice at their first call, so restrict before any call).
struct VariantForcing {
  Variant allowed = Variant::Avx512;
  int accepted_mask = 0;  // bit v: a feature set of Variant v was accepted
  int hook_calls = 0;
};
inline VariantForcing& variant_forcing() {
  static VariantForcing f;
  return f;
}
inline int forcing_hook(int count, const uint64_t* f) {
  VariantForcing& s = variant_forcing();
  ++s.hook_calls;
  const Variant v = variant_of(count, f);
  if (static_cast<int>(v) < static_cast<int>(s.allowed)) return 0;
  if (!halide_default_can_use_target_features(count, f)) return 0;
  s.accepted_mask |= 1 << static_cast<int>(v);
  return 1;
}
inline void restrict_to(Variant v) {
  variant_forcing().allowed = v;
  halide_set_custom_can_use_target_features(forcing_hook);
}
// The best variant the hook accepted since accepted_mask was last cleared:
// the one the wrappers run (the baseline needs no features, so it is what
// runs when nothing better was accepted).
inline Variant accepted_variant() {
  const int m = variant_forcing().accepted_mask;
  return m & 1 ? Variant::Avx512 : m & 2 ? Variant::Avx2 : Variant::Baseline;
}
// "avx512" / "avx2" / "baseline" from BATCHCONV_TEST_VARIANT's spelling.
inline Variant parse_variant(const char* s) {
  const std::string v(s);
  return v == "avx2" ? Variant::Avx2 : v == "baseline" ? Variant::Baseline : Variant::Avx512;
}

}  // namespace batchconv::support

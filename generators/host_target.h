// The Halide target of this machine with only the features it can run, for
// everything that compiles for "host" (the model compiler, its JIT tests and
// benchmarks). Halide 14 calls an AMD Zen 4 (AVX-512 with VNNI and BF16)
// "avx512_sapphirerapids", whose LLVM CPU emits AVX-VNNI, which Zen 4 lacks:
// a model compiled for host there died of SIGILL ({vex} vpdpwssd in its
// index arithmetic). Without AVX-VNNI (CPUID leaf 7 sub-leaf 1, EAX bit 4)
// the feature is dropped; avx512_cannonlake and below stay.
#pragma once

#include <cpuid.h>

#include "Halide.h"

namespace batchconv_gen {

inline bool cpu_has_avx_vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return (a & (1u << 4)) != 0;
}

// t (a host target) without the features this CPU lacks.
inline Halide::Target usable_target(Halide::Target t) {
  if (t.has_feature(Halide::Target::AVX512_SapphireRapids) && !cpu_has_avx_vnni())
    t = t.without_feature(Halide::Target::AVX512_SapphireRapids);
  return t;
}

inline Halide::Target host_target() { return usable_target(Halide::get_host_target()); }

}  // namespace batchconv_gen

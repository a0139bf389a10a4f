// TargetFacts of a Halide target: vector width and register count from the
// target itself; cache sizes read from the machine that generates the code
// (sysconf), with 32 KB / 1 MB where it does not say. The schedule point's
// cache-sized fields (task_input_kb, ...) can always be set explicitly.
#pragma once

#include <unistd.h>

#include "Halide.h"
#include "schedule_space.h"

namespace batchconv_gen {

inline TargetFacts target_facts(const Halide::Target& t) {
  using Halide::Target;
  TargetFacts f;
  f.vector_floats = t.natural_vector_size<float>();
  const bool avx512 = t.has_feature(Target::AVX512) || t.has_feature(Target::AVX512_Skylake) ||
                      t.has_feature(Target::AVX512_Cannonlake) ||
                      t.has_feature(Target::AVX512_SapphireRapids);
  f.registers = (t.arch == Target::X86 && !avx512) ? 16 : 32;
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  f.l1_kb = l1 > 0 ? static_cast<int>(l1 / 1024) : 32;
  f.l2_kb = l2 > 0 ? static_cast<int>(l2 / 1024) : 1024;
  f.name = t.to_string();
  f.gpu = t.has_gpu_feature();
  return f;
}

}  // namespace batchconv_gen

// Thread count and the instruction set the multi-target kernels run.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <cstdlib>
#include <string>
#include <thread>

#include "HalideRuntime.h"
#include "batchconv/batchconv.h"

namespace batchconv {

namespace {
std::atomic<int> g_threads{0};
}  // namespace

void set_num_threads(int n) {
  if (n < 0) {
    throw Error("set_num_threads: n = " + std::to_string(n) + " must be >= 0 (0 = one per core)");
  }
  halide_set_num_threads(n);
  g_threads = n;
}

int num_threads() {
  int n = g_threads;
  if (n > 0) return n;
  // Halide's default: HL_NUM_THREADS, else one thread per core.
  if (const char* env = std::getenv("HL_NUM_THREADS")) {
    int e = std::atoi(env);
    if (e > 0) return e;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

// The variant the multi-target wrappers run: asks Halide's
// halide_can_use_target_features, as the wrappers do, for the features of
// each target listed in generators/CMakeLists.txt, best first. A custom
// hook that forces a variant (the tests') is then obeyed here too, so the
// chooser schedules for the variant that runs.
std::string selected_target() {
  auto usable = [](std::initializer_list<int> features) {
    uint64_t bits[2] = {0, 0};
    for (int f : features) bits[f / 64] |= uint64_t{1} << (f % 64);
    return halide_can_use_target_features(2, bits) != 0;
  };
  static_assert(halide_target_feature_end <= 128, "feature bits fit two words");
  if (usable({halide_target_feature_avx512_skylake, halide_target_feature_avx2, halide_target_feature_fma,
              halide_target_feature_f16c, halide_target_feature_sse41, halide_target_feature_avx}))
    return "x86-64-linux-avx512_skylake";
  if (usable({halide_target_feature_avx2, halide_target_feature_fma, halide_target_feature_f16c,
              halide_target_feature_sse41, halide_target_feature_avx}))
    return "x86-64-linux-avx2-fma-f16c-sse41";
  return "x86-64-linux";
}

}  // namespace batchconv

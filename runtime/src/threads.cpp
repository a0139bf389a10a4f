// Thread count and the instruction set the multi-target kernels run.
#include <atomic>
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

// Mirrors the feature checks of the multi-target wrapper (the targets listed
// in generators/CMakeLists.txt, best first).
std::string selected_target() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("sse4.1");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  if (avx512) return "x86-64-linux-avx512_skylake";
  if (avx2) return "x86-64-linux-avx2-fma-f16c-sse41";
#endif
  return "x86-64-linux";
}

}  // namespace batchconv

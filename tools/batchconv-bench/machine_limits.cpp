#include "machine_limits.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "dnnl.h"
#include "timing.h"

namespace bcbench {
namespace {

// The loops are inline assembly so every accumulator stays in a register
// (compiled C++ spills them). Each iteration issues kAcc independent FMAs:
// more than FMA latency (4 cycles) x FMA pipes (2) keeps both pipes busy.
constexpr int kAcc = 16;

#define BC_FMA12(op, reg, a, b)                                                                      \
  op " %%" a ", %%" b ", %%" reg "0\n" op " %%" a ", %%" b ", %%" reg "1\n" op " %%" a ", %%" b   \
     ", %%" reg "2\n" op " %%" a ", %%" b ", %%" reg "3\n" op " %%" a ", %%" b ", %%" reg "4\n" op \
     " %%" a ", %%" b ", %%" reg "5\n" op " %%" a ", %%" b ", %%" reg "6\n" op " %%" a ", %%" b      \
     ", %%" reg "7\n" op " %%" a ", %%" b ", %%" reg "8\n" op " %%" a ", %%" b ", %%" reg "9\n" op \
     " %%" a ", %%" b ", %%" reg "10\n" op " %%" a ", %%" b ", %%" reg "11\n"

__attribute__((target("avx512f"))) void fma_loop_avx512(long iters) {
  // zmm0..zmm15 accumulate zmm16 * zmm17 (all zero: no denormals, no overflow).
  __asm__ volatile(
      "vpxord %%zmm16, %%zmm16, %%zmm16\n vpxord %%zmm17, %%zmm17, %%zmm17\n"
      "1:\n" BC_FMA12("vfmadd231ps", "zmm", "zmm16", "zmm17")
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm12\n vfmadd231ps %%zmm16, %%zmm17, %%zmm13\n"
      "vfmadd231ps %%zmm16, %%zmm17, %%zmm14\n vfmadd231ps %%zmm16, %%zmm17, %%zmm15\n"
      "dec %0\n jnz 1b\n vzeroupper\n"
      : "+r"(iters)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "cc");
}

__attribute__((target("avx2,fma"))) void fma_loop_avx2(long iters) {
  // ymm0..ymm11 accumulate ymm12 * ymm13: 12 chains (16 registers only).
  __asm__ volatile(
      "vpxor %%ymm12, %%ymm12, %%ymm12\n vpxor %%ymm13, %%ymm13, %%ymm13\n"
      "1:\n" BC_FMA12("vfmadd231ps", "ymm", "ymm12", "ymm13")
      "dec %0\n jnz 1b\n vzeroupper\n"
      : "+r"(iters)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
        "xmm12", "xmm13", "cc");
}
#undef BC_FMA12

template <typename F>
double best_parallel_seconds(int threads, int runs, F body) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    std::vector<std::thread> pool;
    std::vector<double> secs(threads);
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const double t0 = now_seconds();
        body(t);
        secs[t] = now_seconds() - t0;
      });
    for (auto& th : pool) th.join();
    best = std::min(best, *std::max_element(secs.begin(), secs.end()));
  }
  return best;
}

}  // namespace

double measure_fma_gflops(int threads, std::string* isa) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (isa) *isa = avx512 ? "avx512" : "avx2";
  // Many short runs (~1 ms each), best kept: on a shared machine, the best
  // run is the one that had the cores to itself for a whole time slice.
  const long iters = 400'000;
  const int lanes = avx512 ? 16 : 8, chains = avx512 ? kAcc : 12;
  double s = best_parallel_seconds(threads, 60, [&](int) {
    if (avx512) fma_loop_avx512(iters);
    else fma_loop_avx2(iters);
  });
  return 2.0 * lanes * chains * double(iters) * threads / s / 1e9;
}

double measure_sgemm_gflops(int n) {
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n, 0.f);
  double best = 1e30;
  for (int r = 0; r < 16; ++r) {  // first run warms up; the best of the rest
    const double t0 = now_seconds();
    dnnl_sgemm('N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    const double t = now_seconds() - t0;
    if (r > 0) best = std::min(best, t);
  }
  return 2.0 * double(n) * n * n / best / 1e9;
}

double measure_copy_gbs(int threads, size_t bytes) {
  // Each run copies `bytes` from one window of a 4x larger source pool into a
  // window of a 4x larger destination pool, rotating windows so that no run
  // finds its data in cache from the run before; both pools are touched first.
  const int windows = 4;
  std::vector<char> src(bytes * windows, 1), dst(bytes * windows, 0);
  const size_t chunk = bytes / threads;
  int run = 0;
  double best = 1e30;
  for (int r = 0; r < 32; ++r, ++run) {
    const size_t off = (run % windows) * bytes;
    best = std::min(best, best_parallel_seconds(threads, 1, [&](int t) {
      std::memcpy(dst.data() + off + t * chunk, src.data() + off + t * chunk, chunk);
    }));
  }
  return 2.0 * double(chunk * threads) / best / 1e9;
}

MachineLimits measure_machine_limits(int threads, bool quick) {
  MachineLimits m;
  m.threads = threads;
  m.fma_gflops = measure_fma_gflops(threads, &m.fma_isa);
  m.sgemm_gflops = measure_sgemm_gflops(quick ? 1024 : 1536);
  // 64 MiB per buffer (twice the 32 MiB L3): beyond the last-level cache, short enough for a
  // run to fit in one time slice on a busy machine.
  m.copy_gbs = measure_copy_gbs(threads, size_t(64) << 20);
  return m;
}

std::string cpu_description() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

}  // namespace bcbench

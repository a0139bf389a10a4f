#include "parallel.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace bcbench {

namespace {
int g_threads = 0;
}

int bench_threads() {
  return g_threads > 0 ? g_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}
void set_bench_threads(int n) { g_threads = n; }

void parallel_ranges(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (threads <= 1 || n < 2) {
    fn(0, n);
    return;
  }
#ifdef _OPENMP
  // The OpenMP pool oneDNN uses too: no second set of threads competing with
  // its spinning workers inside one method (e.g. transpose, conv, transpose).
  const int64_t chunk_omp = (n + threads - 1) / threads;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const int64_t b = t * chunk_omp, e = std::min(n, b + chunk_omp);
    if (b < e) fn(b, e);
  }
  return;
#endif
  std::vector<std::thread> pool;
  const int64_t chunk = (n + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    const int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b < e) pool.emplace_back(fn, b, e);
  }
  fn(0, std::min(n, chunk));
  for (auto& th : pool) th.join();
}

// Below this many bytes a copy is not worth waking a second thread for.
constexpr int64_t kParallelCopyBytes = int64_t(1) << 20;

int copy_threads(int64_t floats, int threads) { return floats * 4 < kParallelCopyBytes ? 1 : threads; }

void transpose01(const float* src, float* dst, int64_t a, int64_t b, int64_t inner, int threads) {
  parallel_ranges(a * b, copy_threads(a * b * inner, threads), [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {  // k = j * a + i over dst rows
      const int64_t j = k / a, i = k % a;
      std::memcpy(dst + k * inner, src + (i * b + j) * inner, inner * sizeof(float));
    }
  });
}

void repeat1(const float* src, float* dst, int64_t n, int64_t copies, int64_t inner, int threads) {
  parallel_ranges(n * copies, copy_threads(n * copies * inner, threads), [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k)
      std::memcpy(dst + k * inner, src + (k / copies) * inner, inner * sizeof(float));
  });
}

}  // namespace bcbench

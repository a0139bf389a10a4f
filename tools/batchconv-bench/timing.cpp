#include "timing.h"

#include <algorithm>
#include <chrono>

namespace bcbench {

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Timing time_runs(const std::function<void()>& fn, const TimingPolicy& p) {
  for (int i = 0; i < p.warmup; ++i) fn();
  Timing t;
  const double start = now_seconds();
  for (int i = 0; i < p.max_reps; ++i) {
    const double t0 = now_seconds();
    fn();
    const double t1 = now_seconds();
    t.ms.push_back((t1 - t0) * 1e3);
    if (i + 1 >= p.min_reps && t1 - start >= p.max_seconds) break;
  }
  t.median_ms = median(t.ms);
  t.min_ms = *std::min_element(t.ms.begin(), t.ms.end());
  return t;
}

}  // namespace bcbench

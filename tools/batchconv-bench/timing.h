// Wall-clock timing of a callable: warm-up runs, then repeated runs until a
// repetition count or a time budget is reached. Reports the median and min.
#pragma once

#include <functional>
#include <vector>

namespace bcbench {

struct TimingPolicy {
  int warmup = 1;          // untimed runs first
  int min_reps = 3;        // at least this many timed runs...
  int max_reps = 50;       // ...and at most this many,
  double max_seconds = 1;  // stopping early once this much time was spent (after min_reps)
};

struct Timing {
  std::vector<double> ms;  // each timed run
  double median_ms = 0;
  double min_ms = 0;
};

double now_seconds();
Timing time_runs(const std::function<void()>& fn, const TimingPolicy& p);
double median(std::vector<double> v);

}  // namespace bcbench

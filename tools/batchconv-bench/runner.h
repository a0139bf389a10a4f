// Runs every selected method of a problem in turn, each from a fresh state:
// measure its peak extra memory over setup + first run, time it, check it.
#pragma once

#include <string>
#include <vector>

#include "check.h"
#include "machine_limits.h"
#include "methods.h"
#include "timing.h"

namespace bcbench {

struct MethodResult {
  std::string name, what, impl;
  Family family = Family::Batchconv;
  bool full_op = true;
  std::string error;  // non-empty: setup or run threw; nothing else is valid
  Timing timing;
  double gflops = 0;
  int64_t extra_bytes = 0;      // heap high-water mark above the state before setup
  int64_t rss_extra_bytes = 0;  // RSS high-water mark above RSS before setup (cross-check)
  bool checked = false;
  double max_rel_err = 0;
  bool pass = true;  // check within tolerance (true when not checked)
};

struct RunOptions {
  TimingPolicy timing;
  double tol = 1e-5;
  // Method names or families ("batchconv", "onednn", "naive") to run; empty = all.
  std::vector<std::string> only;
  bool verbose = false;  // progress lines on stderr
  // When the first (untimed) run takes longer than this, time only one more
  // run: keeps a full benchmark bounded when a method is very slow.
  double slow_run_seconds = 1e30;
};

bool method_selected(const Method& m, const std::vector<std::string>& only);
// Throws std::invalid_argument naming an entry of --methods that selects no method of p.
void check_methods_exist(Problem& p, const std::vector<std::string>& only);

std::vector<MethodResult> run_methods(Problem& p, const CheckPlan& plan, const RunOptions& o);

// Time of the binding limit: max(flops / peak FMA, io bytes / copy bandwidth),
// in ms, and which one binds ("fma" or "bw"). 0 when limits are unknown.
double floor_ms(const Problem& p, const MachineLimits& m, std::string* bound);

// Best median among oneDNN methods that compute the full op from NCHW memory.
const MethodResult* best_onednn(const std::vector<MethodResult>& r);

std::string human_bytes(double b);  // "0 B", "12.3 KiB", "256.0 MiB"

}  // namespace bcbench

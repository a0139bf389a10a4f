// Runs benchmarks/torch_peer.py (PyTorch's own formulations, 2 threads) for the
// seed workloads, when /usr/bin/python3 can import torch; otherwise says why not.
#pragma once

#include <string>
#include <vector>

#include "workloads.h"

namespace bcbench {

struct TorchRow {
  std::string id, method, note;
  double median_ms = -1, min_ms = -1;
};

struct TorchResults {
  std::vector<TorchRow> rows;
  std::vector<std::string> notes;  // "W2 G=16: torch trick and loop agree to 3e-07"
  std::string skipped;             // non-empty: why there is no torch column
};

TorchResults run_torch_peer(const std::string& script, const std::vector<Workload>& w, int reps);

}  // namespace bcbench

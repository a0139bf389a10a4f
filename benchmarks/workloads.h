// The seed workloads W1-W4 (full size, and a --quick smoke-test size).
#pragma once

#include <string>
#include <vector>

#include "problem.h"
#include "timing.h"

namespace bcbench {

struct Workload {
  std::string id;     // "W2 G=16"
  std::string title;  // what it is, for the table
  ProblemSpec spec;
  TimingPolicy timing;
};

std::vector<Workload> seed_workloads(bool quick);

}  // namespace bcbench

// batchconv-bench's command line (documented in help_text()).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "problem.h"
#include "runner.h"

namespace bcbench {

class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct BenchArgs {
  ProblemSpec spec;
  std::string x_npy, w_npy, bias_npy, y_npy;
  CheckMode check = CheckMode::Auto;
  RunOptions run;
  int threads = 0;  // 0 = all cores
  uint64_t seed = 1;
  bool json = false;
  bool help = false;
  bool measure_limits = true;
  double peak_gflops = 0, bw_gbs = 0;  // given: skip measuring
  std::vector<std::string> geometry_flags;   // conv-only flags given (--stride, --groups, ...)
  std::vector<std::string> two_value_flags;  // those given as HxW
  bool layout_given = false;
};

// Throws UsageError naming the bad flag and what was expected.
BenchArgs parse_args(const std::vector<std::string>& argv);
const char* help_text();

// Throws UsageError when a flag does not apply to the op at x's rank (HxW
// geometry on a 1-D conv). parse_args calls it when --x is given; call it
// again once a .npy file has supplied x's shape.
void check_flags_apply(const BenchArgs& a);

// "3x32x32" -> {3, 32, 32}; every dimension must be a positive integer.
std::vector<int64_t> parse_dims(const std::string& flag, const std::string& v);

}  // namespace bcbench

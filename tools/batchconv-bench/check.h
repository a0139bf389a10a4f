// Checking a method's output against the double-precision reference
// (tests/reference, batchconv_reference). The reference is a plain loop, so
// big problems are checked on samples: whole sub-problems cut out of the
// inputs (images n0..n0+k of slice b, or a window of columns of a pointwise
// conv), whose outputs are exactly the matching box of y. Samples are taken
// at the start and at the end of the batch.
#pragma once

#include <string>
#include <vector>

#include "problem.h"

namespace bcbench {

enum class CheckMode { Auto, Full, Sample, None };  // Auto: Full when cheap, else Sample

struct Box {
  std::vector<int64_t> begin, extent;  // per dimension
};

struct CheckPlan {
  struct Sample {
    Box ybox;
    std::vector<int64_t> y_shape;  // = ybox.extent
    std::vector<double> ref;       // reference output on the sub-problem
  };
  std::vector<Sample> samples;
  std::string how;  // "full", "sampled: b=0,n=0..3 and b=99,n=46..49", "none"
  double ref_seconds = 0;
};

// Builds the plan and computes the reference outputs (the slow part).
// sample_flops: the reference work allowed per sample in Auto/Sample mode.
CheckPlan plan_check(const Problem& p, CheckMode mode, double sample_flops = 3e7);

// max over samples of max|y - ref| / max(1, max|ref|) on problem.y;
// 0 when the plan has no samples. NaN in y (an unwritten output) yields +inf.
double check_output(const Problem& p, const CheckPlan& plan);

// Copies box `b` out of a contiguous row-major tensor of shape `shape`.
std::vector<float> gather_box(const float* data, const std::vector<int64_t>& shape, const Box& b);

}  // namespace bcbench

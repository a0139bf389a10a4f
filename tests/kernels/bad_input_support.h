// Helpers for the bad-input tests: a valid problem per op that each test breaks
// in one way, and a check that the call throws batchconv::Error whose message
// matches the given patterns, and that the output was left untouched.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_support.h"

namespace batchconv::test {

// x, w, bias, y of a valid problem, all contiguous, filled with data; y holds
// a known pattern so a write is detected.
struct Problem {
  Tensor x, w, bias, y;
  ConvDesc d;
};

// grouped_conv: x (2, 4, 7, 7), w (6, 2, 3, 3), groups 2, bias (6) -> y (2, 6, 5, 5);
// dims = 1 drops the H axis: x (2, 4, 7), w (6, 2, 3) -> y (2, 6, 5).
Problem grouped_problem(int dims = 2);
// batched_weight_conv: x (3, 2, 4, 7, 7), w (3, 6, 2, 3, 3), groups 2, bias (3, 6)
// -> y (3, 2, 6, 5, 5).
Problem batched_problem();
// broadcast_input_conv: x (2, 4, 7, 7), w (3, 6, 4, 3, 3), bias (3, 6) -> y
// Concatenated (2, 18, 5, 5).
Problem broadcast_problem();
// batched_linear: x (3, 5, 4), w (3, 4, 6), bias (3, 6) -> y (3, 5, 6).
Problem linear_problem();

// A contiguous tensor of random data, and an output filled with kSentinel.
Tensor T(std::vector<int64_t> shape);
Tensor Y(std::vector<int64_t> shape);

// Calls `call`; expects batchconv::Error whose message matches every pattern
// (ECMAScript regex, case-insensitive), and that `outputs` were not written.
// Returns the message (empty when nothing was thrown).
std::string expect_error(const std::function<void()>& call, const std::vector<std::string>& patterns,
                         const std::vector<Tensor*>& outputs);

// A regex matching `name` as a whole word (e.g. "w" but not "weight" or "w2").
std::string word(const std::string& name);
// A regex matching the literal text s (escapes parentheses etc.).
std::string lit(const std::string& s);

}  // namespace batchconv::test

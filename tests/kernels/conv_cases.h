// The swept parameter combinations of the three convolution ops. The list is
// fixed (so test names are stable); the data of every case is fresh random.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"
#include "test_support.h"

namespace batchconv::test {

enum class ConvOp { Grouped, BatchedWeight, BroadcastInput };

struct ConvCase {
  std::string name;  // unique, [A-Za-z0-9_] only (a GoogleTest parameter name)
  int dims = 2;      // 1-D: H = KH = 1 and the tensors have no H axis
  int64_t B = 1;     // filter banks (batched-weight, broadcast-input)
  int64_t N = 1, cin_g = 1, cout_g = 1, H = 1, W = 1, KH = 1, KW = 1;
  ConvDesc d;  // d.groups is the number of groups
  bool bias = false;
  Layout x_layout = Layout::Contiguous, w_layout = Layout::Contiguous,
         y_layout = Layout::Contiguous;
  // Batched-weight: x is a (B, N, ...) view of memory laid out (N, B, ...).
  // Broadcast-input, Batched layout: y is a (B, N, Cout, ...) view of the
  // memory of a Concatenated (N, B*Cout, ...) output.
  bool permuted = false;
  BroadcastLayout layout = BroadcastLayout::Concatenated;

  int64_t cin() const { return d.groups * cin_g; }
  int64_t cout() const { return d.groups * cout_g; }
  // {lead..., C, [H,] W} with the given leading dims.
  std::vector<int64_t> spatial_shape(std::vector<int64_t> lead, int64_t c, int64_t h,
                                     int64_t w) const;
  int64_t out_h() const;
  int64_t out_w() const;
  std::string describe() const;  // every field, for failure messages
};

// GoogleTest prints parameters with this.
void PrintTo(const ConvCase& c, std::ostream* os);

// The sweep of one op: edge cases first, then pseudo-random combinations drawn
// with a fixed seed, then a few larger shapes.
std::vector<ConvCase> conv_cases(ConvOp op);

// Long reductions with at least 64 output channels per group, the cases the
// chooser sends to the channels family (generators/conv_chooser.cpp): odd
// widths, asymmetric padding, stride, dilation, groups, B > 1, 1-D.
std::vector<ConvCase> long_reduction_cases(ConvOp op);

}  // namespace batchconv::test

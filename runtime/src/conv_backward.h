// Internal: the gradient kernels behind backward.h, for every conv form.
// Each op file (grouped_conv_backward.cpp, ...) validates its own layout and
// describes its operands as 6-D Halide views; these run the kernels.
#pragma once

#include <vector>

#include "batchconv/batchconv.h"
#include "conv_plan.h"

namespace batchconv::detail {

// How one operand of a conv is laid out, as seen by the gradient kernels.
enum class Operand {
  Unbatched,  // (N, C, ...) or (C_out, C_in/g, ...): one slice
  Batched,    // (B, N, C, ...) or (B, Cout, Cin/g, ...)
  Shared,     // (N, C, ...) shared by B slices (stride 0 along B; dx sums them)
  Concat,     // (N, B*Cout, ...): broadcast-input conv's concatenated output
};

// Checks what both gradients check: the activation is None, dy has the
// forward output's shape `expected_dy`, and the output (dx or dw) has
// `expected_out` (well-formed, no overlapping elements).
void check_backward(const char* op, const ConvDesc& d, const TensorView& dy,
                    const std::vector<int64_t>& expected_dy, const TensorView& out,
                    const std::vector<int64_t>& expected_out);

// dx from dy and w. `p` is the plan of the forward call (x = dx's shape).
void run_conv_grad_input(const char* op, const ConvPlan& p, const TensorView& dy, Operand dy_kind,
                         const TensorView& w, Operand w_kind, const TensorView& dx,
                         Operand dx_kind);

// dw from x and dy.
void run_conv_grad_weight(const char* op, const ConvPlan& p, const TensorView& x, Operand x_kind,
                          const TensorView& dy, Operand dy_kind, const TensorView& dw,
                          Operand dw_kind);

}  // namespace batchconv::detail

// Plain-loop reference implementations in double precision, written directly
// from the op definitions (PyTorch semantics), independent of the kernels.
// Used by the tests and by batchconv-bench to check results.
#pragma once

#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::ref {

// Each returns y as a contiguous row-major array of the op's output shape
// (computed here, independently of the runtime's shape helpers), in double.
// They assume valid inputs (tests validate via the runtime first).
std::vector<double> grouped_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const ConvDesc& d, std::vector<int64_t>* out_shape = nullptr);
std::vector<double> batched_weight_conv(const TensorView& x, const TensorView& w,
                                        const TensorView* bias, const ConvDesc& d,
                                        std::vector<int64_t>* out_shape = nullptr);
std::vector<double> broadcast_input_conv(const TensorView& x, const TensorView& w,
                                         const TensorView* bias, const ConvDesc& d,
                                         BroadcastLayout layout,
                                         std::vector<int64_t>* out_shape = nullptr);
std::vector<double> batched_linear(const TensorView& x, const TensorView& w,
                                   const TensorView* bias, Activation act,
                                   std::vector<int64_t>* out_shape = nullptr);

// max |y - ref| / max(1, max |ref|)  -- y may be strided.
double max_rel_error(const TensorView& y, const std::vector<double>& ref);

}  // namespace batchconv::ref

// batchconv backward API: gradients of the conv ops with respect to their
// input and weights (the Python package's autograd functions call these).
//
// Same conventions as batchconv.h: float32 row-major views, any strides (an
// operand whose last dimension is not unit-stride is packed first), the
// caller allocates and owns every buffer, shapes are validated before
// anything is written and a mismatch throws batchconv::Error naming the
// argument, its shape and the expected one. `d` is the forward call's
// descriptor; its activation must be None (the gradient of a fused ReLU
// needs the forward output: apply it outside). The bias gradient is the sum
// of dy over every axis but the channel (and B) axes.
//
// The gradients overwrite dx / dw (they do not accumulate into them).
#pragma once

#include "batchconv/batchconv.h"

namespace batchconv {

// grouped_conv: dy (N, Cout, [H',] W'), w (Cout, Cin/groups, [KH,] KW)
// -> dx (N, Cin, [H,] W).
void grouped_conv_backward_input(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const ConvDesc& d);
// grouped_conv: x (N, Cin, [H,] W), dy (N, Cout, [H',] W') -> dw (Cout, Cin/groups, [KH,] KW).
void grouped_conv_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                  const ConvDesc& d);

// batched_weight_conv: dy (B, N, Cout, [H',] W'), w (B, Cout, Cin/groups, [KH,] KW)
// -> dx (B, N, Cin, [H,] W).
void batched_weight_conv_backward_input(const TensorView& dy, const TensorView& w,
                                        const TensorView& dx, const ConvDesc& d);
// batched_weight_conv: x (B, N, Cin, [H,] W), dy (B, N, Cout, [H',] W')
// -> dw (B, Cout, Cin/groups, [KH,] KW).
void batched_weight_conv_backward_weight(const TensorView& x, const TensorView& dy,
                                         const TensorView& dw, const ConvDesc& d);

// broadcast_input_conv: dy in `layout` ((N, B*Cout, ...) or (B, N, Cout, ...)),
// w (B, Cout, Cin/groups, [KH,] KW) -> dx (N, Cin, [H,] W), summed over the B banks.
void broadcast_input_conv_backward_input(const TensorView& dy, const TensorView& w,
                                         const TensorView& dx, const ConvDesc& d,
                                         BroadcastLayout layout);
// broadcast_input_conv: the shared x (N, Cin, [H,] W), dy in `layout`
// -> dw (B, Cout, Cin/groups, [KH,] KW).
void broadcast_input_conv_backward_weight(const TensorView& x, const TensorView& dy,
                                          const TensorView& dw, const ConvDesc& d,
                                          BroadcastLayout layout);

}  // namespace batchconv

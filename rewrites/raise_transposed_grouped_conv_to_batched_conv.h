// raise_transposed_grouped_conv_to_batched_conv: the batched-conv-by-grouped-conv trick that models
// already write by hand (seed 3's BatchConv2DLayer) becomes the project's own batched-weight op,
// so its compiler sees one op instead of transposes around a grouped conv. Runs only with
// PassOptions::emit_batchconv_ops (without it the graph is already standard ONNX: nothing to gain).
//
//   Before: t = Transpose(x, [1,0,2..])               x: (B, n, C, S..)
//           r = Reshape(t, [n, B*C, S..])
//           c = Conv<group=B*g>(r, W, bias?)          W: (B*M, C/g, k..)
//           y = Transpose(Reshape(c, [n, B, M, S'..]), [1,0,2..])
//           [y = Add(y, k)]                           k: constant (B, 1, M, 1..) (seed 3's bias)
//   After:  y = batchconv.BatchedWeightConv<group=g>(x, W as (B, M, C/g, k..), bias (+ k) as (B, M))
//
// Why it is exact: after the first Transpose/Reshape, channel b*C + c of sample j is x[b, j, c], so
// group b*g + i of the conv reads task b's i-th channel block and writes its outputs b*M + ..;
// the second Reshape/Transpose puts task b's outputs back at y[b, j].
//
// Preconditions: x's shape is static; every shape in the chain is proved from it; the conv's group
// is a multiple of B; weights (and bias, k) are float constants; the intermediates (conv output,
// its Reshape, and the Add's input) have no other users. Ordering: after clean-up (Reshape targets
// folded to constants), after fuse_batch_slices_into_batched_conv.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult raise_transposed_grouped_conv_to_batched_conv(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

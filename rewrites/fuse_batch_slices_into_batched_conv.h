// fuse_batch_slices_into_batched_conv: G convs, each on its own slice of the batch and with its own
// weights, concatenated back along the batch, become one batched-weight conv (seed 2).
//
//   Before: x_i = Slice(x, axes=[0], [i*n, (i+1)*n))   (or Split(x, axis=0) into G equal parts)
//           y_i = Conv<group=g>(x_i, W_i, B_i)          W_i: (M, C/g, k...), all the same geometry
//           [y_i = Relu(y_i)]                           the same elementwise ops after every conv
//           y   = Concat(y_0, ..., y_{G-1}, axis=0)
//   After (standard ONNX, any runtime; the transposes are what seed 2's first attempt missed):
//           t = Reshape(Transpose(Reshape(x, [G,n,C,S..]), [1,0,2..]), [n, G*C, S..])
//           u = Conv<group=G*g>(t, concat_i W_i, concat_i B_i)      new initializers
//           y = Reshape(Transpose(Reshape(u, [n,G,M,S'..]), [1,0,2..]), [G*n, M, S'..])
//           (with n == 1 the transposes move nothing and are left out)
//   The common elementwise ops then run once, on the batched output.
//   After, when every slice goes through the same weight (and bias) values:
//           y = Conv<group=g>(x, W, B)             (chunking the batch through one conv)
//   After, PassOptions::emit_batchconv_ops:
//           y = Reshape(batchconv.BatchedWeightConv<group=g>(Reshape(x, [G,n,C,S..]),
//                                                            W (G,M,C/g,k..), B (G,M)), [G*n, M, S'..])
//
// Why it is exact: group (i, j) of the combined conv reads channels i*C + j*C/g .. of t, which are
// channels j*C/g.. of sample b of slice i, and writes outputs i*M + j*M/g.., i.e. conv i's group j.
//
// Preconditions: x's shape is static (N = G*n); the slices are consecutive, equal, cover the batch
// and are concatenated in order; every conv has the same geometry and output channels, constant
// weights (and all or none constant biases) unless they all share one weight, and its output is
// used only by the Concat.
// Ordering: after clean-up (Slice starts/ends folded to constants).
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult fuse_batch_slices_into_batched_conv(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

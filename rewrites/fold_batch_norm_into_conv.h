// fold_batch_norm_into_conv: an inference BatchNormalization right after a Conv becomes the conv's
// own weights and bias (a per-output-channel affine map folds into the linear conv).
//
//   Before: c = Conv(x, W, B); y = BatchNormalization<epsilon>(c, scale, beta, mean, var)
//   After:  y = Conv(x, W', B')   with s = scale / sqrt(var + epsilon) per output channel m,
//                                 W'[m] = W[m] * s[m],  B'[m] = (B[m] - mean[m]) * s[m] + beta[m]
//           (B = 0 when the conv has none), computed in double, rounded once to float.
//
// Preconditions: c is read only by the BatchNormalization and is not a graph output; W, B and the
// four BN parameters are float constants of the conv's M output channels; the BN is in inference
// mode (training_mode unset or 0, only its first output used). The conv's geometry is unchanged.
// A W shared with another node is left as it is for that node (W' is a new initializer). With
// PassOptions::compute_weight_values off (a compiled model's runtime weights) nothing is folded.
// Ordering: after fold_constants (parameters computed by Constant nodes are initializers by then)
// and before combine_parallel_convs (which needs constant weights and sees the folded convs).
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult fold_batch_norm_into_conv(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

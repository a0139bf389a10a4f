// combine_parallel_convs: convs that read the same tensor with the same geometry become one conv
// with their weights concatenated into a new initializer (TVM's combine_parallel_conv2d, for ONNX).
//
//   Before: y_i = Conv<group=g>(x, W_i, B_i)  i = 0..k-1, W_i: (M_i, C/g, kh, kw), same geometry
//   After, g == 1, the y_i only feed one Concat(axis=1) as a consecutive run (any order):
//           y = Conv(x, concat W_i, concat B_i) in the Concat's order; the run is replaced by y
//   After, g == 1 otherwise:
//           u = Conv(x, concat W_i, concat B_i);  y_0..y_{k-1} = Split(u, axis=1, [M_0..M_{k-1}])
//           (the convs of one Concat run, if any, come first and share one Split part that takes
//            the run's place in that Concat)
//   After, g > 1 (needs static output spatial sizes):
//           u = Conv<group=g>(x, W, B) with W's output blocks ordered (group j, conv i)
//           y_i = Reshape(Split(Reshape(u, [0, g, sum M_i/g, -1]), axis=2, [M_i/g])_i, shape of y_i)
//
// Why the grouped form is exact: group j of every conv reads the same input block j, so group j of
// the combined conv computes all of them; its outputs are (j, i, o) and the Reshape/Split picks
// conv i's (j, o) back out. Split uses the 'split' attribute before opset 13, an input from 13.
//
// Preconditions: at least two convs read x at input 0 with equal kernel, Cin/group, strides, pads,
// dilations, auto_pad, group and bias presence; weights (and biases) are float constants.
// Ordering: after fold_repeat_into_conv (which creates such siblings) and before dead-node removal.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult combine_parallel_convs(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

// fold_constants: nodes whose inputs are all constant become initializers,
// computed by the reference interpreter's kernels (no second implementation).
//
//   Before: c = Constant<value=[3]>(); o = ConstantOfShape<value=1>(c); r = Expand(k, o); y = Tile(x, r)
//   After:  y = Tile(x, r)                       r: initializer [1, 4, 1]
//   Before: s = Shape(x); d = Gather(s, 1)       x: float[N, 16, 5]
//   After:  d: initializer 16                    (Gather/Slice of a Shape folds when the dims it picks are known)
//
// Folds: Constant, Shape (all dims known), Gather/Slice of a Shape (picked
// dims known), and Gather, ConstantOfShape, Equal, Where, Mul, Add, Sub, Div,
// Concat, Cast, Unsqueeze, Squeeze, Slice, Reshape, Expand, Tile, Transpose,
// Flatten, Identity, Split on constant inputs. Outputs that would be larger
// than kMaxFoldElements (and larger than the node's inputs) stay computed, so
// the model does not grow. Graph inputs backed by initializers are not
// constant (a caller may override them). Graph outputs are never folded into
// initializers. Re-runs ONNX shape inference after folding, and repeats until
// nothing more folds. Ordering: first, before every pass that wants constants.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

constexpr int64_t kMaxFoldElements = 1 << 16;

PassResult fold_constants(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

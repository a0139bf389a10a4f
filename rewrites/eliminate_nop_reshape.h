// eliminate_nop_reshape: a Reshape to the shape its input already has is a copy; drop it.
//
//   Before: r = Reshape(x, [0, 16, -1]); y = Relu(r)      x: float[N, 16, 5]
//   After:  y = Relu(x)
//
// Preconditions: the shape input is constant with as many entries as x has
// dims, and entry k is 0 (copy dim k; only without allowzero), -1 (at most
// once: the others match, so it resolves to dim k), or equal to x's known dim
// k. Symbolic dims of x are fine where the entry is 0 or the single -1. Graph
// output names are kept (see eliminate_identity). Ordering: after
// fold_constants, which turns Shape/Gather/Concat shape arithmetic into a
// constant shape.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult eliminate_nop_reshape(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

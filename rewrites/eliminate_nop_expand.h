// eliminate_nop_expand: an Expand whose output has its input's shape is a copy; drop it.
//
//   Before: r = Expand(x, [1, 1, 1]); y = Tile(r, k)        x: float[N, 16, 5]
//   After:  y = Tile(x, k)
//
// Preconditions: the shape input is constant, has no more entries than x has
// dims, and every entry is 1 or equal to x's (known) dim at that position, so
// broadcasting changes nothing even where x's dims are symbolic. Graph output
// names are kept (see eliminate_identity). Ordering: after fold_constants,
// which turns the exporter's ConstantOfShape/Expand shape arithmetic into a
// constant shape.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult eliminate_nop_expand(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

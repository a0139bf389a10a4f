// eliminate_dead_nodes: nodes whose outputs reach no graph output are removed.
//
//   Before: a = Relu(x); b = Tile(x, r); y = Conv(a, w)     outputs: y
//   After:  a = Relu(x); y = Conv(a, w)                     (b and r are gone)
//
// Initializers that only dead nodes read are not exported any more
// (initializers already unused in the source model are kept). Nodes read by
// subgraphs (If/Loop bodies) stay. Ordering: last; other passes leave dead
// nodes behind freely.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult eliminate_dead_nodes(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

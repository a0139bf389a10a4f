// eliminate_identity: an Identity node forwards its input; its users read the input directly.
//
//   Before: t = Identity(x); y = Relu(t)
//   After:  y = Relu(x)
//
// Preconditions: when t is a graph output, x must be able to take over its
// name (x is produced by a node and is not itself a graph input or output);
// otherwise the Identity stays, so graph output names never change.
// Ordering: anywhere; run early so that matchers see through fewer nodes.
#pragma once

#include "pass.h"

namespace batchconv::rewrites {

PassResult eliminate_identity(ir::Model& model, const PassOptions& options);

}  // namespace batchconv::rewrites

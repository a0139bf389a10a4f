// Helpers shared by the clean-up passes (eliminate_*): bypassing a node that
// forwards one of its inputs, and the bytes a removed tensor would have taken.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "pass.h"

namespace batchconv::rewrites::cleanup {

// Bytes of v when its shape is static and its dtype has a size, else 0.
int64_t value_bytes(const ir::Value* v);

// Replaces every use of n's output 0 by `forwarded` and removes n (and what
// became dead behind it). Returns "" on success, or why it cannot: the output
// is a graph output whose name `forwarded` cannot take over. Records fired,
// nodes_removed and bytes_saved in `result`.
std::string bypass(ir::Graph& g, ir::Node* n, ir::Value* forwarded, PassResult& result);

// The driver of the "(op_type)(x, shape) is a no-op" passes: for every such
// two-input, one-output node, why_not_nop(n) returns "" when n forwards x
// unchanged, a reason for --explain, or a reason starting with '-' for a node
// that is plainly not a no-op (not worth an --explain line). No-ops are bypassed.
PassResult bypass_nop_nodes(ir::Model& model, const char* op_type,
                            std::string (*why_not_nop)(const ir::Node*));

}  // namespace batchconv::rewrites::cleanup

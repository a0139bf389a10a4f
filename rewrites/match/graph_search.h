// Generic graph search for the rewrite passes: constants, shapes, sibling consumers of one value,
// chains through no-op nodes, and removing what a rewrite left dead. Nothing here knows what a Conv
// is; the op-specific questions (can these be combined, build the combined op) live in the passes,
// as in TVM's combiner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::rewrites::match {

// "name" of a node, or "op_type#order" when it has none.
std::string node_label(const ir::Node* n);

// The graph's live nodes in insertion order, as a snapshot the caller may mutate the graph under
// (removed nodes stay allocated and are marked dead). Cheaper than a topological order: the rewrites
// match locally and do not need one.
std::vector<ir::Node*> node_snapshot(const ir::Graph& g);

// Constant data of a value: an initializer, a folded constant, or the output of a Constant node
// (attribute value / value_int(s) / value_float(s)). nullptr when not constant.
std::shared_ptr<const ir::Tensor> constant_of(const ir::Value* v);
// Integer constant as a flat list (int kinds only); nullopt when not a constant int tensor.
std::optional<std::vector<int64_t>> constant_ints(const ir::Value* v);
// True when v is a float constant (initializer or Constant) whose data is readable.
bool is_float_constant(const ir::Value* v);

// Static shape (every dim known) from the value's type, or from its constant data.
std::optional<std::vector<int64_t>> static_shape(const ir::Value* v);
// Rank when known from the type or constant data.
std::optional<int64_t> rank_of(const ir::Value* v);

// Output shape of a Reshape of a tensor of static shape `in` to `target` (0 copies the input dim
// unless allowzero, one -1 is inferred); nullopt when invalid.
std::optional<std::vector<int64_t>> reshape_output(const std::vector<int64_t>& in, std::vector<int64_t> target,
                                                   bool allowzero);
// The same for a Reshape node whose input shape is static and whose target is constant.
std::optional<std::vector<int64_t>> reshape_output(const ir::Node* reshape);

// Nodes using v at input slot `slot` (any slot when slot < 0) with the given op type and domain "".
std::vector<ir::Node*> consumers(const ir::Value* v, const std::string& op_type, int slot = -1);
// Number of uses, counting being a graph output as one use.
int use_count(const ir::Value* v);

// Walks back from v through value-preserving nodes (Identity) to the value they forward.
// The skipped nodes are appended to `chain` when given (nearest first).
ir::Value* skip_identities(ir::Value* v, std::vector<ir::Node*>* chain = nullptr);

// Same op type, domain and attributes (kinds and values; Tensor/Graph attributes compare unequal).
bool same_op(const ir::Node* a, const ir::Node* b);

// Normalises an axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

// Removes n if none of its outputs is used or a graph output, then does the same for the producers
// of its inputs, and drops initializers it consumed that became unused (never graph inputs, never
// initializers that were unused before the rewrite). Returns how many nodes were removed.
int erase_if_dead(ir::Graph& g, ir::Node* n);
// Moves every use of `old_out` (with its graph-output place and name, see Graph::replace_all_uses)
// to `new_out`, then erases what became dead behind it. With take_name, a `new_out` made by the
// caller's rewrite (a node output) also takes an intermediate `old_out`'s name. Returns how many
// nodes were removed.
int replace_and_erase(ir::Graph& g, ir::Value* old_out, ir::Value* new_out, bool take_name = false);
// Drops an initializer value the pass consumed once nothing uses it (graph inputs/outputs kept).
void drop_if_unused_initializer(ir::Graph& g, ir::Value* v);

// Bytes of a float tensor with a static shape (0 when the shape is not static).
int64_t float_bytes(const ir::Value* v);

}  // namespace batchconv::rewrites::match

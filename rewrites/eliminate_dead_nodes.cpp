// eliminate_dead_nodes: see eliminate_dead_nodes.h.
#include "eliminate_dead_nodes.h"

#include "cleanup_util.h"

namespace batchconv::rewrites {

PassResult eliminate_dead_nodes(ir::Model& model, const PassOptions&) {
  PassResult result;
  ir::Graph& g = model.graph;
  // Bytes of what dies: outputs of nodes that are not live. Count before removing.
  std::vector<std::pair<const ir::Node*, int64_t>> sizes;
  sizes.reserve(g.num_nodes());
  for (const auto& n : g.nodes()) {
    int64_t b = 0;
    for (const ir::Value* o : n->outputs)
      if (o) b += cleanup::value_bytes(o);
    sizes.emplace_back(n.get(), b);
  }
  int removed = g.remove_dead_nodes();
  if (removed) {
    for (const auto& [n, b] : sizes)
      if (n->dead) result.bytes_saved += b;
  }
  result.fired = removed;
  result.nodes_removed = removed;
  return result;
}

}  // namespace batchconv::rewrites

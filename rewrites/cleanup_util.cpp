// Helpers shared by the clean-up passes.
#include "cleanup_util.h"

#include <algorithm>

#include "match/graph_search.h"

namespace batchconv::rewrites::cleanup {

int64_t value_bytes(const ir::Value* v) {
  auto s = match::static_shape(v);
  if (!s) return 0;
  int64_t n = ir::dtype_size(v->type.dtype);
  for (int64_t d : *s) n = ir::mul_sat(n, std::max<int64_t>(d, 0));
  return n;
}

std::string bypass(ir::Graph& g, ir::Node* n, ir::Value* forwarded, PassResult& result) {
  ir::Value* out = n->outputs[0];
  if (!g.can_replace_all_uses(out, forwarded))
    return "output '" + out->name + "' is a graph output and '" + forwarded->name +
           "' cannot take its name (a graph input, output or initializer)";
  int64_t bytes = value_bytes(out);
  result.nodes_removed += match::replace_and_erase(g, out, forwarded);
  result.bytes_saved += bytes;
  result.fired++;
  return "";
}

PassResult bypass_nop_nodes(ir::Model& model, const char* op_type,
                            std::string (*why_not_nop)(const ir::Node*)) {
  PassResult result;
  ir::Graph& g = model.graph;
  for (ir::Node* n : g.topological_order()) {
    if (n->dead || n->op_type != op_type || !n->domain.empty()) continue;
    if (n->inputs.size() != 2 || !n->inputs[0] || !n->inputs[1] || n->outputs.size() != 1) continue;
    std::string why = why_not_nop(n);
    if (why.empty()) why = bypass(g, n, n->inputs[0], result);
    if (!why.empty() && why[0] != '-') result.skips.push_back({match::node_label(n), why});
  }
  return result;
}

}  // namespace batchconv::rewrites::cleanup

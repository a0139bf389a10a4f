// eliminate_identity: see eliminate_identity.h.
#include "eliminate_identity.h"

#include "cleanup_util.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

PassResult eliminate_identity(ir::Model& model, const PassOptions&) {
  PassResult result;
  ir::Graph& g = model.graph;
  for (ir::Node* n : g.topological_order()) {
    if (n->dead || n->op_type != "Identity" || !n->domain.empty()) continue;
    if (n->inputs.size() != 1 || !n->inputs[0] || n->outputs.size() != 1 || !n->outputs[0]) continue;
    if (n->inputs[0]->type.dtype == ir::DType::Other) {
      result.skips.push_back({match::node_label(n), "input is not a tensor (sequence or optional)"});
      continue;
    }
    std::string why = cleanup::bypass(g, n, n->inputs[0], result);
    if (!why.empty()) result.skips.push_back({match::node_label(n), why});
  }
  return result;
}

}  // namespace batchconv::rewrites

// eliminate_nop_expand: see eliminate_nop_expand.h.
#include "eliminate_nop_expand.h"

#include "cleanup_util.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

namespace {

// "" when Expand(x, shape) is provably x, else why not ("-..." when it plainly is not a no-op).
std::string why_not_nop(const ir::Node* n) {
  const ir::Value* x = n->inputs[0];
  auto shape = match::constant_ints(n->inputs[1]);
  if (!shape) return "shape input '" + n->inputs[1]->name + "' is not a constant";
  if (!x->type.shape) return "rank of input '" + x->name + "' is unknown";
  const auto& dims = *x->type.shape;
  if (shape->size() > dims.size())
    return "-shape has " + std::to_string(shape->size()) + " entries, input rank is " + std::to_string(dims.size()) +
           " (adds dims)";
  const size_t off = dims.size() - shape->size();
  for (size_t k = 0; k < shape->size(); ++k) {
    int64_t s = (*shape)[k];
    const ir::Dim& d = dims[off + k];
    if (s == 1) continue;
    if (!d.known()) return "dim " + std::to_string(off + k) + " of the input is symbolic and shape asks for " + std::to_string(s);
    if (d.value != s) return "-expands dim " + std::to_string(off + k) + " from " + std::to_string(d.value) + " to " + std::to_string(s);
  }
  return "";
}

}  // namespace

PassResult eliminate_nop_expand(ir::Model& model, const PassOptions&) {
  PassResult result;
  ir::Graph& g = model.graph;
  for (ir::Node* n : g.topological_order()) {
    if (n->dead || n->op_type != "Expand" || !n->domain.empty()) continue;
    if (n->inputs.size() != 2 || !n->inputs[0] || !n->inputs[1] || n->outputs.size() != 1) continue;
    std::string why = why_not_nop(n);
    if (why.empty()) why = cleanup::bypass(g, n, n->inputs[0], result);
    // Reasons starting with '-' mean "not a no-op at all": not worth an --explain line.
    if (!why.empty() && why[0] != '-') result.skips.push_back({match::node_label(n), why});
  }
  return result;
}

}  // namespace batchconv::rewrites

// eliminate_nop_reshape: see eliminate_nop_reshape.h.
#include "eliminate_nop_reshape.h"

#include "cleanup_util.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

namespace {

// "" when Reshape(x, shape) is provably x, else why not ("-..." when it plainly is not a no-op).
std::string why_not_nop(const ir::Node* n) {
  const ir::Value* x = n->inputs[0];
  auto shape = match::constant_ints(n->inputs[1]);
  if (!shape) return "shape input '" + n->inputs[1]->name + "' is not a constant";
  if (!x->type.shape) return "rank of input '" + x->name + "' is unknown";
  const auto& dims = *x->type.shape;
  if (shape->size() != dims.size())
    return "-changes the rank from " + std::to_string(dims.size()) + " to " + std::to_string(shape->size());
  const bool allowzero = n->attr_int("allowzero", 0) != 0;
  int minus_ones = 0;
  for (size_t k = 0; k < shape->size(); ++k) {
    int64_t s = (*shape)[k];
    const ir::Dim& d = dims[k];
    if (s == 0 && !allowzero) continue;
    if (s == -1) {
      if (++minus_ones > 1) return "shape has more than one -1";
      continue;
    }
    if (!d.known()) return "dim " + std::to_string(k) + " of the input is symbolic and shape asks for " + std::to_string(s);
    if (d.value != s) return "-dim " + std::to_string(k) + " changes from " + std::to_string(d.value) + " to " + std::to_string(s);
  }
  return "";
}

}  // namespace

PassResult eliminate_nop_reshape(ir::Model& model, const PassOptions&) {
  PassResult result;
  ir::Graph& g = model.graph;
  for (ir::Node* n : g.topological_order()) {
    if (n->dead || n->op_type != "Reshape" || !n->domain.empty()) continue;
    if (n->inputs.size() != 2 || !n->inputs[0] || !n->inputs[1] || n->outputs.size() != 1) continue;
    std::string why = why_not_nop(n);
    if (why.empty()) why = cleanup::bypass(g, n, n->inputs[0], result);
    // Reasons starting with '-' mean "not a no-op at all": not worth an --explain line.
    if (!why.empty() && why[0] != '-') result.skips.push_back({match::node_label(n), why});
  }
  return result;
}

}  // namespace batchconv::rewrites

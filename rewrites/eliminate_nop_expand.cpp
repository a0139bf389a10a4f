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
  return cleanup::bypass_nop_nodes(model, "Expand", why_not_nop);
}

}  // namespace batchconv::rewrites

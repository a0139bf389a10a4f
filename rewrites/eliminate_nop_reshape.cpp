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
  return cleanup::bypass_nop_nodes(model, "Reshape", why_not_nop);
}

}  // namespace batchconv::rewrites

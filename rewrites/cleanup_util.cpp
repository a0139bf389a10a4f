// Helpers shared by the clean-up passes.
#include "cleanup_util.h"

#include "match/graph_search.h"

namespace batchconv::rewrites::cleanup {

int64_t value_bytes(const ir::Value* v) {
  auto s = match::static_shape(v);
  if (!s) return 0;
  int64_t n = ir::dtype_size(v->type.dtype);
  for (int64_t d : *s) n *= d;
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

}  // namespace batchconv::rewrites::cleanup

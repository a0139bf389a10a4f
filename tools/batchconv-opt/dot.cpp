// Graphviz pictures of a graph, for --emit=dot.
#include "dot.h"

#include <sstream>
#include <unordered_map>

namespace batchconv::opt {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string shape_label(const ir::Value* v) {
  std::string s = ir::dtype_name(v->type.dtype);
  if (!v->type.shape) return s;
  s += "[";
  for (size_t k = 0; k < v->type.shape->size(); ++k) {
    const ir::Dim& d = (*v->type.shape)[k];
    s += (k ? "," : "") + (d.known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param));
  }
  return s + "]";
}

std::string attr_label(const ir::Node* n) {
  std::string s;
  for (const auto& [name, a] : n->attrs) {
    if (a.kind == ir::Attribute::Kind::Int) s += "\\n" + name + "=" + std::to_string(a.i);
    if (a.kind == ir::Attribute::Kind::Ints && a.ints.size() <= 8) {
      s += "\\n" + name + "=[";
      for (size_t k = 0; k < a.ints.size(); ++k) s += (k ? "," : "") + std::to_string(a.ints[k]);
      s += "]";
    }
  }
  return s;
}

}  // namespace

std::string to_dot(const ir::Graph& g, const std::string& title) {
  std::ostringstream os;
  os << "digraph \"" << escape(title) << "\" {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::unordered_map<const ir::Node*, size_t> id;
  std::vector<ir::Node*> order = g.topological_order();
  for (size_t k = 0; k < order.size(); ++k) id[order[k]] = k;
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (!g.inputs[k]->constant)
      os << "  in" << k << " [shape=ellipse, label=\"" << escape(g.inputs[k]->name) << "\\n"
         << escape(shape_label(g.inputs[k])) << "\"];\n";
  for (size_t k = 0; k < g.outputs.size(); ++k)
    os << "  out" << k << " [shape=ellipse, style=bold, label=\"" << escape(g.outputs[k]->name) << "\"];\n";
  for (const ir::Node* n : order) {
    std::string consts;
    for (const ir::Value* v : n->inputs)
      if (v && v->constant && !v->producer) consts += "\\n" + escape(v->name) + ": " + escape(shape_label(v));
    os << "  n" << id[n] << " [shape=box, label=\"" << escape((n->domain.empty() ? "" : n->domain + ".") + n->op_type)
       << "\\n" << escape(n->name) << attr_label(n) << consts << "\"];\n";
  }
  auto source = [&](const ir::Value* v) -> std::string {
    if (v->producer) return "n" + std::to_string(id[v->producer]);
    for (size_t k = 0; k < g.inputs.size(); ++k)
      if (g.inputs[k] == v && !v->constant) return "in" + std::to_string(k);
    return "";
  };
  for (const ir::Node* n : order)
    for (const ir::Value* v : n->inputs) {
      if (!v) continue;
      std::string s = source(v);
      if (!s.empty())
        os << "  " << s << " -> n" << id[n] << " [label=\"" << escape(v->name) << "\\n" << escape(shape_label(v))
           << "\", fontsize=8];\n";
    }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    std::string s = source(g.outputs[k]);
    if (!s.empty()) os << "  " << s << " -> out" << k << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace batchconv::opt

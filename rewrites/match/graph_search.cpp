#include "match/graph_search.h"

#include <algorithm>
#include <set>

namespace batchconv::rewrites::match {

using ir::Graph;
using ir::Node;
using ir::Tensor;
using ir::Value;

std::string node_label(const Node* n) {
  return n->name.empty() ? n->op_type + "#" + std::to_string(n->order) : n->name;
}

std::vector<Node*> node_snapshot(const Graph& g) {
  std::vector<Node*> out;
  out.reserve(g.nodes().size());
  for (const auto& n : g.nodes())
    if (!n->dead) out.push_back(n.get());
  return out;
}

static bool is_int_kind(ir::DType t) {
  return t == ir::DType::Int64 || t == ir::DType::Int32 || t == ir::DType::Int8 ||
         t == ir::DType::UInt8 || t == ir::DType::Bool;
}

std::shared_ptr<const Tensor> constant_of(const Value* v) {
  if (v == nullptr) return nullptr;
  if (v->constant) return v->constant;
  const Node* p = v->producer;
  if (p == nullptr || p->op_type != "Constant" || !p->domain.empty()) return nullptr;
  if (const auto* a = p->attr("value"); a && a->kind == ir::Attribute::Kind::Tensor && a->t) return a->t;
  auto t = std::make_shared<Tensor>();
  if (const auto* a = p->attr("value_ints"); a && a->kind == ir::Attribute::Kind::Ints) {
    t->dtype = ir::DType::Int64;
    t->shape = {static_cast<int64_t>(a->ints.size())};
    t->i = a->ints;
    return t;
  }
  if (const auto* a = p->attr("value_int"); a && a->kind == ir::Attribute::Kind::Int) {
    t->dtype = ir::DType::Int64;
    t->i = {a->i};
    return t;
  }
  if (const auto* a = p->attr("value_floats"); a && a->kind == ir::Attribute::Kind::Floats) {
    t->shape = {static_cast<int64_t>(a->floats.size())};
    t->f = a->floats;
    return t;
  }
  if (const auto* a = p->attr("value_float"); a && a->kind == ir::Attribute::Kind::Float) {
    t->f = {a->f};
    return t;
  }
  return nullptr;
}

std::optional<std::vector<int64_t>> constant_ints(const Value* v) {
  auto t = constant_of(v);
  if (!t || !is_int_kind(t->dtype)) return std::nullopt;
  if (static_cast<int64_t>(t->i.size()) != t->numel()) return std::nullopt;
  return t->i;
}

bool is_float_constant(const Value* v) {
  auto t = constant_of(v);
  return t && t->dtype == ir::DType::Float && static_cast<int64_t>(t->f.size()) == t->numel();
}

std::optional<std::vector<int64_t>> static_shape(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (auto t = constant_of(v)) return t->shape;
  if (!v->type.shape) return std::nullopt;
  std::vector<int64_t> s;
  for (const auto& d : *v->type.shape) {
    if (!d.known()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

std::optional<int64_t> rank_of(const Value* v) {
  if (v == nullptr) return std::nullopt;
  if (auto t = constant_of(v)) return static_cast<int64_t>(t->shape.size());
  if (!v->type.shape) return std::nullopt;
  return static_cast<int64_t>(v->type.shape->size());
}

std::optional<std::vector<int64_t>> reshape_output(const std::vector<int64_t>& in, std::vector<int64_t> o,
                                                   bool allowzero) {
  int64_t total = 1, known = 1, infer = -1;
  for (int64_t d : in) {
    if (d < 0) return std::nullopt;
    total = ir::mul_sat(total, d);
  }
  for (size_t i = 0; i < o.size(); ++i) {
    if (o[i] == 0 && !allowzero) {
      if (i >= in.size()) return std::nullopt;
      o[i] = in[i];
    }
    if (o[i] == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int64_t>(i);
    } else if (o[i] < 0) {
      return std::nullopt;
    } else {
      known = ir::mul_sat(known, o[i]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known) return std::nullopt;
    o[infer] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return o;
}

std::optional<std::vector<int64_t>> reshape_output(const Node* n) {
  if (n->op_type != "Reshape" || n->inputs.size() < 2 || !n->inputs[0] || !n->inputs[1]) return std::nullopt;
  auto in = static_shape(n->inputs[0]);
  auto t = constant_ints(n->inputs[1]);
  if (!in || !t) return std::nullopt;
  return reshape_output(*in, *t, n->attr_int("allowzero", 0) != 0);
}

std::vector<Node*> consumers(const Value* v, const std::string& op_type, int slot) {
  std::vector<Node*> out;
  for (const auto& u : v->uses) {
    if (u.node->op_type != op_type || !u.node->domain.empty()) continue;
    if (slot >= 0 && u.index != slot) continue;
    if (std::find(out.begin(), out.end(), u.node) == out.end()) out.push_back(u.node);
  }
  return out;
}

int use_count(const Value* v) { return static_cast<int>(v->uses.size()) + (v->is_graph_output ? 1 : 0); }

Value* skip_identities(Value* v, std::vector<Node*>* chain) {
  while (v && v->producer && v->producer->op_type == "Identity" && v->producer->domain.empty() &&
         !v->producer->inputs.empty() && v->producer->inputs[0]) {
    if (chain) chain->push_back(v->producer);
    v = v->producer->inputs[0];
  }
  return v;
}

bool same_op(const Node* a, const Node* b) {
  if (a->op_type != b->op_type || a->domain != b->domain || a->attrs.size() != b->attrs.size()) return false;
  for (const auto& [k, x] : a->attrs) {
    const ir::Attribute* y = b->attr(k);
    if (!y || x.kind != y->kind) return false;
    using K = ir::Attribute::Kind;
    if (x.kind == K::Tensor || x.kind == K::Graph || x.kind == K::Other) return false;
    if (x.i != y->i || x.f != y->f || x.s != y->s || x.ints != y->ints || x.floats != y->floats ||
        x.strings != y->strings)
      return false;
  }
  return true;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

static bool outputs_unused(const Node* n) {
  for (const Value* o : n->outputs)
    if (o && (!o->uses.empty() || o->is_graph_output)) return false;
  return true;
}

int erase_if_dead(Graph& g, Node* n) {
  if (n == nullptr || n->dead || !outputs_unused(n)) return 0;
  std::vector<Value*> inputs;
  for (Value* v : n->inputs)
    if (v) inputs.push_back(v);
  g.remove_node(n);
  int removed = 1;
  for (Value* v : inputs) {
    if (v->producer) {
      removed += erase_if_dead(g, v->producer);
    } else {
      drop_if_unused_initializer(g, v);
    }
  }
  return removed;
}

int replace_and_erase(Graph& g, Value* old_out, Value* new_out, bool take_name) {
  Node* old = old_out->producer;
  const std::string name = old_out->name;
  g.replace_all_uses(old_out, new_out);  // a graph output's name moves to new_out here
  const int removed = old ? erase_if_dead(g, old) : 0;
  // Intermediates keep their names too, so rewritten graphs read like the originals.
  if (take_name && new_out->producer && new_out->name != name && !old_out->pinned && !new_out->pinned &&
      !new_out->is_graph_output && !new_out->is_graph_input) {
    g.rename_value(old_out, g.unique_name(name + "_replaced"));
    g.rename_value(new_out, name);
  }
  return removed;
}

void drop_if_unused_initializer(Graph& g, Value* v) {
  (void)g;
  if (v == nullptr || v->producer || v->is_graph_input || v->is_graph_output || v->pinned ||
      !v->uses.empty())
    return;
  // As Graph::remove_unused_initializers does: a value without data, producer or uses is not exported.
  v->constant.reset();
}

int64_t float_bytes(const Value* v) {
  auto s = static_shape(v);
  if (!s) return 0;
  int64_t n = 4;
  for (int64_t d : *s) n = ir::mul_sat(n, std::max<int64_t>(d, 0));
  return n;
}

}  // namespace batchconv::rewrites::match

// The graph IR: ownership, use lists, names, topological order, dead nodes.
#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace batchconv::ir {

int64_t mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > std::numeric_limits<int64_t>::max() / b ? std::numeric_limits<int64_t>::max() : a * b;
}

bool fits_int64(double v) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63, exact in a double
  return v >= -kLimit && v < kLimit;
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0) return -1;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d) n = std::numeric_limits<int64_t>::max();
    else n *= d;
  }
  return n;
}

const Attribute* Node::attr(const std::string& k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& k, int64_t def) const {
  const Attribute* a = attr(k);
  return a && a->kind == Attribute::Kind::Int ? a->i : def;
}

std::vector<int64_t> Node::attr_ints(const std::string& k, std::vector<int64_t> def) const {
  const Attribute* a = attr(k);
  return a && a->kind == Attribute::Kind::Ints ? a->ints : def;
}

std::string describe(const Node* n) {
  if (!n) return "<graph input>";
  std::string name = n->name.empty() ? n->op_type + "#" + std::to_string(n->order) : n->name;
  return "'" + name + "' (" + (n->domain.empty() ? "" : n->domain + ".") + n->op_type + ")";
}

int64_t dtype_size(DType t) {
  switch (t) {
    case DType::Float: case DType::Int32: return 4;
    case DType::Double: case DType::Int64: return 8;
    case DType::Int8: case DType::UInt8: case DType::Bool: return 1;
    case DType::Float16: return 2;
    default: return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float";
    case DType::Double: return "double";
    case DType::Int64: return "int64";
    case DType::Int32: return "int32";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    default: return "other";
  }
}

int64_t Model::opset(const std::string& d) const {
  for (const auto& [dom, v] : opset_imports)
    if (dom == d || (d.empty() && dom == "ai.onnx") || (d == "ai.onnx" && dom.empty())) return v;
  return 0;
}

// ---- names ----

std::string Graph::unique_name(const std::string& base_in) {
  std::string base = base_in.empty() ? "v" : base_in;
  auto taken = [&](const std::string& s) { return by_name_.count(s) || node_names_.count(s); };
  if (!taken(base)) return base;
  int64_t& k = name_counters_[base];
  std::string s;
  do {
    s = base + "_" + std::to_string(++k);
  } while (taken(s));
  return s;
}

void Graph::rename_value(Value* v, const std::string& name) {
  if (v->name == name) return;
  if (by_name_.count(name)) throw std::invalid_argument("rename_value: name '" + name + "' is already taken");
  if (v->pinned) throw std::logic_error("rename_value: value '" + v->name + "' is read by a subgraph and cannot be renamed");
  by_name_.erase(v->name);
  v->name = name;
  by_name_[name] = v;
}

// ---- creation ----

Value* Graph::add_value(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name = unique_name(name);
  Value* p = v.get();
  by_name_[p->name] = p;
  values_.push_back(std::move(v));
  return p;
}

Value* Graph::add_initializer(const std::string& name, Tensor t) {
  Value* v = add_value(name);
  v->type.dtype = t.dtype;
  std::vector<Dim> dims;
  for (int64_t d : t.shape) dims.push_back(Dim{d, ""});
  v->type.shape = dims;
  v->constant = std::make_shared<Tensor>(std::move(t));
  return v;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::add_node(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                      const std::string& name) {
  auto n = std::make_unique<Node>();
  n->op_type = op_type;
  n->order = next_order_++;
  std::string nm = name.empty() ? op_type : name;
  if (node_names_.count(nm)) {
    int64_t& k = name_counters_["node:" + nm];
    std::string cand;
    do {
      cand = nm + "_" + std::to_string(++k);
    } while (node_names_.count(cand));
    nm = cand;
  }
  n->name = nm;
  node_names_[nm]++;
  Node* p = n.get();
  p->position = nodes_.size();  // its index once appended; compact() renumbers (never compact here: O(n))
  for (size_t k = 0; k < outputs.size(); ++k) {
    Value* o = outputs[k];
    if (!o) continue;
    if (o->producer && !o->producer->dead)
      throw std::logic_error("add_node: value '" + o->name + "' already has producer " + describe(o->producer));
    o->producer = p;
    o->producer_output = static_cast<int>(k);
  }
  n->outputs = std::move(outputs);
  n->inputs.resize(inputs.size(), nullptr);
  nodes_.push_back(std::move(n));
  for (size_t k = 0; k < inputs.size(); ++k) set_input(p, static_cast<int>(k), inputs[k]);
  return p;
}

// ---- mutation ----

static void erase_use(Value* v, Node* n, int index) {
  auto& u = v->uses;
  for (size_t k = 0; k < u.size(); ++k)
    if (u[k].node == n && u[k].index == index) {
      u[k] = u.back();
      u.pop_back();
      return;
    }
}

void Graph::set_input(Node* n, int index, Value* v) {
  if (index < 0) throw std::out_of_range("set_input: negative input index");
  if (static_cast<size_t>(index) >= n->inputs.size()) n->inputs.resize(index + 1, nullptr);
  Value* old = n->inputs[index];
  if (old == v) {
    if (v && std::none_of(v->uses.begin(), v->uses.end(),
                          [&](const Use& u) { return u.node == n && u.index == index; }))
      v->uses.push_back({n, index});
    return;
  }
  if (old) erase_use(old, n, index);
  n->inputs[index] = v;
  if (v) v->uses.push_back({n, index});
}

bool Graph::can_replace_all_uses(const Value* from, const Value* to) const {
  if (from == to) return true;
  if (!from->is_graph_output) return true;
  return !(to->is_graph_input || to->is_graph_output || !to->producer || to->pinned || from->pinned);
}

void Graph::replace_all_uses(Value* from, Value* to) {
  if (from == to) return;
  // Move the whole use list at once (linear even for a value with 100k uses).
  std::vector<Use> uses;
  uses.swap(from->uses);
  to->uses.reserve(to->uses.size() + uses.size());
  for (const Use& u : uses) {
    u.node->inputs[u.index] = to;
    to->uses.push_back(u);
  }
  if (!from->is_graph_output) return;
  if (!can_replace_all_uses(from, to))
    throw std::logic_error("replace_all_uses: graph output '" + from->name + "' cannot be replaced by '" + to->name +
                           "' without renaming a graph output (check can_replace_all_uses first)");
  // `to` takes over the output's name and place, so output names stay as they were.
  std::string out_name = from->name;
  rename_value(from, unique_name(out_name + "_replaced"));
  rename_value(to, out_name);
  if (!to->type.shape && from->type.shape) to->type = from->type;
  for (Value*& o : outputs)
    if (o == from) o = to;
  from->is_graph_output = false;
  to->is_graph_output = true;
}

void Graph::remove_node(Node* n) {
  if (n->dead) return;
  for (Value* o : n->outputs)
    if (o && (!o->uses.empty() || o->is_graph_output))
      throw std::logic_error("remove_node: output '" + o->name + "' of " + describe(n) + " is still used");
  for (size_t k = 0; k < n->inputs.size(); ++k)
    if (n->inputs[k]) erase_use(n->inputs[k], n, static_cast<int>(k));
  for (Value* o : n->outputs)
    if (o && o->producer == n) o->producer = nullptr;
  auto it = node_names_.find(n->name);
  if (it != node_names_.end() && --it->second == 0) node_names_.erase(it);
  n->dead = true;
  ++dead_count_;
}

void Graph::compact() const {
  if (dead_count_ == 0) return;
  size_t w = 0;
  for (size_t r = 0; r < nodes_.size(); ++r) {
    if (nodes_[r]->dead) {
      removed_.push_back(std::move(nodes_[r]));
    } else {
      nodes_[r]->position = w;
      nodes_[w++] = std::move(nodes_[r]);
    }
  }
  nodes_.resize(w);
  dead_count_ = 0;
}

void Graph::reserve(size_t nodes, size_t values) {
  nodes_.reserve(nodes);
  values_.reserve(values);
  by_name_.reserve(values);
  node_names_.reserve(nodes);
}

size_t Graph::num_nodes() const {
  compact();
  return nodes_.size();
}

int Graph::remove_dead_nodes() {
  compact();
  std::unordered_set<const Node*> live;
  std::vector<const Node*> stack;
  auto mark = [&](const Value* v) {
    if (v && v->producer && !v->producer->dead && live.insert(v->producer).second) stack.push_back(v->producer);
  };
  for (const Value* v : outputs) mark(v);
  for (const auto& v : values_)
    if (v->pinned) mark(v.get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for (const Value* v : n->inputs) mark(v);
    for (const Value* v : n->implicit_inputs) mark(v);
  }
  // Remove consumers before producers: walk a topological order backwards.
  std::vector<Node*> order = topological_order();
  int removed = 0;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
    if (live.count(n)) continue;
    for (Value* o : n->outputs)
      if (o) {
        // uses can only come from other dead nodes, already removed
        o->uses.clear();
      }
    remove_node(n);
    ++removed;
  }
  compact();
  return removed;
}

void Graph::remove_value(Value* v) {
  if (v->producer && !v->producer->dead)
    throw std::logic_error("remove_value: '" + v->name + "' is produced by " + describe(v->producer));
  if (!v->uses.empty()) throw std::logic_error("remove_value: '" + v->name + "' still has uses");
  if (v->is_graph_input || v->is_graph_output || v->pinned)
    throw std::logic_error("remove_value: '" + v->name + "' is a graph input/output or read by a subgraph");
  for (size_t k = 0; k < values_.size(); ++k)
    if (values_[k].get() == v) {
      by_name_.erase(v->name);
      v->constant.reset();
      removed_values_.push_back(std::move(values_[k]));
      values_.erase(values_.begin() + static_cast<std::ptrdiff_t>(k));
      return;
    }
}

void Graph::remove_unused_initializers() {
  for (auto& v : values_)
    if (v->constant && !v->producer && v->uses.empty() && !v->is_graph_input && !v->is_graph_output && !v->pinned)
      v->constant.reset();
}

std::vector<Node*> Graph::topological_order() const {
  compact();
  const size_t n = nodes_.size();
  // Edges producer -> consumer in CSR form (no per-node vectors: this runs on 100k-node graphs).
  auto for_each_producer = [&](const Node* nd, auto&& f) {
    auto visit = [&](const Value* v) {
      if (v && v->producer && !v->producer->dead) f(v->producer->position);
    };
    for (const Value* v : nd->inputs) visit(v);
    for (const Value* v : nd->implicit_inputs) visit(v);
  };
  std::vector<int> indegree(n, 0);
  std::vector<size_t> start(n + 1, 0);
  for (size_t k = 0; k < n; ++k)
    for_each_producer(nodes_[k].get(), [&](size_t p) {
      indegree[k]++;
      start[p + 1]++;
    });
  for (size_t k = 0; k < n; ++k) start[k + 1] += start[k];
  std::vector<size_t> fill(start.begin(), start.end() - 1), consumers(start[n]);
  for (size_t k = 0; k < n; ++k) for_each_producer(nodes_[k].get(), [&](size_t p) { consumers[fill[p]++] = k; });
  // Min-heap on insertion index: keeps the source order wherever it is valid.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t k = 0; k < n; ++k)
    if (indegree[k] == 0) ready.push(k);
  std::vector<Node*> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t k = ready.top();
    ready.pop();
    order.push_back(nodes_[k].get());
    for (size_t e = start[k]; e < start[k + 1]; ++e)
      if (--indegree[consumers[e]] == 0) ready.push(consumers[e]);
  }
  if (order.size() == n) return order;
  // Name a node on the cycle: walk producers among the unscheduled nodes until one repeats.
  size_t cur = 0;
  while (indegree[cur] == 0) ++cur;
  std::vector<char> seen(n, 0);
  while (!seen[cur]) {
    seen[cur] = 1;
    size_t next = cur;
    for_each_producer(nodes_[cur].get(), [&](size_t p) {
      if (next == cur && indegree[p] > 0) next = p;
    });
    cur = next;
  }
  throw std::runtime_error("graph '" + name + "' has a cycle through node " + describe(nodes_[cur].get()));
}

}  // namespace batchconv::ir

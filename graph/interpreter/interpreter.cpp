// Kernel registry, graph runner, random inputs and comparison.
#include "interpreter/interpreter.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>

#include "interpreter/kernel_util.h"

namespace batchconv::interp {

namespace {

const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_math_kernels(reg);
    register_shape_kernels(reg);
    register_slice_kernels(reg);
    register_conv_kernels(reg);
    register_nn_kernels(reg);
    register_reduce_kernels(reg);
    return reg;
  }();
  return r;
}

std::string key(const std::string& domain, const std::string& op) {
  return domain.empty() || domain == "ai.onnx" ? op : domain + "." + op;
}

std::vector<int64_t> concrete_shape(const ir::Value* v, const std::map<std::string, int64_t>& dims, int64_t def) {
  std::vector<int64_t> s;
  if (!v->type.shape) throw Error("graph input '" + v->name + "' has unknown rank");
  for (const ir::Dim& d : *v->type.shape) {
    if (d.known()) s.push_back(d.value);
    else {
      auto it = dims.find(d.param);
      s.push_back(it != dims.end() ? it->second : def);
    }
  }
  return s;
}

std::atomic<int64_t> g_element_limit{int64_t(1) << 28};

}  // namespace

int64_t element_limit() { return g_element_limit.load(std::memory_order_relaxed); }
void set_element_limit(int64_t n) { g_element_limit.store(n, std::memory_order_relaxed); }

const Kernel* find_kernel(const std::string& domain, const std::string& op_type) {
  auto it = registry().find(key(domain, op_type));
  return it == registry().end() ? nullptr : &it->second;
}

bool supports(const ir::Node& n) { return find_kernel(n.domain, n.op_type) != nullptr; }

std::vector<std::string> supported_ops() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

std::vector<Tensor> run_node(const ir::Node& n, const std::vector<const Tensor*>& inputs, int64_t opset) {
  const Kernel* k = find_kernel(n.domain, n.op_type);
  if (!k) throw Error("node " + ir::describe(&n) + ": the reference interpreter has no kernel for this op");
  std::vector<Tensor> out;
  try {
    const bool reads_shape_only = n.op_type == "Shape" && n.domain.empty();  // fold_constants passes shapes only
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] && !reads_shape_only) check_data(*inputs[i], "input " + std::to_string(i));
    out = (*k)(n, inputs, opset);
  } catch (const KernelError& e) {
    throw Error("node " + ir::describe(&n) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    throw Error("node " + ir::describe(&n) + ": out of memory");
  }
  if (n.op_type != "Constant" && n.op_type != "Identity")
    for (Tensor& t : out) t.onnx_proto.clear();  // data changed: the source bytes no longer apply
  if (out.size() < n.outputs.size())
    throw Error("node " + ir::describe(&n) + ": kernel produced " + std::to_string(out.size()) + " outputs, node has " +
                std::to_string(n.outputs.size()));
  return out;
}

TensorMap run(const ir::Model& model, const TensorMap& inputs) {
  const ir::Graph& g = model.graph;
  std::unordered_map<const ir::Value*, Tensor> env;
  std::unordered_map<const ir::Value*, int> remaining;  // uses left, to free tensors early
  for (const ir::Value* v : g.inputs) {
    auto it = inputs.find(v->name);
    if (it == inputs.end()) {
      if (v->constant) continue;
      throw Error("graph input '" + v->name + "' was not given a value");
    }
    if (v->type.shape) {
      const auto& want = *v->type.shape;
      bool ok = want.size() == it->second.shape.size();
      for (size_t k = 0; ok && k < want.size(); ++k) ok = !want[k].known() || want[k].value == it->second.shape[k];
      if (!ok) throw Error("graph input '" + v->name + "': given shape " + shape_str(it->second.shape) +
                           " does not match its declared rank/dims");
    }
    env[v] = it->second;
  }
  auto value_of = [&](const ir::Value* v) -> const Tensor* {
    if (!v) return nullptr;
    auto it = env.find(v);
    if (it != env.end()) return &it->second;
    if (v->constant && !v->producer) return v->constant.get();
    throw Error("value '" + v->name + "' has no value when it is needed");
  };
  for (const auto& v : g.values()) remaining[v.get()] = static_cast<int>(v->uses.size());
  // Live elements stay within a budget (each tensor is also limited by
  // make_tensor): a model whose intermediates pile up is refused, not run
  // until memory runs out.
  const int64_t kMaxLiveElements = element_limit();
  int64_t live = 0;
  for (const auto& [v, t] : env) live += t.numel();
  for (const ir::Node* n : g.topological_order()) {
    std::vector<const Tensor*> ins;
    for (const ir::Value* v : n->inputs) ins.push_back(value_of(v));
    std::vector<Tensor> outs = run_node(*n, ins, model.opset(n->domain));
    for (size_t k = 0; k < n->outputs.size(); ++k)
      if (n->outputs[k]) {
        live += outs[k].numel();
        auto old_it = env.find(n->outputs[k]);
        if (old_it != env.end()) live -= old_it->second.numel();
        env[n->outputs[k]] = std::move(outs[k]);
      }
    for (const ir::Value* v : n->inputs)
      if (v && --remaining[v] == 0 && !v->is_graph_output && v->producer) {
        auto it = env.find(v);
        if (it != env.end()) live -= it->second.numel(), env.erase(it);
      }
    if (live > kMaxLiveElements)
      throw Error("node " + ir::describe(n) + ": the model's live tensors exceed the reference interpreter's " +
                  "budget of " + std::to_string(kMaxLiveElements) + " elements");
  }
  TensorMap out;
  for (const ir::Value* v : g.outputs) out[v->name] = *value_of(v);
  return out;
}

TensorMap random_inputs(const ir::Model& model, uint64_t seed, const std::map<std::string, int64_t>& dims,
                        int64_t default_dim) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uf(-1.0f, 1.0f);
  std::uniform_int_distribution<int64_t> ui(0, 3);
  TensorMap out;
  // Sizes are checked for every input before any is allocated.
  const int64_t kMaxInputElements = element_limit();
  int64_t total = 0;
  for (const ir::Value* v : model.graph.inputs) {
    if (v->constant) continue;
    Tensor t;
    t.shape = concrete_shape(v, dims, default_dim);
    const int64_t n = t.numel();
    if (n < 0 || n > kMaxInputElements || total > kMaxInputElements - n)
      throw Error("graph input '" + v->name + "' of shape " + shape_str(t.shape) + " takes the inputs past " +
                  "the reference interpreter's limit of " + std::to_string(kMaxInputElements) + " elements");
    total += n;
  }
  for (const ir::Value* v : model.graph.inputs) {
    if (v->constant) continue;
    Tensor t;
    t.dtype = v->type.dtype;
    t.shape = concrete_shape(v, dims, default_dim);
    int64_t n = t.numel();
    if (t.is_float()) {
      t.f.resize(n);
      for (float& x : t.f) x = uf(rng);
    } else if (t.dtype == ir::DType::Other) {
      throw Error("graph input '" + v->name + "' has a type the interpreter cannot generate");
    } else {
      t.i.resize(n);
      for (int64_t& x : t.i) x = t.dtype == ir::DType::Bool ? ui(rng) & 1 : ui(rng);
    }
    out[v->name] = std::move(t);
  }
  return out;
}

double max_relative_difference(const Tensor& a, const Tensor& b) {
  const double inf = std::numeric_limits<double>::infinity();
  if (a.shape != b.shape || a.is_float() != b.is_float()) return inf;
  double worst = 0;
  int64_t n = a.numel();
  for (int64_t k = 0; k < n; ++k) {
    double x = get(a, k), y = get(b, k);
    if (std::isnan(x) != std::isnan(y)) return inf;
    if (std::isnan(x)) continue;
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return inf;
      continue;
    }
    worst = std::max(worst, std::fabs(x - y) / std::max(1.0, std::fabs(y)));
  }
  return worst;
}

}  // namespace batchconv::interp

#include "runtime_weights.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "compile.h"
#include "onnx/onnx_io.h"

namespace batchconv::compiler {

namespace {

// Codes: element g of all weights (in file order) holds g % kLow + 1 in the
// first run and g / kLow + kHighBase in the second; the ranges do not meet,
// so a value the two runs agree on is no code (a constant of the graph).
constexpr int64_t kLow = 4096;
constexpr int64_t kHighBase = 2 * kLow + 1;
constexpr int64_t kMaxCode = (int64_t(1) << 24) - kHighBase;  // exact floats

bool is_initializer(const ir::Value* v) { return v->constant && !v->producer; }

bool is_weight(const ir::Value& v) {
  if (!is_initializer(&v) || v.constant->dtype != ir::DType::Float || v.uses.empty()) return false;
  for (const ir::Use& u : v.uses)
    if (!is_scalar_attribute_slot(*u.node, static_cast<size_t>(u.index))) return true;
  return false;
}

void encode(ir::Model& m, const std::vector<OriginalWeight>& originals, bool high) {
  for (const OriginalWeight& o : originals) {
    ir::Value* v = m.graph.find_value(o.name);
    ir::Tensor t = *v->constant;
    for (size_t e = 0; e < t.f.size(); ++e) {
      const int64_t g = o.offset + static_cast<int64_t>(e);
      t.f[e] = static_cast<float>(high ? g / kLow + kHighBase : g % kLow + 1);
    }
    t.onnx_proto.clear();
    v->constant = std::make_shared<ir::Tensor>(std::move(t));
  }
}

std::string structure(const ir::Model& m) {
  std::string s;
  for (const ir::Node* n : m.graph.topological_order()) {
    s += n->domain + "." + n->op_type + "(";
    for (const ir::Value* v : n->inputs) s += (v ? v->name : std::string()) + ",";
    s += ");";
  }
  return s;
}

}  // namespace

bool is_scalar_attribute_slot(const ir::Node& n, size_t input) {
  return n.domain.empty() && n.op_type == "Clip" && (input == 1 || input == 2);
}

RuntimeWeightPlan plan_runtime_weights(std::unique_ptr<ir::Model>& model, const std::string& origin,
                                       bool run, std::vector<std::string>* fired) {
  RuntimeWeightPlan plan;
  int64_t total = 0;
  for (const auto& v : model->graph.values()) {
    if (!is_weight(*v)) continue;
    plan.originals.push_back({v->name, v->constant->shape, total});
    total += v->constant->numel();
  }
  if (total > kLow * kMaxCode)
    throw Error(origin + ": --weights=runtime: the weights have " + std::to_string(total) +
                " elements, more than the compiler can trace through the rewrites");

  std::unique_ptr<ir::Model> a = io::clone_model(*model), b = io::clone_model(*model);
  encode(*a, plan.originals, false);
  encode(*b, plan.originals, true);
  if (run) {
    std::vector<std::string> fb;
    *fired = run_rewrites(*a, /*runtime_weights=*/true);
    fb = run_rewrites(*b, /*runtime_weights=*/true);
    if (fb != *fired || structure(*a) != structure(*b))
      throw Error(origin + ": --weights=runtime: the rewrites depend on the weights' values; compile with "
                  "--no-rewrites or --weights=baked");
  }

  std::map<std::string, int> by_name;
  for (size_t i = 0; i < plan.originals.size(); ++i) by_name[plan.originals[i].name] = static_cast<int>(i);
  for (const auto& va : a->graph.values()) {
    if (!is_initializer(va.get()) || va->constant->dtype != ir::DType::Float || va->uses.empty()) continue;
    const ir::Value* vb = b->graph.find_value(va->name);
    if (!vb || !vb->constant || vb->constant->f.size() != va->constant->f.size())
      throw Error(origin + ": --weights=runtime: initializer '" + va->name + "' differs between two runs of the rewrites");
    const std::vector<float>& lo = va->constant->f;
    const std::vector<float>& hi = vb->constant->f;
    if (lo == hi) continue;  // a constant of the graph, not made from weights: baked
    auto it = by_name.find(va->name);
    if (it != by_name.end()) {
      const OriginalWeight& o = plan.originals[it->second];
      bool same = va->constant->shape == o.shape;
      for (size_t e = 0; same && e < lo.size(); ++e)
        same = lo[e] == static_cast<float>((o.offset + static_cast<int64_t>(e)) % kLow + 1);
      if (same) {
        plan.unchanged[va->name] = it->second;
        continue;
      }
    }
    DerivedWeight d;
    d.sources.resize(lo.size());
    d.index.resize(lo.size());
    for (size_t e = 0; e < lo.size(); ++e) {
      if (lo[e] == 0 && hi[e] == 0) {
        d.sources[e] = -1;
        continue;
      }
      const bool coded = lo[e] >= 1 && lo[e] <= kLow && hi[e] >= kHighBase && hi[e] < kHighBase + kMaxCode &&
                         std::floor(lo[e]) == lo[e] && std::floor(hi[e]) == hi[e];
      const int64_t g = coded ? (static_cast<int64_t>(hi[e]) - kHighBase) * kLow + static_cast<int64_t>(lo[e]) - 1 : -1;
      if (g < 0 || g >= total)
        throw Error(origin + ": --weights=runtime: the rewrites compute initializer '" + va->name +
                    "' from the weights instead of rearranging them; compile with --no-rewrites or --weights=baked");
      auto src = std::upper_bound(plan.originals.begin(), plan.originals.end(), g,
                                  [](int64_t x, const OriginalWeight& w) { return x < w.offset; }) - 1;
      d.sources[e] = static_cast<int32_t>(src - plan.originals.begin());
      d.index[e] = g - src->offset;
    }
    plan.derived[va->name] = std::move(d);
  }
  model = std::move(a);
  return plan;
}

}  // namespace batchconv::compiler

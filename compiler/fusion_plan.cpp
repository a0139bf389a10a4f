#include "fusion_plan.h"

#include <map>

#include "elementwise.h"

namespace batchconv::compiler {
namespace {

// The nodes that take an epilogue: each stores its result from register tiles.
bool is_producer(const ir::Node& n) {
  if (n.domain.empty() || n.domain == "ai.onnx") return n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "MatMul";
  return n.domain == "batchconv" && n.op_type == "BatchedWeightConv";
}

// The two readers of v in v * act(v), act a one-input elementwise node
// read only by the Mul, neither a graph output; {nullptr, nullptr} otherwise.
struct SelfGate {
  const ir::Node* act = nullptr;
  const ir::Node* mul = nullptr;
};

SelfGate self_gate(const ir::Value& v) {
  if (v.uses.size() != 2) return {};
  for (int a = 0; a < 2; ++a) {
    const ir::Node* act = v.uses[a].node;
    const ir::Node* mul = v.uses[1 - a].node;
    if (act->dead || mul->dead || !is_elementwise(*act) || act->inputs.size() != 1 || act->outputs.size() != 1 ||
        !act->outputs[0])
      continue;
    const ir::Value* gated = act->outputs[0];
    if (gated->is_graph_output || gated->uses.size() != 1 || gated->uses[0].node != mul) continue;
    if (mul->op_type != "Mul" || !is_elementwise(*mul) || mul->inputs.size() != 2 || mul->outputs.size() != 1 ||
        !mul->outputs[0])
      continue;
    const bool pair = (mul->inputs[0] == &v && mul->inputs[1] == gated) || (mul->inputs[1] == &v && mul->inputs[0] == gated);
    if (pair) return {act, mul};
  }
  return {};
}

}  // namespace

void plan_fusions(LoweringContext& cx) {
  const std::vector<ir::Node*> order = cx.model().graph.topological_order();
  std::map<const ir::Node*, size_t> position;
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  for (size_t at = 0; at < order.size(); ++at) {
    const ir::Node& n = *order[at];
    if (n.dead || !is_producer(n) || n.outputs.empty() || !n.outputs[0]) continue;
    // Ready before the producer runs.
    auto ready = [&](const ir::Value* v) {
      if (!v || v->constant || !v->producer) return true;
      auto p = position.find(v->producer);
      return p != position.end() && p->second < at;
    };
    std::vector<const ir::Node*> chain;
    const ir::Value* value = n.outputs[0];
    while (!value->is_graph_output) {
      // v * act(v) (SiLU as exported: Sigmoid, then Mul): both readers join.
      if (const SelfGate gate = self_gate(*value); gate.act) {
        if (cx.options().relu_epilogues_only) break;
        chain.push_back(gate.act);
        chain.push_back(gate.mul);
        value = gate.mul->outputs[0];
        continue;
      }
      if (value->uses.size() != 1) break;
      const ir::Use& use = value->uses[0];
      const ir::Node* user = use.node;
      if (user->dead || !is_elementwise(*user) || static_cast<size_t>(use.index) >= elementwise_operands(*user)) break;
      if (user->outputs.empty() || !user->outputs[0]) break;
      bool fits = true;
      for (size_t k = 0; k < user->inputs.size(); ++k)
        if (k != static_cast<size_t>(use.index) && !ready(user->inputs[k])) fits = false;
      for (size_t k = 1; k < user->outputs.size(); ++k)
        if (user->outputs[k] && !user->outputs[k]->uses.empty()) fits = false;
      if (!fits) break;
      if (cx.options().relu_epilogues_only && (user->op_type != "Relu" || n.op_type == "Gemm" || n.op_type == "MatMul"))
        break;
      chain.push_back(user);
      if (cx.options().relu_epilogues_only) break;
      value = user->outputs[0];
    }
    if (!chain.empty()) cx.fuse_epilogue(&n, std::move(chain));
  }
}

}  // namespace batchconv::compiler

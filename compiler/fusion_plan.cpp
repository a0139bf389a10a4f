#include "fusion_plan.h"

namespace batchconv::compiler {

void plan_fusions(LoweringContext& cx) {
  for (const auto& node : cx.model().graph.nodes()) {
    const ir::Node& n = *node;
    const bool conv = (n.domain.empty() || n.domain == "ai.onnx") ? n.op_type == "Conv"
                                                                   : n.domain == "batchconv" && n.op_type == "BatchedWeightConv";
    if (n.dead || !conv || n.outputs.empty() || !n.outputs[0]) continue;
    const ir::Value* result = n.outputs[0];
    if (result->is_graph_output || result->uses.size() != 1) continue;
    const ir::Node* user = result->uses[0].node;
    if (user->dead || user->op_type != "Relu" || !(user->domain.empty() || user->domain == "ai.onnx")) continue;
    cx.fuse_activation(&n, user);
  }
}

}  // namespace batchconv::compiler

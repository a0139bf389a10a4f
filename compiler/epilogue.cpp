#include "epilogue.h"

#include "elementwise.h"

namespace batchconv::compiler {

Epilogue fitted_epilogue(LoweringContext& cx, const ir::Node& producer, const std::vector<int64_t>& shape) {
  Epilogue e;
  const ir::Value* value = producer.outputs[0];
  for (const ir::Node* node : cx.epilogue(&producer)) {
    bool fits = true;
    size_t chained = 0;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      if (node->inputs[i] == value) {
        chained = i;
      } else if (i < elementwise_operands(*node)) {
        try {
          fits = fits && broadcast_shapes(shape, cx.input(*node, i).shape) == shape;
        } catch (const std::invalid_argument&) {
          fits = false;
        }
      }
    }
    if (!fits) break;
    e.nodes.push_back(node);
    e.chained.push_back(chained);
    value = node->outputs[0];
  }
  cx.truncate_epilogue(&producer, e.nodes.size());
  if (!e.nodes.empty()) cx.epilogue_lines.push_back("node " + ir::describe(&producer) + ": " + e.description());
  return e;
}

Halide::Expr Epilogue::apply(LoweringContext& cx, Halide::Expr value, const std::vector<int64_t>& shape,
                             const std::vector<Halide::Expr>& idx) const {
  for (size_t k = 0; k < nodes.size(); ++k) {
    const ir::Node& node = *nodes[k];
    const ElementwiseOp op = elementwise_op(cx, node, shape);
    std::vector<Halide::Expr> values;
    for (size_t i = 0; i < op.operands; ++i)
      values.push_back(i == chained[k] ? value : read_broadcast(cx.input(node, i), shape, idx));
    value = op.at(values, idx);
  }
  return value;
}

const ir::Value* Epilogue::result(const ir::Node& producer) const {
  return nodes.empty() ? producer.outputs[0] : nodes.back()->outputs[0];
}

void Epilogue::define(LoweringContext& cx, const ir::Node& producer, const LTensor& t) const {
  cx.define(producer.outputs[0], t);
  for (const ir::Node* node : nodes) cx.define(node->outputs[0], t);
}

std::string Epilogue::description() const {
  std::string out;
  for (const ir::Node* node : nodes)
    out += (out.empty() ? "" : ", ") + node->op_type + " -> '" + node->outputs[0]->name + "'";
  return out;
}

}  // namespace batchconv::compiler

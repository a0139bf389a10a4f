#include "epilogue.h"

#include <map>
#include <set>

#include "elementwise.h"

namespace batchconv::compiler {

Epilogue fitted_epilogue(LoweringContext& cx, const ir::Node& producer, const std::vector<int64_t>& shape) {
  Epilogue e;
  e.producer_value = producer.outputs[0];
  // The chain's values so far: a node reads each of them at the element.
  std::set<const ir::Value*> chain = {producer.outputs[0]};
  for (const ir::Node* node : cx.epilogue(&producer)) {
    bool fits = true;
    for (size_t i = 0; i < node->inputs.size() && i < elementwise_operands(*node); ++i) {
      if (chain.count(node->inputs[i])) continue;
      try {
        fits = fits && broadcast_shapes(shape, cx.input(*node, i).shape) == shape;
      } catch (const std::invalid_argument&) {
        fits = false;
      }
    }
    if (!fits) break;
    e.nodes.push_back(node);
    chain.insert(node->outputs[0]);
  }
  // Every kept value is stored as the last one: cut nowhere a node left
  // out reads another (between the two readers of x in x * act(x)).
  const std::vector<const ir::Node*>& planned = cx.epilogue(&producer);
  while (!e.nodes.empty()) {
    std::set<const ir::Value*> earlier = {producer.outputs[0]};
    for (size_t k = 0; k + 1 < e.nodes.size(); ++k) earlier.insert(e.nodes[k]->outputs[0]);
    bool split = false;
    for (size_t k = e.nodes.size(); k < planned.size(); ++k)
      for (const ir::Value* in : planned[k]->inputs) split = split || earlier.count(in) > 0;
    if (!split) break;
    e.nodes.pop_back();
  }
  cx.truncate_epilogue(&producer, e.nodes.size());
  if (!e.nodes.empty()) cx.epilogue_lines.push_back("node " + ir::describe(&producer) + ": " + e.description());
  return e;
}

Halide::Expr Epilogue::apply(LoweringContext& cx, Halide::Expr value, const std::vector<int64_t>& shape,
                             const std::vector<Halide::Expr>& idx) const {
  std::map<const ir::Value*, Halide::Expr> known = {{producer_value, value}};
  for (const ir::Node* node : nodes) {
    const ElementwiseOp op = elementwise_op(cx, *node, shape);
    std::vector<Halide::Expr> values;
    for (size_t i = 0; i < op.operands; ++i) {
      auto it = known.find(node->inputs[i]);
      values.push_back(it != known.end() ? it->second : read_broadcast(cx.input(*node, i), shape, idx));
    }
    value = op.at(values, idx);
    known[node->outputs[0]] = value;
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

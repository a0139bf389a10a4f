// Elementwise ops, inlined into their consumers (or into a conv's epilogue,
// fusion_plan.h): the arithmetic of elementwise.h, with numpy broadcasting
// of the operands; and Identity.
#include "elementwise.h"
#include "ops.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

void lower_elementwise(LoweringContext& cx, const ir::Node& n) {
  const size_t operands = elementwise_operands(n);
  std::vector<int64_t> shape = cx.input(n, 0).shape;
  for (size_t k = 1; k < operands; ++k) {
    try {
      shape = broadcast_shapes(shape, cx.input(n, k).shape);
    } catch (const std::invalid_argument& e) {
      cx.fail(n, e.what());
    }
  }
  const ElementwiseOp op = elementwise_op(cx, n, shape);
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  std::vector<Expr> idx = onnx_index(vars);
  std::vector<Expr> values;
  for (size_t k = 0; k < operands; ++k) values.push_back(read_broadcast(cx.input(n, k), shape, idx));
  Func f = cx.func(n);
  f(vars) = op.at(values, idx);
  LTensor t = make_tensor(f, shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  for (const std::string& op : elementwise_op_types()) r[op] = lower_elementwise;
  // Identity (and Dropout in inference) is the same value under another name.
  r["Identity"] = [](LoweringContext& cx, const ir::Node& n) { cx.define(n.outputs[0], cx.input(n, 0)); };
}

}  // namespace batchconv::compiler

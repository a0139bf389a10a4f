#include "elementwise.h"

#include <cmath>
#include <map>
#include <string>

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Values = std::vector<Expr>;

bool onnx_domain(const ir::Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

using Unary = Expr (*)(Expr);
using Binary = Expr (*)(Expr, Expr);

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> ops = {
      {"Relu", [](Expr v) { return Halide::max(v, 0.0f); }},
      {"Sigmoid", [](Expr v) { return 1.0f / (1.0f + Halide::exp(-v)); }},
      {"Tanh", [](Expr v) { return Halide::tanh(v); }},
      {"Exp", [](Expr v) { return Halide::exp(v); }},
      {"Neg", [](Expr v) { return -v; }},
      {"Sqrt", [](Expr v) { return Halide::sqrt(v); }},
  };
  return ops;
}

const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> ops = {
      {"Add", [](Expr a, Expr b) { return a + b; }},
      {"Sub", [](Expr a, Expr b) { return a - b; }},
      {"Mul", [](Expr a, Expr b) { return a * b; }},
      {"Div", [](Expr a, Expr b) { return a / b; }},
  };
  return ops;
}

float attr_float(const ir::Node& n, const std::string& k, float def) {
  const ir::Attribute* a = n.attr(k);
  return a ? a->f : def;
}

ElementwiseOp clip(LoweringContext& cx, const ir::Node& n) {
  float lo = -INFINITY, hi = INFINITY;
  if (cx.opset("") >= 11) {
    auto bound = [&](size_t k, float def) {
      const LTensor* t = cx.optional_input(n, k);
      if (!t) return def;
      if (!t->constant || t->numel() != 1) cx.fail(n, "min/max must be scalar constants");
      return t->constant->is_float() ? t->constant->f[0] : static_cast<float>(t->constant->i[0]);
    };
    lo = bound(1, lo);
    hi = bound(2, hi);
  } else {
    lo = attr_float(n, "min", lo);
    hi = attr_float(n, "max", hi);
  }
  return {1, [lo, hi](const Values& v, const Values&) { return Halide::clamp(v[0], lo, hi); }};
}

ElementwiseOp batch_norm(LoweringContext& cx, const ir::Node& n, const std::vector<int64_t>& shape) {
  if (n.attr_int("training_mode", 0) != 0) cx.fail(n, "training_mode=1 is not supported (inference only)");
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    if (n.outputs[k] && !n.outputs[k]->uses.empty()) {
      cx.fail(n, "output " + std::to_string(k) + " (running statistics) is not supported (inference only)");
    }
  }
  if (shape.size() < 2) cx.fail(n, "input of shape " + shape_str(shape) + " has no channel dimension");
  const int64_t C = shape[1];
  for (size_t k = 1; k <= 4; ++k) {
    if (cx.input(n, k).shape != std::vector<int64_t>{C}) {
      cx.fail(n, "input " + std::to_string(k) + " of shape " + shape_str(cx.input(n, k).shape) + ", expected (" +
                     std::to_string(C) + ")");
    }
  }
  const float eps = attr_float(n, "epsilon", 1e-5f);
  const LTensor scale = cx.input(n, 1), bias = cx.input(n, 2), mean = cx.input(n, 3), var = cx.input(n, 4);
  return {1, [=](const Values& v, const Values& idx) {
            const Expr c = idx[1];
            return (v[0] - read(mean, {c})) * (read(scale, {c}) / Halide::sqrt(read(var, {c}) + eps)) +
                   read(bias, {c});
          }};
}

}  // namespace

bool is_elementwise(const ir::Node& n) {
  if (!onnx_domain(n)) return false;
  const std::string& op = n.op_type;
  return unary_ops().count(op) || binary_ops().count(op) || op == "LeakyRelu" || op == "Clip" ||
         op == "BatchNormalization";
}

size_t elementwise_operands(const ir::Node& n) { return binary_ops().count(n.op_type) ? 2 : 1; }

ElementwiseOp elementwise_op(LoweringContext& cx, const ir::Node& n, const std::vector<int64_t>& shape) {
  const std::string& op = n.op_type;
  if (auto u = unary_ops().find(op); u != unary_ops().end()) {
    const Unary f = u->second;
    return {1, [f](const Values& v, const Values&) { return f(v[0]); }};
  }
  if (auto b = binary_ops().find(op); b != binary_ops().end()) {
    const Binary f = b->second;
    return {2, [f](const Values& v, const Values&) { return f(v[0], v[1]); }};
  }
  if (op == "LeakyRelu") {
    const float alpha = attr_float(n, "alpha", 0.01f);
    return {1, [alpha](const Values& v, const Values&) { return Halide::select(v[0] < 0.0f, v[0] * alpha, v[0]); }};
  }
  if (op == "Clip") return clip(cx, n);
  if (op == "BatchNormalization") return batch_norm(cx, n, shape);
  cx.fail(n, "not an elementwise op");
}

}  // namespace batchconv::compiler

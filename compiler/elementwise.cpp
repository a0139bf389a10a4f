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
      {"Erf", [](Expr v) { return Halide::erf(v); }},
      {"Abs", [](Expr v) { return Halide::abs(v); }},
      {"Reciprocal", [](Expr v) { return 1.0f / v; }},
      {"Log", [](Expr v) { return Halide::log(v); }},
      // log(1 + e^v), without overflowing e^v where it equals v in float32.
      {"Softplus", [](Expr v) { return Halide::select(v > 20.0f, v, Halide::log(1.0f + Halide::exp(v))); }},
      // x * relu6(x + 3) / 6: MobileNetV3's activation.
      {"HardSwish", [](Expr v) { return v * Halide::clamp(v * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f); }},
  };
  return ops;
}

const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> ops = {
      {"Add", [](Expr a, Expr b) { return a + b; }},
      {"Sub", [](Expr a, Expr b) { return a - b; }},
      {"Mul", [](Expr a, Expr b) { return a * b; }},
      {"Div", [](Expr a, Expr b) { return a / b; }},
      {"Max", [](Expr a, Expr b) { return Halide::max(a, b); }},
      {"Min", [](Expr a, Expr b) { return Halide::min(a, b); }},
  };
  return ops;
}

float attr_float(const ir::Node& n, const std::string& k, float def) {
  const ir::Attribute* a = n.attr(k);
  return a ? a->f : def;
}

// x^y. A scalar constant y of 1, 2, 3 or 0.5 is products or a square root
// (LayerNorm's export squares its deviations: Pow(d, 2)); others are
// Halide's pow, whose float32 result is exact for neither.
ElementwiseOp pow_op(LoweringContext& cx, const ir::Node& n) {
  const LTensor& e = cx.input(n, 1);
  std::optional<double> y;
  if (e.constant && e.numel() == 1) y = e.constant->is_float() ? e.constant->f[0] : double(e.constant->i[0]);
  return {2, [y](const Values& v, const Values&) {
            const Expr a = v[0];
            if (y && *y == 1.0) return a;
            if (y && *y == 2.0) return a * a;
            if (y && *y == 3.0) return a * a * a;
            if (y && *y == 0.5) return Halide::sqrt(a);
            return y ? Halide::pow(a, Expr(static_cast<float>(*y))) : Halide::pow(a, v[1]);
          }};
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
  return unary_ops().count(op) || binary_ops().count(op) || op == "Pow" || op == "LeakyRelu" || op == "HardSigmoid" ||
         op == "Clip" || op == "BatchNormalization";
}

std::vector<std::string> elementwise_op_types() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : unary_ops()) out.push_back(name);
  for (const auto& [name, fn] : binary_ops()) out.push_back(name);
  for (const char* name : {"Pow", "LeakyRelu", "HardSigmoid", "Clip", "BatchNormalization"}) out.push_back(name);
  return out;
}

size_t elementwise_operands(const ir::Node& n) {
  return binary_ops().count(n.op_type) || n.op_type == "Pow" ? 2 : 1;
}

ElementwiseOp elementwise_op(LoweringContext& cx, const ir::Node& n, const std::vector<int64_t>& shape) {
  const std::string& op = n.op_type;
  if (auto u = unary_ops().find(op); u != unary_ops().end()) {
    const Unary f = u->second;
    return {1, [f](const Values& v, const Values&) { return f(v[0]); }};
  }
  if (auto b = binary_ops().find(op); b != binary_ops().end()) {
    // Max and Min take any number of inputs in ONNX.
    if (n.inputs.size() != 2) cx.fail(n, std::to_string(n.inputs.size()) + " inputs; only 2 are supported");
    const Binary f = b->second;
    return {2, [f](const Values& v, const Values&) { return f(v[0], v[1]); }};
  }
  if (op == "LeakyRelu") {
    const float alpha = attr_float(n, "alpha", 0.01f);
    return {1, [alpha](const Values& v, const Values&) { return Halide::select(v[0] < 0.0f, v[0] * alpha, v[0]); }};
  }
  if (op == "Pow") return pow_op(cx, n);
  if (op == "HardSigmoid") {
    const float alpha = attr_float(n, "alpha", 0.2f), beta = attr_float(n, "beta", 0.5f);
    return {1, [=](const Values& v, const Values&) { return Halide::clamp(v[0] * alpha + beta, 0.0f, 1.0f); }};
  }
  if (op == "Clip") return clip(cx, n);
  if (op == "BatchNormalization") return batch_norm(cx, n, shape);
  cx.fail(n, "not an elementwise op");
}

}  // namespace batchconv::compiler

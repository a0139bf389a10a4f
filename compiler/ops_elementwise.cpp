// Elementwise ops, inlined into their consumers: binary arithmetic with
// numpy broadcasting, activations, Identity, and inference-mode
// BatchNormalization (a per-channel affine map).
#include <cmath>

#include "ops.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

void binary(LoweringContext& cx, const ir::Node& n, const std::function<Expr(Expr, Expr)>& op) {
  const LTensor& a = cx.input(n, 0);
  const LTensor& b = cx.input(n, 1);
  std::vector<int64_t> shape;
  try {
    shape = broadcast_shapes(a.shape, b.shape);
  } catch (const std::invalid_argument& e) {
    cx.fail(n, e.what());
  }
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  std::vector<Expr> idx = onnx_index(vars);
  Func f = cx.func(n);
  f(vars) = op(read_broadcast(a, shape, idx), read_broadcast(b, shape, idx));
  LTensor t = make_tensor(f, shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

void unary(LoweringContext& cx, const ir::Node& n, const std::function<Expr(Expr)>& op) {
  const LTensor& a = cx.input(n, 0);
  std::vector<Var> vars = make_vars(a.rank());
  Func f = cx.func(n);
  f(vars) = op(read(a, onnx_index(vars)));
  LTensor t = make_tensor(f, a.shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

float attr_float(const ir::Node& n, const std::string& k, float def) {
  const ir::Attribute* a = n.attr(k);
  return a ? a->f : def;
}

void clip(LoweringContext& cx, const ir::Node& n) {
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
  unary(cx, n, [lo, hi](Expr v) { return Halide::clamp(v, lo, hi); });
}

void batch_norm(LoweringContext& cx, const ir::Node& n) {
  if (n.attr_int("training_mode", 0) != 0) cx.fail(n, "training_mode=1 is not supported (inference only)");
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    if (n.outputs[k] && !n.outputs[k]->uses.empty()) {
      cx.fail(n, "output " + std::to_string(k) + " (running statistics) is not supported (inference only)");
    }
  }
  const LTensor& x = cx.input(n, 0);
  if (x.rank() < 2) cx.fail(n, "input of shape " + shape_str(x.shape) + " has no channel dimension");
  const int64_t C = x.shape[1];
  for (size_t k = 1; k <= 4; ++k) {
    if (cx.input(n, k).shape != std::vector<int64_t>{C}) {
      cx.fail(n, "input " + std::to_string(k) + " of shape " + shape_str(cx.input(n, k).shape) + ", expected (" +
                     std::to_string(C) + ")");
    }
  }
  const float eps = attr_float(n, "epsilon", 1e-5f);
  std::vector<Var> vars = make_vars(x.rank());
  std::vector<Expr> idx = onnx_index(vars);
  Expr c = idx[1];
  Expr scale = read(cx.input(n, 1), {c}), bias = read(cx.input(n, 2), {c});
  Expr mean = read(cx.input(n, 3), {c}), var = read(cx.input(n, 4), {c});
  Func f = cx.func(n);
  f(vars) = (read(x, idx) - mean) * (scale / Halide::sqrt(var + eps)) + bias;
  LTensor t = make_tensor(f, x.shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  r["Add"] = [](LoweringContext& cx, const ir::Node& n) { binary(cx, n, [](Expr a, Expr b) { return a + b; }); };
  r["Sub"] = [](LoweringContext& cx, const ir::Node& n) { binary(cx, n, [](Expr a, Expr b) { return a - b; }); };
  r["Mul"] = [](LoweringContext& cx, const ir::Node& n) { binary(cx, n, [](Expr a, Expr b) { return a * b; }); };
  r["Div"] = [](LoweringContext& cx, const ir::Node& n) { binary(cx, n, [](Expr a, Expr b) { return a / b; }); };
  r["Relu"] = [](LoweringContext& cx, const ir::Node& n) {
    unary(cx, n, [](Expr v) { return Halide::max(v, 0.0f); });
  };
  r["LeakyRelu"] = [](LoweringContext& cx, const ir::Node& n) {
    const float alpha = attr_float(n, "alpha", 0.01f);
    unary(cx, n, [alpha](Expr v) { return Halide::select(v < 0.0f, v * alpha, v); });
  };
  r["Sigmoid"] = [](LoweringContext& cx, const ir::Node& n) {
    unary(cx, n, [](Expr v) { return 1.0f / (1.0f + Halide::exp(-v)); });
  };
  r["Tanh"] = [](LoweringContext& cx, const ir::Node& n) { unary(cx, n, [](Expr v) { return Halide::tanh(v); }); };
  r["Exp"] = [](LoweringContext& cx, const ir::Node& n) { unary(cx, n, [](Expr v) { return Halide::exp(v); }); };
  r["Neg"] = [](LoweringContext& cx, const ir::Node& n) { unary(cx, n, [](Expr v) { return -v; }); };
  r["Sqrt"] = [](LoweringContext& cx, const ir::Node& n) { unary(cx, n, [](Expr v) { return Halide::sqrt(v); }); };
  r["Clip"] = clip;
  r["BatchNormalization"] = batch_norm;
  // Identity (and Dropout in inference) is the same value under another name.
  r["Identity"] = [](LoweringContext& cx, const ir::Node& n) { cx.define(n.outputs[0], cx.input(n, 0)); };
}

}  // namespace batchconv::compiler

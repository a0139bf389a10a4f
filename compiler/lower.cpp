#include "lower.h"

#include <algorithm>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "ops.h"

namespace batchconv::compiler {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

namespace {

// Elements above which a node with constant inputs is lowered instead of
// being evaluated at compile time.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 22;

std::vector<int64_t> reversed(std::vector<int64_t> s) {
  std::reverse(s.begin(), s.end());
  return s;
}

// Dense row-major constraints on a buffer whose dims are `halide_extents`
// (innermost first): static shapes make Halide check every call and fold
// all index arithmetic.
void constrain_dense(Halide::OutputImageParam p, const std::vector<int64_t>& halide_extents) {
  int64_t stride = 1;
  for (size_t k = 0; k < halide_extents.size(); ++k) {
    p.dim(int(k)).set_bounds(0, static_cast<int32_t>(halide_extents[k]));
    p.dim(int(k)).set_stride(static_cast<int32_t>(stride));
    stride *= halide_extents[k];
  }
}

std::string dims_of(const std::vector<ir::Dim>& d) {
  std::string s = "(";
  for (size_t k = 0; k < d.size(); ++k) {
    s += (k ? ", " : "") + (d[k].known() ? std::to_string(d[k].value) : (d[k].param.empty() ? "?" : d[k].param));
  }
  return s + ")";
}

void lower_input(LoweringContext& cx, const ir::Value* v) {
  if (v->type.dtype != ir::DType::Float) {
    throw Error(cx.origin() + ": input '" + v->name + "' has type " + ir::dtype_name(v->type.dtype) +
                "; only float32 inputs are supported");
  }
  std::vector<int64_t> shape;
  for (const ir::Dim& d : *v->type.shape) shape.push_back(d.value);
  ParamInfo info;
  info.onnx_name = v->name;
  info.c_name = cx.unique_c_name(v->name);
  info.shape = shape;
  info.param = Halide::ImageParam(Halide::Float(32), static_cast<int>(shape.size()), info.c_name);
  constrain_dense(info.param, reversed(shape));
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  Func f(cx.unique_c_name("f_in_" + v->name));
  f(vars) = info.param(std::vector<Expr>(vars.begin(), vars.end()));
  cx.define(v, make_tensor(f, shape));
  cx.inputs.push_back(std::move(info));
}

void lower_initializer(LoweringContext& cx, const ir::Value* v) {
  const ir::Tensor& t = *v->constant;
  if (cx.options().runtime_weights && t.dtype == ir::DType::Float && !v->uses.empty()) {
    ParamInfo info;
    info.onnx_name = v->name;
    info.c_name = cx.unique_c_name(v->name);
    info.shape = t.shape;
    info.param = Halide::ImageParam(Halide::Float(32), static_cast<int>(t.shape.size()), info.c_name);
    constrain_dense(info.param, reversed(t.shape));
    std::vector<Var> vars = make_vars(static_cast<int>(t.shape.size()));
    Func f(cx.unique_c_name("f_w_" + v->name));
    f(vars) = info.param(std::vector<Expr>(vars.begin(), vars.end()));
    cx.define(v, make_tensor(f, t.shape));
    cx.weights.push_back(std::move(info));
    return;
  }
  cx.define(v, constant_tensor(t, cx.unique_c_name("c_" + v->name)));
}

// Evaluates a node whose inputs are all compile-time constants with the
// reference interpreter. False when it cannot (no kernel, too large).
bool fold_node(LoweringContext& cx, const ir::Node& n) {
  std::vector<const ir::Tensor*> ins;
  int64_t elements = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const LTensor* t = cx.optional_input(n, k);
    if (t && !t->constant) return false;
    ins.push_back(t ? &*t->constant : nullptr);
    if (t) elements += t->numel();
  }
  if (!interp::supports(n) || elements > kMaxFoldedElements) return false;
  std::vector<ir::Tensor> outs;
  try {
    outs = interp::run_node(n, ins, cx.opset(n.domain));
  } catch (const std::exception& e) {
    cx.fail(n, std::string("evaluating constant node: ") + e.what());
  }
  for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k) {
    if (n.outputs[k]) cx.define(n.outputs[k], constant_tensor(outs[k], cx.unique_c_name("c_" + n.outputs[k]->name)));
  }
  return true;
}

void check_shapes(const LoweringContext& cx, const ir::Node& n) {
  for (const ir::Value* v : n.outputs) {
    if (!v || (v->uses.empty() && !v->is_graph_output)) continue;
    if (!cx.has(v)) cx.fail(n, "output '" + v->name + "' was not lowered (internal error)");
    const LTensor& t = cx.at(v);
    if (numel(t.shape) == 0) cx.fail(n, "output '" + v->name + "' of shape " + shape_str(t.shape) + " is empty; empty tensors are not supported");
    if (!v->type.shape) continue;
    const auto& d = *v->type.shape;
    bool same = d.size() == t.shape.size();
    for (size_t k = 0; same && k < d.size(); ++k) same = !d[k].known() || d[k].value == t.shape[k];
    if (!same) {
      cx.fail(n, "computed output shape " + shape_str(t.shape) + " differs from the model's " + dims_of(d) +
                     " for '" + v->name + "'");
    }
  }
}

void lower_output(LoweringContext& cx, const ir::Value* v, std::vector<std::string>& used) {
  const LTensor& t = cx.at(v);
  OutputInfo o;
  o.onnx_name = v->name;
  o.c_name = cx.unique_c_name(v->name);
  o.shape = t.shape;
  auto unused = [&](const Func& f) { return std::find(used.begin(), used.end(), f.name()) == used.end(); };
  if (t.storage && unused(*t.storage)) {
    o.func = *t.storage;  // computed straight into the caller's memory
    o.internal_extents = t.storage_extents;
  } else if (!t.constant && unused(t.f) && t.f.defined()) {
    o.func = t.f;
    o.internal_extents = reversed(t.shape);
  } else {
    std::vector<Var> vars = make_vars(t.rank());
    o.func = Func(cx.unique_c_name("f_out_" + v->name));
    o.func(vars) = t.f(std::vector<Expr>(vars.begin(), vars.end()));
    o.internal_extents = reversed(t.shape);
  }
  used.push_back(o.func.name());
  constrain_dense(o.func.output_buffer(), o.internal_extents);
  cx.outputs.push_back(std::move(o));
}

}  // namespace

void bind_input_shapes(ir::Model& model, const std::string& origin,
                       const std::map<std::string, std::vector<int64_t>>& shapes) {
  bool changed = false;
  for (const auto& [name, shape] : shapes) {
    auto it = std::find_if(model.graph.inputs.begin(), model.graph.inputs.end(),
                           [&](const ir::Value* v) { return v->name == name; });
    if (it == model.graph.inputs.end()) {
      std::string names;
      for (const ir::Value* v : model.graph.inputs) names += (names.empty() ? "'" : ", '") + v->name + "'";
      throw Error(origin + ": --shape names input '" + name + "', but the model's inputs are " + names);
    }
    ir::Value* v = *it;
    if (v->type.shape && v->type.shape->size() != shape.size()) {
      throw Error(origin + ": --shape " + name + " has " + std::to_string(shape.size()) + " dims, the input has " +
                  std::to_string(v->type.shape->size()) + " " + dims_of(*v->type.shape));
    }
    std::vector<ir::Dim> dims;
    for (int64_t d : shape) {
      if (d <= 0) throw Error(origin + ": --shape " + name + ": dims must be positive");
      dims.push_back(ir::Dim{d, ""});
    }
    v->type.shape = dims;
    changed = true;
  }
  for (const ir::Value* v : model.graph.inputs) {
    if (v->constant) continue;
    if (!v->type.shape) {
      throw Error(origin + ": input '" + v->name + "' has no known rank; give its shape with --shape " + v->name +
                  "=d0xd1x...");
    }
    const auto& d = *v->type.shape;
    for (size_t k = 0; k < d.size(); ++k) {
      if (!d[k].known()) {
        throw Error(origin + ": input '" + v->name + "' dim " + std::to_string(k) +
                    (d[k].param.empty() ? "" : " ('" + d[k].param + "')") + " of " + dims_of(d) +
                    " is dynamic; bind it with --shape " + v->name + "=d0xd1x... (static shapes only)");
      }
    }
  }
  if (changed) {
    // Every other shape followed from the old input shapes: forget them and infer again.
    for (const auto& v : model.graph.values()) {
      if (!v->is_graph_input && !v->constant) v->type.shape.reset();
    }
    io::infer_shapes(model);
  }
}

LoweredModel lower_model(const ir::Model& model, const std::string& origin, const LowerOptions& options) {
  LoweringContext cx(model, origin, options);
  const ir::Graph& g = model.graph;
  for (const ir::Value* v : g.inputs) {
    if (v->constant) continue;
    if (!v->type.shape) throw Error(origin + ": input '" + v->name + "' has no known shape");
    for (const ir::Dim& d : *v->type.shape) {
      if (!d.known()) throw Error(origin + ": input '" + v->name + "' has a dynamic dim; bind it with --shape");
    }
    lower_input(cx, v);
  }
  for (const auto& v : g.values()) {
    if (v->constant && !v->producer && (!v->uses.empty() || v->is_graph_output)) lower_initializer(cx, v.get());
  }
  for (const ir::Node* n : g.topological_order()) {
    if (n->dead || cx.is_fused(n)) continue;
    if (fold_node(cx, *n)) continue;
    const OpLowering* lowering = find_op_lowering(n->domain, n->op_type);
    if (!lowering) cx.fail(*n, "unsupported op");
    try {
      (*lowering)(cx, *n);
    } catch (const Halide::CompileError& e) {
      cx.fail(*n, std::string("Halide: ") + e.what());
    }
    check_shapes(cx, *n);
  }
  std::vector<std::string> used;
  for (const ir::Value* v : g.outputs) lower_output(cx, v, used);

  LoweredModel out;
  std::vector<Func> funcs;
  for (const OutputInfo& o : cx.outputs) funcs.push_back(o.func);
  out.pipeline = Halide::Pipeline(funcs);
  for (const ParamInfo& p : cx.inputs) out.arguments.push_back(p.param);
  for (const ParamInfo& p : cx.weights) out.arguments.push_back(p.param);
  out.inputs = cx.inputs;
  out.weights = cx.weights;
  out.outputs = cx.outputs;
  return out;
}

}  // namespace batchconv::compiler

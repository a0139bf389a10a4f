#include "lower.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <set>

#include "interpreter/interpreter.h"
#include "dynamic_batch.h"
#include "fusion_plan.h"
#include "graph_edges.h"
#include "layout_plan.h"
#include "onnx/onnx_io.h"
#include "ops.h"
#include "runtime_weights.h"

namespace batchconv::compiler {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

namespace {

// Elements above which a node with constant inputs is lowered instead of
// being evaluated at compile time.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 22;

std::string dims_of(const std::vector<ir::Dim>& d) {
  std::string s = "(";
  for (size_t k = 0; k < d.size(); ++k) {
    s += (k ? ", " : "") + (d[k].known() ? std::to_string(d[k].value) : (d[k].param.empty() ? "?" : d[k].param));
  }
  return s + ")";
}

// Halide indexes buffers in 32 bits: every value the pipeline holds must stay below 2^31 elements.
constexpr int64_t kMaxElements = (int64_t(1) << 31) - 1;

void check_size(const LoweringContext& cx, const ir::Node* n, const std::string& what, const std::vector<int64_t>& shape) {
  const int64_t count = numel(shape);
  if (count >= 0 && count <= kMaxElements) return;
  const std::string msg = what + " of shape " + shape_str(shape) + " has " +
                          (count < 0 ? std::string("a negative dimension") : "more than 2^31 - 1 elements") +
                          ", beyond Halide's 32-bit indexing";
  if (n) cx.fail(*n, msg);
  throw Error(cx.origin() + ": " + msg);
}

// An ImageParam weight argument and the Func reading it.
LTensor weight_param(LoweringContext& cx, const std::string& name, const std::vector<int64_t>& shape) {
  ParamInfo info;
  info.onnx_name = name;
  info.c_name = cx.unique_c_name(name);
  info.shape = shape;
  info.param = Halide::ImageParam(Halide::Float(32), static_cast<int>(shape.size()), info.c_name);
  constrain_dense(info.param, reversed(shape));
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  Func f(cx.unique_c_name("f_w_" + name));
  f(vars) = info.param(std::vector<Expr>(vars.begin(), vars.end()));
  cx.weights.push_back(std::move(info));
  return make_tensor(f, shape);
}

// Element k (row-major) of t, for k in [0, numel).
Expr flat_read(const LTensor& t, Expr k) {
  k = Halide::clamp(k, 0, static_cast<int>(std::max<int64_t>(1, t.numel()) - 1));
  std::vector<Expr> idx(t.shape.size());
  for (size_t d = t.shape.size(); d-- > 0;) {
    const int extent = static_cast<int>(t.shape[d]);
    idx[d] = k % extent;
    k = k / extent;
  }
  return read(t, idx);
}

// A weight the rewrites rebuilt from the originals, gathered inside the
// pipeline once per call (compute_root) from the caller's weights.
LTensor derived_weight(LoweringContext& cx, const ir::Value* v, const DerivedWeight& d,
                       const std::vector<LTensor>& originals) {
  const std::vector<int64_t>& shape = v->constant->shape;
  std::vector<int> extents;
  for (auto it = shape.rbegin(); it != shape.rend(); ++it) extents.push_back(static_cast<int>(*it));
  Halide::Buffer<int32_t> src(extents, cx.unique_c_name("src_" + v->name));
  Halide::Buffer<int32_t> idx(extents, cx.unique_c_name("idx_" + v->name));
  std::set<int> used;
  for (size_t e = 0; e < d.sources.size(); ++e) {
    src.data()[e] = d.sources[e];
    idx.data()[e] = static_cast<int32_t>(d.index[e]);
    if (d.sources[e] >= 0) used.insert(d.sources[e]);
  }
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  std::vector<Expr> args(vars.begin(), vars.end());
  Expr value = Halide::cast<float>(0);
  for (int s : used) value = Halide::select(src(args) == s, flat_read(originals[s], idx(args)), value);
  Func f(cx.unique_c_name("f_rebuilt_" + v->name));
  f(vars) = value;
  if (cx.target().has_gpu_feature()) {
    schedule_reduction(f, reversed(shape), cx.target());
  } else {
    f.compute_root();
    if (!vars.empty() && shape.back() >= 8) f.vectorize(vars[0], 8, Halide::TailStrategy::GuardWithIf);
  }
  return make_tensor(f, shape);
}

void lower_initializer(LoweringContext& cx, const ir::Value* v, const std::vector<LTensor>& originals) {
  const ir::Tensor& t = *v->constant;
  check_size(cx, nullptr, "initializer '" + v->name + "'", t.shape);
  if (const RuntimeWeightPlan* plan = cx.options().weight_plan) {
    if (auto it = plan->unchanged.find(v->name); it != plan->unchanged.end()) {
      cx.define(v, originals[it->second]);
      return;
    }
    if (auto it = plan->derived.find(v->name); it != plan->derived.end()) {
      cx.define(v, derived_weight(cx, v, it->second, originals));
      return;
    }
    cx.define(v, constant_tensor(t, cx.unique_c_name("c_" + v->name)));
    return;
  }
  bool scalar_attribute = !v->uses.empty();
  for (const ir::Use& u : v->uses) scalar_attribute &= is_scalar_attribute_slot(*u.node, static_cast<size_t>(u.index));
  if (cx.options().runtime_weights && t.dtype == ir::DType::Float && !v->uses.empty() && !scalar_attribute) {
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
  // A large result (a Tile or Expand of a small constant) is computed by the
  // pipeline rather than baked into the library.
  for (const ir::Tensor& t : outs)
    if (t.numel() > kMaxFoldedElements) return false;
  for (size_t k = 0; k < n.outputs.size() && k < outs.size(); ++k) {
    if (n.outputs[k]) cx.define(n.outputs[k], constant_tensor(outs[k], cx.unique_c_name("c_" + n.outputs[k]->name)));
  }
  return true;
}

// The pipeline computes float32: every input the node's schema types as data
// (a type constraint that admits float) must be float32; inputs of a fixed
// non-float type (shapes, axes, indices) must be compile-time constants,
// which the lowering reads as numbers. Ops without a schema (the project's
// own domain) take float32 data only.
// chained: n is in an epilogue; the values of its chain (not yet lowered, float) are skipped.
void check_input_types(const LoweringContext& cx, const ir::Node& n, bool chained = false) {
  const onnx::OpSchema* schema =
      n.domain.empty() ? onnx::OpSchemaRegistry::Schema(n.op_type, static_cast<int>(cx.opset("")), "") : nullptr;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const ir::Value* v = n.inputs[k];
    if (!v || (chained && !cx.has(v))) continue;
    const LTensor* t = cx.optional_input(n, k);
    const ir::DType dt = t && t->constant ? t->constant->dtype : v->type.dtype;
    bool data = true;
    if (schema && !schema->inputs().empty()) {
      const auto& formal = schema->inputs()[std::min(k, schema->inputs().size() - 1)];
      data = false;
      for (const std::string* ty : formal.GetTypes()) data |= *ty == "tensor(float)";
    }
    if (data && dt != ir::DType::Float) {
      cx.fail(n, "input " + std::to_string(k) + " ('" + v->name + "') has type " + ir::dtype_name(dt) +
                     "; the compiler computes float32 only");
    }
    if (!data && !(t && t->constant)) {
      cx.fail(n, "input " + std::to_string(k) + " ('" + v->name + "') of type " + ir::dtype_name(dt) +
                     " must be known at compile time (a constant or initializer)");
    }
  }
}

void check_shapes(const LoweringContext& cx, const ir::Node& n) {
  for (const ir::Value* v : n.outputs) {
    if (!v || (v->uses.empty() && !v->is_graph_output)) continue;
    if (!cx.has(v)) cx.fail(n, "output '" + v->name + "' was not lowered (internal error)");
    const LTensor& t = cx.at(v);
    check_size(cx, &n, "output '" + v->name + "'", t.shape);
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

}  // namespace

void bind_input_shapes(ir::Model& model, const std::string& origin,
                       const std::map<std::string, std::vector<int64_t>>& shapes) {
  bool changed = false;
  for (const auto& entry : shapes) {
    const std::string& name = entry.first;  // (clang cannot capture a structured binding)
    const std::vector<int64_t>& shape = entry.second;
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
                    " is dynamic; bind it with --shape " + v->name + "=d0xd1x..." +
                    (k == 0 ? " or keep the batch a run-time extent with --dynamic-batch" : ""));
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

std::string too_many_nodes(const std::string& origin, size_t live, size_t limit) {
  return origin + ": " + std::to_string(live) + " nodes after rewrites; the compiler lowers at most " +
         std::to_string(limit) + " into one Halide pipeline (Halide's compile time grows faster than "
         "linearly with pipeline depth) and found no cut into parts (model_parts.h); split the model into "
         "smaller ones";
}

LoweredModel lower_model(const ir::Model& model, const std::string& origin, const LowerOptions& options) {
  LoweringContext cx(model, origin, options);
  const ir::Graph& g = model.graph;
  for (const std::string& name : options.channels_last_edges) {
    bool found = false;
    for (const ir::Value* v : g.inputs) found = found || (!v->constant && v->name == name);
    for (const ir::Value* v : g.outputs) found = found || v->name == name;
    if (!found) {
      std::string names;
      for (const ir::Value* v : g.inputs)
        if (!v->constant) names += (names.empty() ? "'" : ", '") + v->name + "'";
      for (const ir::Value* v : g.outputs) names += (names.empty() ? "'" : ", '") + v->name + "'";
      throw Error(origin + ": --edge-layout names '" + name + "', which is no graph input or output; they are " + names);
    }
  }
  if (options.batch2_shapes) {
    if (cx.target().has_gpu_feature())
      throw Error(origin + ": --dynamic-batch compiles CPU targets only; bind the batch with --shape for a GPU");
    cx.batch_dependent = batch_dependent_values(g);
  }
  size_t live = 0;
  for (const auto& n : g.nodes()) live += !n->dead;
  if (live > options.max_nodes) throw Error(too_many_nodes(origin, live, options.max_nodes));
  for (const ir::Value* v : g.inputs) {
    if (v->constant) continue;
    if (!v->type.shape) throw Error(origin + ": input '" + v->name + "' has no known shape");
    for (const ir::Dim& d : *v->type.shape) {
      if (!d.known()) throw Error(origin + ": input '" + v->name + "' has a dynamic dim; bind it with --shape");
    }
    std::vector<int64_t> shape;
    for (const ir::Dim& d : *v->type.shape) shape.push_back(d.value);
    check_size(cx, nullptr, "input '" + v->name + "'", shape);
    lower_input(cx, v);
  }

  // Runtime weights by the original model's names, all of them, in file order.
  std::vector<LTensor> originals;
  if (options.weight_plan)
    for (const OriginalWeight& o : options.weight_plan->originals) originals.push_back(weight_param(cx, o.name, o.shape));
  for (const auto& v : g.values()) {
    if (v->constant && !v->producer && (!v->uses.empty() || v->is_graph_output)) lower_initializer(cx, v.get(), originals);
  }
  plan_fusions(cx);
  for (const ir::Node* n : g.topological_order()) {
    if (n->dead || cx.is_fused(n)) continue;
    if (fold_node(cx, *n)) {
      cx.unfuse_epilogue(n);
      for (const ir::Value* v : n->outputs)
        if (v && cx.has(v)) check_size(cx, n, "output '" + v->name + "'", cx.at(v).shape);
      continue;
    }
    const OpLowering* lowering = find_op_lowering(n->domain, n->op_type);
    if (!lowering) cx.fail(*n, "unsupported op");
    check_input_types(cx, *n);
    for (const ir::Node* e : cx.epilogue(n)) check_input_types(cx, *e, /*chained=*/true);
    check_batch_node(cx, *n);
    for (const ir::Node* e : cx.epilogue(n)) check_batch_node(cx, *e);
    try {
      (*lowering)(cx, *n);
    } catch (const Halide::CompileError& e) {
      cx.fail(*n, std::string("Halide: ") + e.what());
    }
    check_shapes(cx, *n);
    for (const ir::Node* e : cx.epilogue(n)) check_shapes(cx, *e);
  }
  lower_outputs(cx, g.outputs);
  plan_layouts(cx);

  LoweredModel out;
  std::vector<Func> funcs;
  for (const OutputInfo& o : cx.outputs) funcs.push_back(o.func);
  out.pipeline = Halide::Pipeline(funcs);
  for (const ParamInfo& p : cx.inputs) out.arguments.push_back(p.param);
  for (const ParamInfo& p : cx.weights) out.arguments.push_back(p.param);
  out.dynamic_batch = options.batch2_shapes != nullptr;
  out.inputs = cx.inputs;
  out.weights = cx.weights;
  out.outputs = cx.outputs;
  out.conv_schedules = cx.conv_schedules;
  out.conv_problems = cx.conv_problems;
  out.layout_explanations = cx.layout_explanations;
  out.epilogues = cx.epilogue_lines;
  out.linear_weights = cx.weight_lines;
  for (const auto& [v, t] : cx.values()) {
    out.value_shapes[v->name] = t.shape;
    if (t.constant) out.constant_values.insert(v->name);
  }
  for (const auto& [v, cl] : cx.stored_layouts) out.stored_values[v->name] = cl;
  return out;
}

}  // namespace batchconv::compiler

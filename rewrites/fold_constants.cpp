// fold_constants: see fold_constants.h.
#include "fold_constants.h"

#include <set>

#include "interpreter/interpreter.h"
#include "match/graph_search.h"
#include "onnx/onnx_io.h"

namespace batchconv::rewrites {

namespace {

using ir::Node;
using ir::Tensor;
using ir::Value;

const std::set<std::string> kFoldable = {
    "Constant", "Shape",  "Gather", "ConstantOfShape", "Equal",   "Where",     "Mul",     "Add",
    "Sub",      "Div",    "Concat", "Cast",            "Unsqueeze", "Squeeze", "Slice",   "Reshape",
    "Expand",   "Tile",   "Transpose", "Flatten",      "Identity", "Split"};
// Ops that only move or view data: folding them never grows the model.
const std::set<std::string> kViews = {"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Constant"};

bool is_constant(const Value* v) { return v && v->constant && !v->producer && !v->is_graph_input; }

// The shape of v as an int64 tensor with -1 for unknown dims; nullopt if the rank is unknown.
std::optional<Tensor> shape_with_holes(const Value* v) {
  if (!v->type.shape) return std::nullopt;
  Tensor t;
  t.dtype = ir::DType::Int64;
  for (const ir::Dim& d : *v->type.shape) t.i.push_back(d.known() ? d.value : -1);
  t.shape = {static_cast<int64_t>(t.i.size())};
  return t;
}

// A tensor with v's static shape and no data, enough for kernels that read shapes only.
std::optional<Tensor> shape_only(const Value* v) {
  auto s = match::static_shape(v);
  if (!s) return std::nullopt;
  Tensor t;
  t.dtype = v->type.dtype;
  t.shape = *s;
  return t;
}

// Output elements of the ops that can blow up a small input (before running
// them); -1 when unknown or not one of them.
int64_t predicted_elements(const Node* n, const std::vector<const Tensor*>& ins) {
  auto product = [](const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t d : v) {
      if (d < 0) return int64_t(-1);
      if (d && p > (int64_t(1) << 40) / d) return int64_t(1) << 40;
      p *= d;
    }
    return p;
  };
  if (n->op_type == "ConstantOfShape" && !ins.empty() && ins[0] && !ins[0]->is_float()) return product(ins[0]->i);
  if (n->op_type == "Expand" && ins.size() == 2 && ins[0] && ins[1] && !ins[1]->is_float()) {
    std::vector<int64_t> a = ins[0]->shape, b = ins[1]->i;
    size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r);
    for (size_t k = 0; k < r; ++k) {
      int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
      int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
      out[k] = std::max(da, db);
    }
    return product(out);
  }
  if (n->op_type == "Tile" && ins.size() == 2 && ins[0] && ins[1] && !ins[1]->is_float() &&
      ins[1]->i.size() == ins[0]->shape.size()) {
    int64_t reps = product(ins[1]->i), base = ins[0]->numel();
    if (reps < 0) return -1;
    return base && reps > (int64_t(1) << 40) / base ? int64_t(1) << 40 : reps * base;
  }
  return -1;
}

bool fully_static(const Value* v) {
  if (!v || !v->type.shape) return false;
  for (const ir::Dim& d : *v->type.shape)
    if (!d.known()) return false;
  return true;
}

struct Folder {
  ir::Model& model;
  PassResult& result;
  // Set when a folded value feeds a node whose output shape is not fully
  // known: shape inference may learn more from the new constants.
  bool shapes_may_improve = false;

  // Why the node cannot be folded ("" when it was folded, "-" when it is not a candidate).
  std::string try_fold(Node* n) {
    if (!n->domain.empty() || !kFoldable.count(n->op_type)) return "-";
    std::vector<Tensor> holders;  // keeps shape-only tensors alive
    holders.reserve(n->inputs.size());
    std::vector<const Tensor*> ins;
    bool shape_of_shape = false;
    if (n->op_type == "Shape") {
      std::optional<Tensor> t = shape_only(n->inputs.empty() ? nullptr : n->inputs[0]);
      if (!t) return "input shape is not fully known";
      holders.push_back(std::move(*t));
      ins.push_back(&holders.back());
    } else {
      for (size_t k = 0; k < n->inputs.size(); ++k) {
        const Value* v = n->inputs[k];
        if (!v) {
          ins.push_back(nullptr);
          continue;
        }
        if (is_constant(v)) {
          ins.push_back(v->constant.get());
          continue;
        }
        // Gather/Slice picking entries of a Shape whose picked dims are known.
        if (k == 0 && (n->op_type == "Gather" || n->op_type == "Slice") && v->producer &&
            v->producer->op_type == "Shape" && v->producer->domain.empty() && v->producer->attrs.empty() &&
            !v->producer->inputs.empty() && v->producer->inputs[0]) {
          std::optional<Tensor> t = shape_with_holes(v->producer->inputs[0]);
          if (!t) return "-";
          holders.push_back(std::move(*t));
          ins.push_back(&holders.back());
          shape_of_shape = true;
          continue;
        }
        return "-";  // not all inputs constant: not a candidate
      }
    }
    for (const Value* o : n->outputs)
      if (o && (o->is_graph_output || o->pinned))
        return n->op_type == "Constant" ? "-" : "output '" + o->name + "' is a graph output (kept computed)";
    int64_t in_elems = 0;
    for (const Tensor* t : ins)
      if (t) in_elems += t->numel();
    int64_t predicted = predicted_elements(n, ins);
    if (predicted > kMaxFoldElements && predicted > in_elems)
      return "output of " + std::to_string(predicted) + " elements is larger than the fold limit";
    std::vector<Tensor> outs;
    try {
      outs = interp::run_node(*n, ins, model.opset(n->domain));
    } catch (const interp::Error& e) {
      return std::string("cannot evaluate: ") + e.what();
    }
    for (const Tensor& t : outs) {
      if (shape_of_shape)
        for (int64_t d : t.i)
          if (d < 0) return "picks a dimension that is not known statically";
      if (!kViews.count(n->op_type) && t.numel() > kMaxFoldElements && t.numel() > in_elems)
        return "output of " + std::to_string(t.numel()) + " elements is larger than the fold limit";
    }
    ir::Graph& g = model.graph;
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      Value* o = n->outputs[k];
      if (!o) continue;
      std::string name = o->name;
      for (const ir::Use& u : o->uses)
        for (const Value* out : u.node->outputs)
          if (out && !fully_static(out)) shapes_may_improve = true;
      Value* c = g.add_initializer(name + "_folded", std::move(outs[k]));
      g.replace_all_uses(o, c);
      g.rename_value(o, g.unique_name(name + "_unfolded"));
      g.rename_value(c, name);
    }
    Value* shape_src = shape_of_shape ? n->inputs[0] : nullptr;
    result.nodes_removed += match::erase_if_dead(g, n);
    if (shape_src && shape_src->producer) result.nodes_removed += match::erase_if_dead(g, shape_src->producer);
    result.fired++;
    return "";
  }
};

}  // namespace

PassResult fold_constants(ir::Model& model, const PassOptions&) {
  PassResult result;
  Folder folder{model, result};
  for (int round = 0; round < 4; ++round) {
    int fired_before = result.fired;
    std::vector<Skip> skips;
    for (Node* n : model.graph.topological_order()) {
      if (n->dead) continue;
      std::string why = folder.try_fold(n);
      if (!why.empty() && why != "-") skips.push_back({match::node_label(n), why});
    }
    result.skips = std::move(skips);
    if (result.fired == fired_before || !folder.shapes_may_improve) break;
    folder.shapes_may_improve = false;
    io::infer_shapes(model);  // folded shapes make more shapes known
  }
  return result;
}

}  // namespace batchconv::rewrites

#include "dynamic_batch.h"

#include <algorithm>

#include "elementwise.h"
#include "lowering_context.h"

namespace batchconv::compiler {

std::map<std::string, std::vector<int64_t>> shapes_at_batch(const ir::Model& model, const std::string& origin,
                                                            const std::map<std::string, std::vector<int64_t>>& shapes,
                                                            int64_t batch) {
  std::map<std::string, std::vector<int64_t>> out = shapes;
  for (const ir::Value* v : model.graph.inputs) {
    if (v->constant) continue;
    std::vector<int64_t> s;
    if (auto it = shapes.find(v->name); it != shapes.end()) {
      s = it->second;
    } else if (v->type.shape) {
      for (const ir::Dim& d : *v->type.shape) s.push_back(d.known() ? d.value : -1);
    } else {
      throw Error(origin + ": input '" + v->name + "' has no known rank; give its shape with --shape " + v->name +
                  "=d0xd1x...");
    }
    if (s.empty()) throw Error(origin + ": --dynamic-batch: input '" + v->name + "' is a scalar; every input needs a leading batch dim");
    s[0] = batch;
    for (size_t k = 1; k < s.size(); ++k) {
      if (s[k] <= 0) {
        throw Error(origin + ": input '" + v->name + "' dim " + std::to_string(k) +
                    " is dynamic; --dynamic-batch keeps only dim 0 free: bind the others with --shape " + v->name +
                    "=d0xd1x...");
      }
    }
    out[v->name] = s;
  }
  return out;
}

std::set<const ir::Value*> batch_dependent_values(const ir::Graph& g) {
  std::set<const ir::Value*> dep;
  for (const ir::Value* v : g.inputs)
    if (!v->constant) dep.insert(v);
  for (const ir::Node* n : g.topological_order()) {
    if (n->dead) continue;
    bool any = false;
    for (const ir::Value* v : n->inputs) any = any || (v && dep.count(v));
    if (any)
      for (const ir::Value* v : n->outputs)
        if (v) dep.insert(v);
  }
  return dep;
}

namespace {

std::string dims(const std::vector<int64_t>& s) { return shape_str(s); }

[[noreturn]] void refuse(const LoweringContext& cx, const ir::Value* v, const std::string& what) {
  const std::string msg = "--dynamic-batch: " + what;
  if (v->producer) cx.fail(*v->producer, msg);
  throw Error(cx.origin() + ": " + msg);
}

}  // namespace

void check_batched(const LoweringContext& cx, const ir::Value* v, LTensor& t) {
  if (t.constant) {
    // A shape read off a batched tensor: integers, which the compiler reads
    // only as shapes, axes or indices (a Reshape's target keeps the batch
    // leading through reshape_view). Float data computed from it would
    // bake batch 1 in.
    if (t.constant->is_float())
      refuse(cx, v, "'" + v->name + "' is float data computed at compile time from the batch size");
    return;
  }
  const auto& at2 = *cx.options().batch2_shapes;
  auto it = at2.find(v->name);
  if (it == at2.end())
    refuse(cx, v, "'" + v->name + "' exists only when the model is bound at batch 1 (a rewrite that depends on the batch size)");
  const std::vector<int64_t>& s1 = t.shape;
  const std::vector<int64_t>& s2 = it->second;
  bool leading = !s1.empty() && s1.size() == s2.size() && s1[0] == 1 && s2[0] == 2;
  for (size_t k = 1; leading && k < s1.size(); ++k) leading = s1[k] == s2[k];
  if (!leading) {
    refuse(cx, v, "'" + v->name + "' has shape " + dims(s1) + " at batch 1 and " + dims(s2) +
                      " at batch 2; every value computed from the inputs must keep the batch as its leading dim");
  }
  t.batched = true;
}

void check_batch_node(const LoweringContext& cx, const ir::Node& n) {
  if (!cx.options().batch2_shapes) return;
  std::vector<bool> batched(n.inputs.size(), false);
  int rank = -1;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const ir::Value* v = n.inputs[k];
    if (v && cx.has(v) && cx.at(v).batched) {
      batched[k] = true;
      if (rank < 0) rank = cx.at(v).rank();
    }
  }
  if (rank < 0) return;
  const std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
  static const std::vector<std::string> kOps = [] {
    std::vector<std::string> ops = elementwise_op_types();
    for (const char* o : {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceL1", "ReduceL2",
                          "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare",
                          "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Split",
                          "Gemm", "MatMul", "Softmax", "LogSoftmax", "Identity", "BatchNormalization", "Expand",
                          "Shape"})
      ops.push_back(o);
    return ops;
  }();
  if (std::find(kOps.begin(), kOps.end(), op) == kOps.end())
    cx.fail(n, "--dynamic-batch: " + op + " on a batched input is not supported with a run-time batch");
  // The operands that are weights: they may not vary with the image.
  std::vector<size_t> weights;
  if (op == "Conv" || op == "Gemm") weights = {1, 2};
  if (op == "MatMul") weights = {1};
  if (op == "BatchNormalization") weights = {1, 2, 3, 4};
  for (size_t k : weights) {
    if (k < batched.size() && batched[k])
      cx.fail(n, "--dynamic-batch: input " + std::to_string(k) + " ('" + n.inputs[k]->name +
                     "') is computed from the model's inputs; with a run-time batch it must be a weight");
  }
  if (op == "Concat") {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (!batched[k])
        cx.fail(n, "--dynamic-batch: input " + std::to_string(k) + " ('" + (n.inputs[k] ? n.inputs[k]->name : "") +
                       "') has no batch dim; a concat with a run-time batch takes batched inputs only");
    }
  }
  // An axis 0 op on a batched input mixes the images.
  auto is_zero = [&](int64_t a) { return a == 0 || a == -rank; };
  if (const ir::Attribute* a = n.attr("axis"); a && is_zero(a->i))
    cx.fail(n, "--dynamic-batch: axis 0 is the run-time batch; this op would mix its images");
  if (const ir::Attribute* a = n.attr("axes"))
    for (int64_t x : a->ints)
      if (is_zero(x)) cx.fail(n, "--dynamic-batch: axes include 0, the run-time batch; this op would mix its images");
}

}  // namespace batchconv::compiler

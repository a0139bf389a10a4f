#include "fuse_batch_slices_into_batched_conv.h"

#include "conv_geometry.h"
#include "match/graph_search.h"
#include "match/slices.h"

namespace batchconv::rewrites {

namespace {

using ir::Graph;
using ir::Node;
using ir::Value;

struct Plan {
  Node* concat = nullptr;
  std::vector<ConvGeometry> convs;  // in Concat order
  Value* x = nullptr;
  std::vector<int64_t> xshape, out_spatial;
  int64_t G = 0, n = 0;
  int64_t slice_bytes = 0, conv_out_bytes = 0;
  bool shared = false;  // every slice goes through the same weight (and bias) values
  std::vector<Node*> epilogue;  // the same elementwise ops after every conv (slice 0's, conv first)
};

// Elementwise ops that commute with the reshapes/transposes of the batched form, so the same op
// after every slice's conv can run once after the batched conv. (More unary ops belong here once
// the reference interpreter can verify them.)
bool is_epilogue_op(const Node* n) {
  return n->domain.empty() && (n->op_type == "Relu" || n->op_type == "Identity") && n->inputs.size() == 1 &&
         n->outputs.size() == 1 && n->inputs[0];
}

// Walks back from a Concat input through epilogue ops to a Conv output; the ops are returned
// conv first.
Value* through_epilogue(Value* v, std::vector<Node*>* ops) {
  while (v && v->producer && is_epilogue_op(v->producer)) {
    ops->insert(ops->begin(), v->producer);
    v = v->producer->inputs[0];
  }
  return v;
}

Value* through_epilogue(Value* v, std::vector<Node*>* ops);

// Conv behind a Concat input (through Identity/elementwise ops), or nullptr.
Node* conv_behind(Value* v) {
  std::vector<Node*> ops;
  Value* s = through_epilogue(v, &ops);
  Node* p = s ? s->producer : nullptr;
  return p && p->op_type == "Conv" && p->domain.empty() ? p : nullptr;
}

bool is_candidate(Node* concat) {
  if (concat->inputs.size() < 2) return false;
  for (Value* v : concat->inputs)
    if (!v || !conv_behind(v)) return false;
  auto rank = match::rank_of(concat->outputs[0]);
  int64_t axis = concat->attr_int("axis", 0);
  if (axis < 0 && rank) axis += *rank;
  return axis == 0;
}

std::string plan_fuse(Node* concat, int64_t opset, Plan* p) {
  p->concat = concat;
  p->G = static_cast<int64_t>(concat->inputs.size());
  std::string why;
  for (Value* v : concat->inputs) {
    std::vector<Node*> chain;
    Value* y = through_epilogue(v, &chain);
    for (Node* id : chain)
      if (match::use_count(id->outputs[0]) != 1) return "'" + id->outputs[0]->name + "' is also used elsewhere";
    std::vector<Node*> ops;  // without the Identity nodes
    for (Node* n : chain)
      if (n->op_type != "Identity") ops.push_back(n);
    if (v == concat->inputs.front()) {
      p->epilogue = ops;
    } else {
      bool same = ops.size() == p->epilogue.size();
      for (size_t k = 0; same && k < ops.size(); ++k) same = match::same_op(ops[k], p->epilogue[k]);
      if (!same) return "the slices' convs are followed by different elementwise ops";
    }
    if (match::use_count(y) != 1) return "output '" + y->name + "' of conv " + match::node_label(y->producer) +
                                         " is also used outside the Concat";
    auto geo = read_conv(y->producer, &why);
    if (!geo) return why;
    if (!p->convs.empty()) {
      const ConvGeometry& first = p->convs.front();
      if (auto d = geometry_mismatch(first, *geo); !d.empty()) return d;
      if (geo->out_channels() != first.out_channels())
        return "conv output channels " + std::to_string(geo->out_channels()) + " != " +
               std::to_string(first.out_channels());
    }
    p->convs.push_back(*geo);
  }
  // One conv (the same weight and bias values) applied slice by slice is that conv on the batch.
  p->shared = true;
  for (const auto& c : p->convs) p->shared &= c.w == p->convs[0].w && c.b == p->convs[0].b;
  if (!p->shared && opset < 5) return "opset " + std::to_string(opset) + " < 5: the batched form needs Reshape-5";
  if (!p->shared)
    for (const auto& c : p->convs) {
      if (!match::is_float_constant(c.w)) return "weight '" + c.w->name + "' is not a float constant";
      if (c.b && !match::is_float_constant(c.b)) return "bias '" + c.b->name + "' is not a float constant";
    }
  // The convs read consecutive equal slices of one tensor's batch, in Concat order.
  int64_t expected_start = 0;
  for (int64_t i = 0; i < p->G; ++i) {
    auto range = match::axis_range_of(match::skip_identities(p->convs[i].x), &why);
    if (!range) return "input of conv " + match::node_label(p->convs[i].node) + ": " + why;
    if (i == 0) {
      p->x = range->data;
      p->xshape = *match::static_shape(range->data);
    } else if (range->data != p->x) {
      return "convs slice different tensors ('" + p->x->name + "', '" + range->data->name + "')";
    }
    if (range->axis != 0) return "slice along axis " + std::to_string(range->axis) + ", not the batch axis 0";
    const int64_t len = range->end - range->start;
    if (i == 0) p->n = len;
    if (len != p->n || len == 0) return "batch slices are not equal";
    if (range->start != expected_start)
      return "slice " + std::to_string(i) + " starts at " + std::to_string(range->start) + ", expected " +
             std::to_string(expected_start) + " (not consecutive or not in Concat order)";
    expected_start = range->end;
  }
  const ConvGeometry& c0 = p->convs.front();
  if (static_cast<int64_t>(p->xshape.size()) != 2 + c0.spatial) return "input rank does not match the conv";
  if (expected_start != p->xshape[0])
    return "slices cover " + std::to_string(expected_start) + " of batch " + std::to_string(p->xshape[0]);
  if (p->xshape[1] != c0.group * c0.in_per_group())
    return "input has " + std::to_string(p->xshape[1]) + " channels, conv expects " +
           std::to_string(c0.group * c0.in_per_group());
  auto out = conv_output_spatial(c0, std::vector<int64_t>(p->xshape.begin() + 2, p->xshape.end()));
  if (!out) return "conv output size is not computable";
  p->out_spatial = *out;
  for (const auto& c : p->convs) {
    p->slice_bytes += match::float_bytes(c.x);
    p->conv_out_bytes += match::float_bytes(c.node->outputs[0]);
  }
  return "";
}

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int64_t> batch_swap_perm(size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[0], perm[1]);
  return perm;
}

struct Emitter {
  Graph& g;
  std::string base;
  int added = 0;
  Value* reshape(Value* in, const std::vector<int64_t>& shape, const std::string& what) {
    Value* s = g.add_initializer(g.unique_name(base + "_" + what + "_shape"), int64_tensor(shape));
    Value* out = g.add_value(base + "_" + what);
    set_float_shape(out, shape);
    g.add_node("Reshape", {in, s}, {out}, base + "_" + what);
    ++added;
    return out;
  }
  Value* swap_batch(Value* in, std::vector<int64_t> shape, const std::string& what) {
    std::swap(shape[0], shape[1]);
    Value* out = g.add_value(base + "_" + what);
    set_float_shape(out, shape);
    Node* t = g.add_node("Transpose", {in}, {out}, base + "_" + what);
    set_ints_attr(t, "perm", batch_swap_perm(shape.size()));
    ++added;
    return out;
  }
};

void ensure_batchconv_opset(ir::Model& model) {
  if (model.opset("batchconv") == 0) model.opset_imports.push_back({"batchconv", 1});
}

// The slices' common elementwise ops, once, on the whole batched output.
Value* apply_epilogue(Graph& g, const Plan& p, Value* out, int* added) {
  for (const Node* op : p.epilogue) {
    Value* next = g.add_value(out->name + "_" + op->op_type);
    next->type = out->type;
    Node* n = g.add_node(op->op_type, {out}, {next}, op->name + "_batched");
    copy_attrs(op, n);
    ++*added;
    out = next;
  }
  return out;
}

// Slices through one shared conv: that conv on the whole batch.
void apply_shared(Graph& g, const Plan& p, PassResult* r) {
  const ConvGeometry& c0 = p.convs.front();
  Value* y = p.concat->outputs[0];
  Value* out = g.add_value(y->name + "_whole_batch");
  out->type = y->type;
  std::vector<Value*> ins{p.x, c0.w};
  if (c0.b) ins.push_back(c0.b);
  Node* conv = g.add_node("Conv", ins, {out}, c0.node->name + "_whole_batch");
  copy_attrs(c0.node, conv);
  int added = 1;
  out = apply_epilogue(g, p, out, &added);
  const int removed = match::replace_and_erase(g, y, out, /*take_name=*/true);
  r->fired += 1;
  r->nodes_removed += removed - added;
  r->bytes_saved += p.slice_bytes + p.conv_out_bytes;
}

void apply(ir::Model& model, const Plan& p, const PassOptions& options, PassResult* r) {
  Graph& g = model.graph;
  if (p.shared) return apply_shared(g, p, r);
  const ConvGeometry& c0 = p.convs.front();
  const int64_t G = p.G, n = p.n, C = p.xshape[1], M = c0.out_channels();
  const std::vector<int64_t> S(p.xshape.begin() + 2, p.xshape.end());
  // Weights and biases stacked in slice order: (G*M, C/g, k..) == (G, M, C/g, k..) in memory.
  std::vector<float> w, b;
  for (const auto& c : p.convs) {
    auto wd = *float_data(c.w);
    w.insert(w.end(), wd.begin(), wd.end());
    if (c.b) {
      auto bd = *float_data(c.b);
      b.insert(b.end(), bd.begin(), bd.end());
    }
  }
  Value* y = p.concat->outputs[0];
  Emitter e{g, p.concat->name.empty() ? std::string("batched_conv") : p.concat->name + "_batched"};
  Value* out = nullptr;
  int64_t after_bytes = 0;
  if (options.emit_batchconv_ops) {
    ensure_batchconv_opset(model);
    Value* x5 = e.reshape(p.x, cat({G, n}, cat({C}, S)), "x_by_slice");
    std::vector<int64_t> wshape = cat({G}, c0.wshape);
    std::vector<Value*> ins{x5, g.add_initializer(g.unique_name(e.base + "_w"), float_tensor(wshape, w))};
    if (c0.b) ins.push_back(g.add_initializer(g.unique_name(e.base + "_b"), float_tensor({G, M}, b)));
    Value* y5 = g.add_value(e.base + "_y_by_slice");
    set_float_shape(y5, cat({G, n, M}, p.out_spatial));
    Node* bc = g.add_node("BatchedWeightConv", ins, {y5}, e.base);
    bc->domain = "batchconv";
    copy_attrs(c0.node, bc);
    ++e.added;
    out = e.reshape(y5, cat({G * n, M}, p.out_spatial), "y");
  } else {
    Value* t = p.x;
    if (n > 1) {
      t = e.reshape(t, cat({G, n, C}, S), "x_by_slice");
      t = e.swap_batch(t, cat({G, n, C}, S), "x_by_sample");
      after_bytes += match::float_bytes(t);
    }
    t = e.reshape(t, cat({n, G * C}, S), "x_as_channels");
    std::vector<int64_t> wshape = c0.wshape;
    wshape[0] = G * M;
    std::vector<Value*> ins{t, g.add_initializer(g.unique_name(e.base + "_w"), float_tensor(wshape, w))};
    if (c0.b) ins.push_back(g.add_initializer(g.unique_name(e.base + "_b"), float_tensor({G * M}, b)));
    Value* u = g.add_value(e.base + "_conv");
    set_float_shape(u, cat({n, G * M}, p.out_spatial));
    Node* conv = g.add_node("Conv", ins, {u}, e.base + "_conv");
    copy_attrs(c0.node, conv);
    set_int_attr(conv, "group", G * c0.group);
    ++e.added;
    if (n > 1) {
      after_bytes += match::float_bytes(u);
      u = e.reshape(u, cat({n, G, M}, p.out_spatial), "y_by_sample");
      u = e.swap_batch(u, cat({n, G, M}, p.out_spatial), "y_by_slice");
    }
    out = e.reshape(u, cat({G * n, M}, p.out_spatial), "y");
  }
  out = apply_epilogue(g, p, out, &e.added);
  int removed = match::replace_and_erase(g, y, out, /*take_name=*/true);
  r->fired += 1;
  r->nodes_removed += removed - e.added;
  r->bytes_saved += p.slice_bytes + p.conv_out_bytes - after_bytes;
}

}  // namespace

PassResult fuse_batch_slices_into_batched_conv(ir::Model& model, const PassOptions& options) {
  Graph& g = model.graph;
  PassResult result;
  for (Node* n : match::node_snapshot(g)) {
    if (n->dead || n->op_type != "Concat" || !n->domain.empty() || !is_candidate(n)) continue;
    Plan plan;
    std::string why = plan_fuse(n, model.opset(), &plan);
    if (!why.empty()) {
      result.skips.push_back({match::node_label(n), why});
      continue;
    }
    apply(model, plan, options, &result);
  }
  return result;
}

}  // namespace batchconv::rewrites

#include "raise_transposed_grouped_conv_to_batched_conv.h"

#include "conv_geometry.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

namespace {

using ir::Graph;
using ir::Node;
using ir::Value;

struct Plan {
  ConvGeometry geo;
  Value* x = nullptr;       // (B, n, C, S..)
  Value* out = nullptr;     // the value the batched conv replaces (second Transpose or Add output)
  Node* add = nullptr;      // seed 3's bias Add, when folded
  Value* add_const = nullptr;
  int64_t B = 0, n = 0, C = 0, M = 0, g = 1;
  std::vector<int64_t> out_spatial;
};

bool swaps_first_two(const Node* t, size_t rank) {
  if (!t || t->op_type != "Transpose" || !t->domain.empty()) return false;
  auto perm = t->attr_ints("perm");
  if (perm.size() != rank || rank < 3 || perm[0] != 1 || perm[1] != 0) return false;
  for (size_t i = 2; i < rank; ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Node* single_user(const Value* v) {
  return v->is_graph_output || v->uses.size() != 1 ? nullptr : v->uses[0].node;
}

// Structural check: Conv fed by Reshape(Transpose(..)).
bool is_candidate(const Node* conv) {
  const Value* r = conv->inputs.empty() ? nullptr : conv->inputs[0];
  const Node* reshape = r ? r->producer : nullptr;
  if (!reshape || reshape->op_type != "Reshape" || reshape->inputs.empty() || !reshape->inputs[0]) return false;
  const Node* t = reshape->inputs[0]->producer;
  return t && t->op_type == "Transpose";
}

std::string plan_raise(Node* conv, Plan* p) {
  std::string why;
  auto geo = read_conv(conv, &why);
  if (!geo) return why;
  p->geo = *geo;
  Node* reshape = conv->inputs[0]->producer;
  Node* t = reshape->inputs[0]->producer;
  p->x = t->inputs.empty() ? nullptr : t->inputs[0];
  auto xs = p->x ? match::static_shape(p->x) : std::nullopt;
  if (!xs) return "shape of the transposed tensor is not static";
  const size_t rank = xs->size();
  if (rank != static_cast<size_t>(3 + geo->spatial)) return "transposed tensor is not (B, n, C, spatial..)";
  if (!swaps_first_two(t, rank)) return "first Transpose does not swap the two leading axes";
  p->B = (*xs)[0];
  p->n = (*xs)[1];
  p->C = (*xs)[2];
  const std::vector<int64_t> S(xs->begin() + 3, xs->end());
  std::vector<int64_t> want{p->n, p->B * p->C};
  want.insert(want.end(), S.begin(), S.end());
  if (match::reshape_output(reshape) != want) return "first Reshape does not merge (n, B, C) into (n, B*C)";
  if (p->B < 1 || geo->group % p->B != 0)
    return "conv group " + std::to_string(geo->group) + " is not a multiple of the " + std::to_string(p->B) + " tasks";
  p->g = geo->group / p->B;
  if (geo->out_channels() % p->B != 0) return "conv output channels do not split into the tasks";
  p->M = geo->out_channels() / p->B;
  if (!match::is_float_constant(geo->w)) return "weight '" + geo->w->name + "' is not a float constant";
  if (geo->b && !match::is_float_constant(geo->b)) return "bias '" + geo->b->name + "' is not a float constant";
  auto os = conv_output_spatial(*geo, S);
  if (!os) return "conv output size is not computable";
  p->out_spatial = *os;
  // Back: Reshape to (n, B, M, S'..), Transpose to (B, n, M, S'..).
  Node* back = single_user(conv->outputs[0]);
  if (!back || back->op_type != "Reshape") return "conv output is not only reshaped back";
  std::vector<int64_t> mid{p->n, p->B * p->M};
  mid.insert(mid.end(), os->begin(), os->end());
  std::vector<int64_t> want_back{p->n, p->B, p->M};
  want_back.insert(want_back.end(), os->begin(), os->end());
  auto target = back->inputs.size() > 1 ? match::constant_ints(back->inputs[1]) : std::nullopt;
  if (!target || match::reshape_output(mid, *target, back->attr_int("allowzero", 0) != 0) != want_back)
    return "second Reshape does not split the channels into (B, M)";
  Node* t2 = single_user(back->outputs[0]);
  if (!swaps_first_two(t2, rank)) return "second Reshape is not followed by the inverse Transpose";
  p->out = t2->outputs[0];
  // Seed 3 adds its bias after the transpose: bias.unsqueeze(1).unsqueeze(3).unsqueeze(3).
  if (Node* add = single_user(p->out); add && add->op_type == "Add" && add->domain.empty() && add->inputs.size() == 2) {
    Value* k = add->inputs[0] == p->out ? add->inputs[1] : add->inputs[0];
    std::vector<int64_t> ks{p->B, 1, p->M};
    ks.resize(rank, 1);
    if (match::is_float_constant(k) && match::static_shape(k) == ks && add->inputs[0] != add->inputs[1]) {
      p->add = add;
      p->add_const = k;
      p->out = add->outputs[0];
    }
  }
  return "";
}

void ensure_batchconv_opset(ir::Model& model) {
  if (model.opset("batchconv") == 0) model.opset_imports.push_back({"batchconv", 1});
}

void apply(ir::Model& model, const Plan& p, PassResult* r) {
  Graph& g = model.graph;
  const ConvGeometry& geo = p.geo;
  std::vector<int64_t> wshape{p.B, p.M};
  wshape.insert(wshape.end(), geo.wshape.begin() + 1, geo.wshape.end());
  const std::string base = geo.node->name + "_batched";
  std::vector<Value*> ins{p.x, g.add_initializer(g.unique_name(geo.w->name + "_by_task"),
                                                 float_tensor(wshape, *float_data(geo.w)))};
  if (geo.b || p.add) {
    std::vector<float> bias(p.B * p.M, 0.0f);
    if (geo.b) bias = *float_data(geo.b);
    if (p.add) {
      auto k = *float_data(p.add_const);
      for (size_t i = 0; i < bias.size(); ++i) bias[i] += k[i];
    }
    ins.push_back(g.add_initializer(g.unique_name(base + "_bias"), float_tensor({p.B, p.M}, bias)));
  }
  Value* y = g.add_value(base);
  std::vector<int64_t> ys{p.B, p.n, p.M};
  ys.insert(ys.end(), p.out_spatial.begin(), p.out_spatial.end());
  set_float_shape(y, ys);
  Node* bc = g.add_node("BatchedWeightConv", ins, {y}, base);
  bc->domain = "batchconv";
  copy_attrs(geo.node, bc);
  set_int_attr(bc, "group", p.g);
  ensure_batchconv_opset(model);
  const int removed = match::replace_and_erase(g, p.out, y, /*take_name=*/true);
  r->fired += 1;
  r->nodes_removed += removed - 1;
  // The transposed input, the conv output and the transposed output are no longer allocated.
  r->bytes_saved += match::float_bytes(p.x) + 2 * match::float_bytes(y);
}

}  // namespace

PassResult raise_transposed_grouped_conv_to_batched_conv(ir::Model& model, const PassOptions& options) {
  PassResult result;
  if (!options.emit_batchconv_ops) return result;
  for (Node* n : match::node_snapshot(model.graph)) {
    if (n->dead || n->op_type != "Conv" || !n->domain.empty() || !is_candidate(n)) continue;
    Plan plan;
    std::string why = plan_raise(n, &plan);
    if (!why.empty()) {
      result.skips.push_back({match::node_label(n), why});
      continue;
    }
    apply(model, plan, &result);
  }
  return result;
}

}  // namespace batchconv::rewrites

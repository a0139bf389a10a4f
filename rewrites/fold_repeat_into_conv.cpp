#include "fold_repeat_into_conv.h"

#include <algorithm>

#include "conv_geometry.h"
#include "match/graph_search.h"
#include "match/repeat.h"

namespace batchconv::rewrites {

namespace {

using ir::Graph;
using ir::Node;
using ir::Value;

enum class Form { Dense, DenseSummed, GroupedShuffle, Interleaved };

struct Plan {
  Node* conv = nullptr;
  match::Repeat rep;
  ConvGeometry geo;
  Form form = Form::Dense;
  int64_t R = 0, G = 0, C = 0;
  int64_t new_group = 1, sum_block = 1;  // Interleaved: group on x, weight columns summed per block
};

// Cheap structural check: is there a repeat-looking producer behind the conv's input at all?
bool is_candidate(Node* conv) {
  Value* v = conv->inputs.empty() ? nullptr : conv->inputs[0];
  while (v && v->producer && (v->producer->op_type == "Identity" || v->producer->op_type == "Unsqueeze") &&
         !v->producer->inputs.empty())
    v = v->producer->inputs[0];
  if (!v || !v->producer || !v->producer->domain.empty()) return false;
  const Node* p = v->producer;
  if (p->op_type == "Tile") return true;
  if (p->op_type == "Concat") {  // only when some input repeats: plain concatenations are no candidates
    for (size_t i = 0; i < p->inputs.size(); ++i)
      for (size_t j = i + 1; j < p->inputs.size(); ++j)
        if (p->inputs[i] == p->inputs[j]) return true;
    return false;
  }
  if (p->op_type == "Reshape") {  // Reshape(Expand(..)): the unsqueeze/expand/reshape form
    const Value* e = p->inputs.empty() ? nullptr : p->inputs[0];
    return e && e->producer && e->producer->op_type == "Expand";
  }
  return false;
}

std::string plan_fold(Node* conv, int64_t opset, Plan* p) {
  std::string why;
  auto geo = read_conv(conv, &why);
  if (!geo) return why;
  auto found = match::find_repeat(conv->inputs[0]);
  if (!found.found) return found.reason;
  const match::Repeat& rep = found.repeat;
  if (rep.rank != 2 + geo->spatial)
    return "repeated tensor has rank " + (rep.rank < 0 ? std::string("unknown") : std::to_string(rep.rank)) +
           ", the Conv expects " + std::to_string(2 + geo->spatial);
  if (rep.axis != 1)
    return rep.form + " repeats axis " + std::to_string(rep.axis) + ", not the channel axis 1 of the Conv";
  const int64_t R = rep.count, G = geo->group, total = geo->group * geo->in_per_group();
  if (R < 2) return "repeat count " + std::to_string(R) + " is no repeat";
  if (total % R != 0)
    return "conv reads " + std::to_string(total) + " channels, not a multiple of repeat count " + std::to_string(R);
  const int64_t C = total / R;
  if (rep.layout_chain.empty()) {
    if (auto xs = match::static_shape(rep.source); xs && (xs->size() < 2 || (*xs)[1] != C))
      return "repeated tensor '" + rep.source->name + "' has shape " + shape_str(*xs) + ", expected " +
             std::to_string(C) + " channels";
  }
  p->conv = conv;
  p->rep = rep;
  p->geo = *geo;
  p->R = R;
  p->G = G;
  p->C = C;
  const bool w_const = match::is_float_constant(geo->w);
  const bool b_const = geo->b == nullptr || match::is_float_constant(geo->b);
  if (rep.interleaved) {
    // r channel j is x channel j / R; group g reads r channels [g*Cg, (g+1)*Cg).
    const int64_t Cg = geo->in_per_group();
    if (Cg % R != 0 && R % Cg != 0)
      return "interleaved repeat count " + std::to_string(R) + " and " + std::to_string(Cg) +
             " channels per group: neither divides the other (a group reads part of an x channel's copies)";
    p->form = Form::Interleaved;
    p->sum_block = std::min(R, Cg);              // weight columns that meet the same x channel
    p->new_group = C / (Cg / p->sum_block);      // R | Cg: G groups of Cg/R x channels; Cg | R: one each
    if (p->sum_block > 1 && !w_const)
      return "interleaved repeat needs the weight columns of each x channel summed, but weight '" +
             geo->w->name + "' is not constant";
    return "";
  }
  if (R % G == 0) {
    p->form = R == G ? Form::Dense : Form::DenseSummed;
    if (R != G && !w_const)
      return "repeat count " + std::to_string(R) + " = " + std::to_string(R / G) + " x groups " +
             std::to_string(G) + " needs the weight copies summed, but weight '" + geo->w->name + "' is not constant";
    return "";
  }
  if (G % R == 0) {
    p->form = Form::GroupedShuffle;
    if (!w_const || !b_const)
      return "groups " + std::to_string(G) + " = " + std::to_string(G / R) + " x repeat count " + std::to_string(R) +
             " needs reordered weights, but the weight or bias is not constant";
    if (opset < 5) return "opset " + std::to_string(opset) + " < 5: the channel shuffle needs Reshape-5";
    // The shuffle allocates one extra tensor the size of the conv output; the repeat allocated r.
    const int64_t out_bytes = match::float_bytes(conv->outputs[0]), rep_bytes = match::float_bytes(rep.repeated);
    const bool more = out_bytes && rep_bytes ? out_bytes > rep_bytes : geo->out_channels() > R * C;
    if (more)
      return "groups " + std::to_string(G) + " = " + std::to_string(G / R) + " x repeat count " + std::to_string(R) +
             ": the channel-shuffle form allocates " + std::to_string(geo->out_channels()) +
             " output channels, more than the repeat's " + std::to_string(R * C);
    return "";
  }
  return "repeat count " + std::to_string(R) + " and groups " + std::to_string(G) +
         ": neither divides the other (each group reads a wrapped window of the channels; an exact form "
         "needs zero-padded weights)";
}

// Re-applies the Unsqueeze nodes between the repeat and the conv to the repeat's source.
Value* replay_layout_chain(Graph& g, const match::Repeat& rep, int* added) {
  Value* x = rep.source;
  for (Node* n : rep.layout_chain) {
    if (n->op_type != "Unsqueeze") continue;
    std::vector<Value*> ins{x};
    if (n->inputs.size() > 1 && n->inputs[1]) ins.push_back(n->inputs[1]);
    Value* out = g.add_value(x->name + "_unsqueezed");
    out->type.dtype = x->type.dtype;
    Node* u = g.add_node("Unsqueeze", ins, {out}, n->name + "_on_source");
    copy_attrs(n, u);
    ++*added;
    x = out;
  }
  return x;
}

void apply(Graph& g, const Plan& p, PassResult* r) {
  Node* conv = p.conv;
  const ConvGeometry& geo = p.geo;
  Value* old_in = conv->inputs[0];
  Value* repeated = p.rep.repeated;
  int64_t repeat_bytes = match::float_bytes(repeated);
  if (repeat_bytes == 0) repeat_bytes = match::float_bytes(p.rep.source) * p.R;
  int added = 0, removed = 0;
  Value* x = replay_layout_chain(g, p.rep, &added);
  const int64_t M = geo.out_channels(), K = [&] {
    int64_t k = 1;
    for (int64_t i = 2; i < static_cast<int64_t>(geo.wshape.size()); ++i) k *= geo.wshape[i];
    return k;
  }();
  int64_t extra_bytes = 0;
  if (p.form == Form::Interleaved) {
    g.set_input(conv, 0, x);
    set_int_attr(conv, "group", p.new_group);
    if (p.sum_block > 1) {
      const int64_t Cg = geo.in_per_group(), cin = Cg / p.sum_block;
      std::vector<float> w = *float_data(geo.w), out(M * cin * K, 0.0f);
      for (int64_t o = 0; o < M; ++o)
        for (int64_t c = 0; c < cin; ++c)
          for (int64_t s = 0; s < p.sum_block; ++s)
            for (int64_t k = 0; k < K; ++k)
              out[(o * cin + c) * K + k] += w[(o * Cg + c * p.sum_block + s) * K + k];
      std::vector<int64_t> shape = geo.wshape;
      shape[1] = cin;
      Value* nw = g.add_initializer(g.unique_name(geo.w->name + "_summed"), float_tensor(shape, out));
      g.set_input(conv, 1, nw);
      match::drop_if_unused_initializer(g, geo.w);
    }
  } else if (p.form == Form::Dense || p.form == Form::DenseSummed) {
    g.set_input(conv, 0, x);
    set_int_attr(conv, "group", 1);
    if (p.form == Form::DenseSummed) {
      const int64_t copies = p.R / p.G, Cin = geo.in_per_group();  // Cin = copies * C
      std::vector<float> w = *float_data(geo.w), out(M * p.C * K, 0.0f);
      for (int64_t o = 0; o < M; ++o)
        for (int64_t s = 0; s < copies; ++s)
          for (int64_t c = 0; c < p.C; ++c)
            for (int64_t k = 0; k < K; ++k) out[(o * p.C + c) * K + k] += w[(o * Cin + s * p.C + c) * K + k];
      std::vector<int64_t> shape = geo.wshape;
      shape[1] = p.C;
      Value* nw = g.add_initializer(g.unique_name(geo.w->name + "_summed"), float_tensor(shape, out));
      g.set_input(conv, 1, nw);
      match::drop_if_unused_initializer(g, geo.w);
    }
  } else {
    // Output blocks reordered from g = q*m + h to (h, q); the shuffle puts them back.
    const int64_t m = p.G / p.R, cout_g = M / p.G, block = cout_g * geo.in_per_group() * K;
    std::vector<float> w = *float_data(geo.w), nw(w.size());
    std::vector<float> b, nb;
    if (geo.b) {
      b = *float_data(geo.b);
      nb.resize(b.size());
    }
    for (int64_t h = 0; h < m; ++h)
      for (int64_t q = 0; q < p.R; ++q) {
        const int64_t from = q * m + h, to = h * p.R + q;
        std::copy(w.begin() + from * block, w.begin() + (from + 1) * block, nw.begin() + to * block);
        if (geo.b)
          std::copy(b.begin() + from * cout_g, b.begin() + (from + 1) * cout_g, nb.begin() + to * cout_g);
      }
    std::vector<Value*> ins{x, g.add_initializer(g.unique_name(geo.w->name + "_by_block"),
                                                 float_tensor(geo.wshape, nw))};
    if (geo.b) ins.push_back(g.add_initializer(g.unique_name(geo.b->name + "_by_block"), float_tensor({M}, nb)));
    Value* y = conv->outputs[0];
    Value* t = g.add_value(y->name + "_by_block");
    t->type = y->type;
    Node* c2 = g.add_node("Conv", ins, {t}, conv->name + "_on_source");
    copy_attrs(conv, c2);
    set_int_attr(c2, "group", m);
    Value* shape5 = g.add_initializer(g.unique_name(y->name + "_shuffle_shape"),
                                      int64_tensor({0, m, p.R, cout_g, -1}));
    Value* a = g.add_value(y->name + "_blocks");
    g.add_node("Reshape", {t, shape5}, {a}, conv->name + "_shuffle_split");
    Value* bt = g.add_value(y->name + "_shuffled");
    Node* tr = g.add_node("Transpose", {a}, {bt}, conv->name + "_shuffle");
    set_ints_attr(tr, "perm", {0, 2, 1, 3, 4});
    Value* s = g.add_value(y->name + "_shape");
    s->type.dtype = ir::DType::Int64;
    g.add_node("Shape", {t}, {s}, conv->name + "_shape");
    Value* out = g.add_value(y->name + "_unshuffled");
    out->type = y->type;
    g.add_node("Reshape", {bt, s}, {out}, conv->name + "_shuffle_merge");
    added += 5;
    extra_bytes = match::float_bytes(y);
    removed += match::replace_and_erase(g, y, out, /*take_name=*/true);
  }
  if (old_in->producer) removed += match::erase_if_dead(g, old_in->producer);
  r->fired += 1;
  r->nodes_removed += removed - added;
  if (repeated->producer == nullptr && repeated->uses.empty()) r->bytes_saved += repeat_bytes - extra_bytes;
}

}  // namespace

PassResult fold_repeat_into_conv(ir::Model& model, const PassOptions& options) {
  (void)options;
  Graph& g = model.graph;
  PassResult result;
  for (Node* n : match::node_snapshot(g)) {
    if (n->dead || n->op_type != "Conv" || !n->domain.empty() || !is_candidate(n)) continue;
    Plan plan;
    std::string why = plan_fold(n, model.opset(), &plan);
    if (!why.empty()) {
      result.skips.push_back({match::node_label(n), why});
      continue;
    }
    apply(g, plan, &result);
  }
  return result;
}

}  // namespace batchconv::rewrites

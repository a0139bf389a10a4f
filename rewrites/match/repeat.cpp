#include "match/repeat.h"

#include <algorithm>

#include "match/graph_search.h"

namespace batchconv::rewrites::match {

using ir::Node;
using ir::Value;

namespace {

RepeatSearch fail(std::string why) {
  RepeatSearch r;
  r.reason = std::move(why);
  return r;
}

std::string producer_desc(const Value* v) {
  if (v->producer == nullptr) return v->is_graph_input ? "a graph input" : "a constant";
  return "a " + v->producer->op_type + " node";
}

// Axes of an Unsqueeze: input 1 (opset >= 13) or attribute 'axes' (before).
std::optional<std::vector<int64_t>> unsqueeze_axes(const Node* n) {
  if (n->inputs.size() > 1 && n->inputs[1]) return constant_ints(n->inputs[1]);
  if (n->attr("axes")) return n->attr_ints("axes");
  return std::nullopt;
}

// Tile(x, repeats): exactly one repeat count != 1.
RepeatSearch match_tile(Node* n) {
  if (n->inputs.size() < 2 || !n->inputs[0] || !n->inputs[1]) return fail("Tile without repeats input");
  auto reps = constant_ints(n->inputs[1]);
  if (!reps) return fail("Tile repeats are not constant");
  int64_t axis = -1;
  for (size_t i = 0; i < reps->size(); ++i) {
    if ((*reps)[i] == 1) continue;
    if (axis >= 0) return fail("Tile repeats more than one axis");
    axis = static_cast<int64_t>(i);
  }
  if (axis < 0) return fail("Tile repeats nothing (all counts 1)");
  if ((*reps)[axis] < 1) return fail("Tile repeat count " + std::to_string((*reps)[axis]) + " < 1");
  if (auto r = rank_of(n->inputs[0]); r && *r != static_cast<int64_t>(reps->size()))
    return fail("Tile repeats has " + std::to_string(reps->size()) + " entries, its input has rank " +
                std::to_string(*r));
  Value* x = skip_identities(n->inputs[0]);
  // PyTorch writes Expand(x, ConstantOfShape(rank) = ones) before Tile: a no-op when ranks agree.
  if (Node* e = x->producer; e && e->op_type == "Expand" && e->domain.empty() && e->inputs.size() == 2) {
    auto s = constant_ints(e->inputs[1]);
    auto r = rank_of(e->inputs[0]);
    bool ones = s && std::all_of(s->begin(), s->end(), [](int64_t d) { return d == 1; });
    if (ones && r && *r == static_cast<int64_t>(reps->size()) && static_cast<int64_t>(s->size()) <= *r)
      x = skip_identities(e->inputs[0]);
  }
  RepeatSearch out;
  out.found = true;
  out.repeat = {x, n->outputs[0], axis, (*reps)[axis], "Tile", {}};
  return out;
}

RepeatSearch match_concat(Node* n) {
  if (n->inputs.size() < 2) return fail("Concat of a single input");
  Value* x = n->inputs[0];
  for (Value* in : n->inputs)
    if (in != x) return fail("Concat inputs are not all the same value");
  int64_t axis = n->attr_int("axis", 0);
  if (axis < 0) {
    auto r = rank_of(x);
    if (!r) return fail("Concat axis " + std::to_string(axis) + " is negative and the rank is unknown");
    auto a = normalize_axis(axis, *r);
    if (!a) return fail("Concat axis out of range");
    axis = *a;
  }
  RepeatSearch out;
  out.found = true;
  out.repeat = {x, n->outputs[0], axis, static_cast<int64_t>(n->inputs.size()), "Concat", {}};
  return out;
}

// Reshape(Expand(Unsqueeze(x, [a]), s), t): needs x's static shape to prove what the Reshape merges.
RepeatSearch match_unsqueeze_expand_reshape(Node* reshape) {
  if (reshape->inputs.size() < 2 || !reshape->inputs[0]) return fail("Reshape without shape input");
  Node* expand = reshape->inputs[0]->producer;
  if (!expand || expand->op_type != "Expand" || expand->inputs.size() < 2)
    return fail("input of conv is a Reshape not fed by an Expand");
  Node* unsq = expand->inputs[0]->producer;
  if (!unsq || unsq->op_type != "Unsqueeze") return fail("Expand is not fed by an Unsqueeze");
  Value* x = unsq->inputs[0];
  auto xs = static_shape(x);
  if (!xs) return fail("shape of the repeated tensor '" + x->name + "' is not static");
  const int64_t n = static_cast<int64_t>(xs->size());
  auto axes = unsqueeze_axes(unsq);
  if (!axes || axes->size() != 1) return fail("Unsqueeze axes are not one constant axis");
  auto a = normalize_axis((*axes)[0], n + 1);
  if (!a) return fail("Unsqueeze axis out of range");
  std::vector<int64_t> u = *xs;
  u.insert(u.begin() + *a, 1);
  auto s = constant_ints(expand->inputs[1]);
  if (!s) return fail("Expand shape is not constant");
  if (static_cast<int64_t>(s->size()) > n + 1) return fail("Expand adds leading axes");
  std::vector<int64_t> e = u;  // multidirectional broadcast, right-aligned
  for (size_t k = 0; k < s->size(); ++k) {
    size_t i = u.size() - s->size() + k;
    int64_t d = (*s)[k];
    if (d == 1 || d == u[i]) continue;
    if (u[i] != 1) return fail("Expand shape does not broadcast");
    e[i] = d;
  }
  for (int64_t i = 0; i <= n; ++i)
    if (i != *a && e[i] != u[i]) return fail("Expand broadcasts an axis other than the unsqueezed one");
  const int64_t count = e[*a];
  auto t = constant_ints(reshape->inputs[1]);
  if (!t) return fail("Reshape shape is not constant");
  auto out = reshape_output(e, *t, reshape->attr_int("allowzero", 0) != 0);
  if (!out) return fail("Reshape shape does not fit the expanded tensor");
  const std::vector<int64_t>& o = *out;
  std::vector<int64_t> tiled = *xs, interleaved = *xs;
  if (*a < n) tiled[*a] = ir::mul_sat(tiled[*a], count);
  if (*a > 0) interleaved[*a - 1] = ir::mul_sat(interleaved[*a - 1], count);
  if (*a < n && o == tiled) {
    RepeatSearch out;
    out.found = true;
    out.repeat = {x, reshape->outputs[0], *a, count, "Unsqueeze/Expand/Reshape", {}};
    return out;
  }
  if (*a > 0 && o == interleaved) {
    RepeatSearch out;
    out.found = true;
    out.repeat = {x, reshape->outputs[0], *a - 1, count, "Unsqueeze/Expand/Reshape (interleaved)", {}};
    out.repeat.interleaved = true;
    return out;
  }
  return fail("Reshape does not merge the repeated axis into a neighbour");
}

}  // namespace

RepeatSearch find_repeat(Value* v) {
  // Walk back through layout-only nodes, remembering them (nearest first).
  std::vector<Node*> chain;
  Value* cur = v;
  for (;;) {
    Node* p = cur->producer;
    if (!p || !p->domain.empty() || p->inputs.empty() || !p->inputs[0]) break;
    if (p->op_type == "Identity") {
      chain.push_back(p);
      cur = p->inputs[0];
      continue;
    }
    if (p->op_type == "Unsqueeze") {
      // An Unsqueeze directly on a repeat's Expand is part of the Unsqueeze/Expand/Reshape form.
      chain.push_back(p);
      cur = p->inputs[0];
      continue;
    }
    break;
  }
  Node* p = cur->producer;
  RepeatSearch found;
  if (p && p->domain.empty() && p->op_type == "Tile") {
    found = match_tile(p);
  } else if (p && p->domain.empty() && p->op_type == "Concat") {
    found = match_concat(p);
  } else if (p && p->domain.empty() && p->op_type == "Reshape") {
    found = match_unsqueeze_expand_reshape(p);
  } else {
    return fail("input '" + v->name + "' is " + producer_desc(cur) + ", not a repeat");
  }
  if (!found.found) return found;
  // Map the repeated axis through the Unsqueezes (applied in forward order: reverse of `chain`).
  int64_t axis = found.repeat.axis;
  auto rank = rank_of(found.repeat.repeated);
  if (!rank && p->op_type == "Tile") rank = static_cast<int64_t>(constant_ints(p->inputs[1])->size());
  std::reverse(chain.begin(), chain.end());
  for (Node* n : chain) {
    if (n->op_type != "Unsqueeze") continue;
    auto axes = unsqueeze_axes(n);
    if (!axes || !rank) return fail("Unsqueeze after the repeat has unknown axes or rank");
    const int64_t out_rank = *rank + static_cast<int64_t>(axes->size());
    std::vector<bool> inserted(out_rank, false);
    for (int64_t ax : *axes) {
      auto na = normalize_axis(ax, out_rank);
      if (!na) return fail("Unsqueeze axis out of range");
      inserted[*na] = true;
    }
    int64_t in = 0;
    for (int64_t o = 0; o < out_rank; ++o) {
      if (inserted[o]) continue;
      if (in == axis) {
        axis = o;
        break;
      }
      ++in;
    }
    rank = out_rank;
  }
  found.repeat.axis = axis;
  found.repeat.layout_chain = chain;
  found.repeat.rank = rank ? *rank : -1;
  return found;
}

}  // namespace batchconv::rewrites::match

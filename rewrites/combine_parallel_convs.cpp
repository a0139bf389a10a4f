#include "combine_parallel_convs.h"

#include <algorithm>
#include <set>

#include "conv_geometry.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

namespace {

using ir::Graph;
using ir::Node;
using ir::Value;

// Convs that read one value and can be combined, in output order.
struct Group {
  std::vector<ConvGeometry> convs;
  Node* concat = nullptr;  // set when the outputs are exactly a consecutive run of this Concat
  size_t run_begin = 0;
};

// The shared-input siblings, partitioned by geometry; reasons for those that fit no partner.
std::vector<Group> partition(Value* x, std::vector<Skip>* skips) {
  std::vector<Group> groups;
  for (Node* n : match::consumers(x, "Conv", 0)) {
    std::string why;
    auto geo = read_conv(n, &why);
    if (!geo) {
      skips->push_back({match::node_label(n), why});
      continue;
    }
    if (!match::is_float_constant(geo->w)) {
      skips->push_back({match::node_label(n), "weight '" + geo->w->name + "' is not a float constant"});
      continue;
    }
    if (geo->b && !match::is_float_constant(geo->b)) {
      skips->push_back({match::node_label(n), "bias '" + geo->b->name + "' is not a float constant"});
      continue;
    }
    bool placed = false;
    for (auto& g : groups)
      if (geometry_mismatch(g.convs.front(), *geo).empty()) {
        g.convs.push_back(*geo);
        placed = true;
        break;
      }
    if (!placed) groups.push_back(Group{{*geo}, nullptr, 0});
  }
  for (size_t k = 0; k < groups.size() && groups.size() >= 2; ++k) {
    if (groups[k].convs.size() >= 2) continue;
    const ConvGeometry& lone = groups[k].convs.front();
    const ConvGeometry& other = groups[k == 0 ? 1 : 0].convs.front();
    skips->push_back({match::node_label(lone.node), "no sibling on '" + x->name + "' with the same geometry (vs " +
                                                        match::node_label(other.node) + ": " +
                                                        geometry_mismatch(other, lone) + ")"});
  }
  std::vector<Group> out;
  for (auto& g : groups)
    if (g.convs.size() >= 2) out.push_back(std::move(g));
  return out;
}

// With group 1: are the outputs used only by one Concat along channels, as a consecutive run?
// Then reorder the convs to the Concat's order.
void find_concat_run(Group* grp) {
  if (grp->convs.front().group != 1) return;
  Node* concat = nullptr;
  for (const auto& c : grp->convs) {
    const Value* y = c.node->outputs[0];
    if (y->is_graph_output || y->uses.size() != 1) return;
    Node* u = y->uses[0].node;
    if (u->op_type != "Concat" || !u->domain.empty() || (concat && u != concat)) return;
    concat = u;
  }
  const int64_t rank = 2 + grp->convs.front().spatial;
  auto axis = match::normalize_axis(concat->attr_int("axis", 0), rank);
  if (!axis || *axis != 1) return;
  std::vector<ConvGeometry> ordered;
  size_t begin = concat->inputs.size();
  for (size_t k = 0; k < concat->inputs.size(); ++k) {
    Value* in = concat->inputs[k];
    auto it = std::find_if(grp->convs.begin(), grp->convs.end(),
                           [&](const ConvGeometry& c) { return c.node->outputs[0] == in; });
    if (it == grp->convs.end()) continue;
    if (ordered.empty()) begin = k;
    if (k != begin + ordered.size()) return;  // not consecutive
    ordered.push_back(*it);
  }
  grp->convs = ordered;
  grp->concat = concat;
  grp->run_begin = begin;
}

std::vector<int64_t> spatial_of(const Value* y) {
  auto s = match::static_shape(y);
  return s ? std::vector<int64_t>(s->begin() + 2, s->end()) : std::vector<int64_t>{};
}

// Why a grouped (g > 1) combination cannot be emitted, or "".
std::string grouped_blocker(const Group& grp, int64_t opset) {
  if (opset < 5) return "opset " + std::to_string(opset) + " < 5: splitting grouped outputs needs Reshape-5";
  for (const auto& c : grp.convs) {
    auto s = match::static_shape(c.node->outputs[0]);
    if (!s || s->size() != static_cast<size_t>(2 + c.spatial))
      return "group " + std::to_string(c.group) + " > 1 needs the static output shape of '" +
             c.node->outputs[0]->name + "' to split the interleaved output back";
  }
  return "";
}

void apply(ir::Model& model, const Group& grp, PassResult* r) {
  Graph& g = model.graph;
  const ConvGeometry& c0 = grp.convs.front();
  const int64_t groups = c0.group;
  const int64_t per = [&] {
    int64_t k = c0.in_per_group();
    for (size_t i = 2; i < c0.wshape.size(); ++i) k *= c0.wshape[i];
    return k;
  }();  // weight elements per output channel
  int64_t total = 0;
  for (const auto& c : grp.convs) total += c.out_channels();
  // Output blocks ordered (group j, conv i); with one group simply conv after conv.
  std::vector<float> w(total * per), b;
  if (c0.b) b.resize(total);
  std::vector<std::vector<float>> wds, bds;
  for (const auto& c : grp.convs) {
    wds.push_back(*float_data(c.w));
    if (c0.b) bds.push_back(*float_data(c.b));
  }
  int64_t at = 0;
  for (int64_t j = 0; j < groups; ++j)
    for (size_t i = 0; i < grp.convs.size(); ++i) {
      const int64_t mg = grp.convs[i].out_channels() / groups;
      std::copy(wds[i].begin() + j * mg * per, wds[i].begin() + (j + 1) * mg * per, w.begin() + at * per);
      if (c0.b) std::copy(bds[i].begin() + j * mg, bds[i].begin() + (j + 1) * mg, b.begin() + at);
      at += mg;
    }
  const std::string base = c0.node->name + "_combined";
  std::vector<int64_t> wshape = c0.wshape;
  wshape[0] = total;
  std::vector<Value*> ins{c0.x, g.add_initializer(g.unique_name(base + "_w"), float_tensor(wshape, w))};
  if (c0.b) ins.push_back(g.add_initializer(g.unique_name(base + "_b"), float_tensor({total}, b)));
  Value* u = g.add_value(base);
  const auto sp = spatial_of(c0.node->outputs[0]);
  if (auto xs = match::static_shape(c0.x); xs && !sp.empty()) {
    std::vector<int64_t> us{(*xs)[0], total};
    us.insert(us.end(), sp.begin(), sp.end());
    set_float_shape(u, us);
  }
  Node* conv = g.add_node("Conv", ins, {u}, base);
  copy_attrs(c0.node, conv);
  int added = 1, removed = 0;
  int64_t before_bytes = 0;
  for (const auto& c : grp.convs) before_bytes += match::float_bytes(c.node->outputs[0]);

  if (grp.concat) {
    Node* old = grp.concat;
    std::vector<Value*> cins;
    for (size_t k = 0; k < old->inputs.size(); ++k) {
      if (k == grp.run_begin) cins.push_back(u);
      if (k >= grp.run_begin && k < grp.run_begin + grp.convs.size()) continue;
      cins.push_back(old->inputs[k]);
    }
    if (cins.size() == 1) {
      removed += match::replace_and_erase(g, old->outputs[0], u, /*take_name=*/true);
    } else {
      Value* cy = g.add_value(old->outputs[0]->name + "_merged");
      cy->type = old->outputs[0]->type;
      Node* nc = g.add_node("Concat", cins, {cy}, old->name + "_merged");
      copy_attrs(old, nc);
      ++added;
      removed += match::replace_and_erase(g, old->outputs[0], cy, /*take_name=*/true);
    }
    r->bytes_saved += before_bytes;
  } else {
    Value* split_in = u;
    int64_t split_axis = 1;
    std::vector<int64_t> sizes;
    for (const auto& c : grp.convs) sizes.push_back(c.out_channels() / groups);
    if (groups > 1) {
      split_in = g.add_value(base + "_by_group");
      Value* s = g.add_initializer(g.unique_name(base + "_by_group_shape"), int64_tensor({0, groups, total / groups, -1}));
      g.add_node("Reshape", {u, s}, {split_in}, base + "_by_group");
      ++added;
      split_axis = 2;
    }
    std::vector<Value*> parts;
    for (const auto& c : grp.convs) parts.push_back(g.add_value(c.node->outputs[0]->name + "_part"));
    std::vector<Value*> sins{split_in};
    if (model.opset() >= 13) sins.push_back(g.add_initializer(g.unique_name(base + "_split"), int64_tensor(sizes)));
    Node* split = g.add_node("Split", sins, parts, base + "_split");
    set_int_attr(split, "axis", split_axis);
    if (model.opset() < 13) set_ints_attr(split, "split", sizes);
    ++added;
    for (size_t i = 0; i < grp.convs.size(); ++i) {
      Value* y = grp.convs[i].node->outputs[0];
      Value* part = parts[i];
      part->type = y->type;
      if (groups > 1) {
        auto ys = *match::static_shape(y);
        ys[0] = 0;  // keep the batch as it comes
        Value* s = g.add_initializer(g.unique_name(y->name + "_shape"), int64_tensor(ys));
        Value* back = g.add_value(y->name + "_ungrouped");
        back->type = y->type;
        g.add_node("Reshape", {part, s}, {back}, base + "_ungroup_" + std::to_string(i));
        part->type.shape.reset();
        ++added;
        part = back;
      }
      removed += match::replace_and_erase(g, y, part, /*take_name=*/true);
    }
    r->bytes_saved -= match::float_bytes(u);
  }
  r->fired += 1;
  r->nodes_removed += removed - added;
}

}  // namespace

PassResult combine_parallel_convs(ir::Model& model, const PassOptions& options) {
  (void)options;
  Graph& g = model.graph;
  PassResult result;
  std::set<const Value*> seen;
  for (Node* n : match::node_snapshot(g)) {
    if (n->dead || n->op_type != "Conv" || !n->domain.empty() || n->inputs.empty() || !n->inputs[0]) continue;
    Value* x = n->inputs[0];
    if (!seen.insert(x).second) continue;
    for (Group& grp : partition(x, &result.skips)) {
      find_concat_run(&grp);
      if (grp.convs.front().group > 1) {
        if (auto why = grouped_blocker(grp, model.opset()); !why.empty()) {
          for (const auto& c : grp.convs) result.skips.push_back({match::node_label(c.node), why});
          continue;
        }
      }
      apply(model, grp, &result);
    }
  }
  return result;
}

}  // namespace batchconv::rewrites

#include "combine_parallel_convs.h"

#include <algorithm>
#include <map>
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
  Node* concat = nullptr;  // set when the first run_len outputs are a consecutive run of this Concat
  size_t run_begin = 0, run_len = 0;
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

// With group 1: do (some of) the outputs feed one Concat along channels as a consecutive run, and
// nothing else? Then that run moves to the front, in the Concat's order: its part of the combined
// output is exactly the run's concatenation (all of the combined output when the run is everything).
void find_concat_run(Group* grp) {
  if (grp->convs.front().group != 1) return;
  const int64_t rank = 2 + grp->convs.front().spatial;
  auto feeds = [&](const ConvGeometry& c) -> Node* {  // the channel Concat that is c's only user
    const Value* y = c.node->outputs[0];
    if (y->is_graph_output || y->uses.size() != 1) return nullptr;
    Node* u = y->uses[0].node;
    if (u->op_type != "Concat" || !u->domain.empty()) return nullptr;
    auto axis = match::normalize_axis(u->attr_int("axis", 0), rank);
    return axis && *axis == 1 ? u : nullptr;
  };
  std::map<Node*, int> members;
  for (const auto& c : grp->convs)
    if (Node* k = feeds(c)) members[k]++;
  Node* concat = nullptr;
  for (const auto& [k, count] : members)
    if (count >= 2 && (!concat || count > members[concat])) concat = k;
  if (!concat) return;
  std::vector<ConvGeometry> run, rest;
  size_t begin = 0;
  for (size_t k = 0; k < concat->inputs.size(); ++k) {
    auto it = std::find_if(grp->convs.begin(), grp->convs.end(), [&](const ConvGeometry& c) {
      return c.node->outputs[0] == concat->inputs[k] && feeds(c) == concat;
    });
    const bool member = it != grp->convs.end();
    if (member && run.empty()) begin = k;
    if (member && k == begin + run.size()) {
      run.push_back(*it);
    } else if (!run.empty()) {
      break;  // the first consecutive run only
    }
  }
  if (run.size() < 2) return;
  for (const auto& c : grp->convs)
    if (std::none_of(run.begin(), run.end(), [&](const ConvGeometry& r) { return r.node == c.node; }))
      rest.push_back(c);
  grp->convs = run;
  grp->convs.insert(grp->convs.end(), rest.begin(), rest.end());
  grp->concat = concat;
  grp->run_begin = begin;
  grp->run_len = run.size();
}

// Puts `v` in place of inputs [begin, begin+len) of `concat` (a new Concat, or v itself when that was
// all of it). Returns the nodes removed.
int splice_run(Graph& g, Node* concat, size_t begin, size_t len, Value* v, int* added) {
  std::vector<Value*> cins;
  for (size_t k = 0; k < concat->inputs.size(); ++k) {
    if (k == begin) cins.push_back(v);
    if (k >= begin && k < begin + len) continue;
    cins.push_back(concat->inputs[k]);
  }
  if (cins.size() == 1) return match::replace_and_erase(g, concat->outputs[0], v, /*take_name=*/true);
  Value* cy = g.add_value(concat->outputs[0]->name + "_merged");
  cy->type = concat->outputs[0]->type;
  Node* nc = g.add_node("Concat", cins, {cy}, concat->name + "_merged");
  copy_attrs(concat, nc);
  ++*added;
  return match::replace_and_erase(g, concat->outputs[0], cy, /*take_name=*/true);
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

  int64_t run_bytes = 0;
  for (size_t i = 0; i < grp.run_len; ++i) run_bytes += match::float_bytes(grp.convs[i].node->outputs[0]);
  if (grp.concat && grp.run_len == grp.convs.size()) {
    removed += splice_run(g, grp.concat, grp.run_begin, grp.run_len, u, &added);
    r->bytes_saved += before_bytes;
  } else {
    Value* split_in = u;
    int64_t split_axis = 1;
    // One part for the Concat run (if any), then one per other conv.
    std::vector<int64_t> sizes;
    int64_t run_channels = 0;
    for (size_t i = 0; i < grp.run_len; ++i) run_channels += grp.convs[i].out_channels();
    if (grp.run_len) sizes.push_back(run_channels);
    for (size_t i = grp.run_len; i < grp.convs.size(); ++i) sizes.push_back(grp.convs[i].out_channels() / groups);
    if (groups > 1) {
      split_in = g.add_value(base + "_by_group");
      Value* s = g.add_initializer(g.unique_name(base + "_by_group_shape"), int64_tensor({0, groups, total / groups, -1}));
      g.add_node("Reshape", {u, s}, {split_in}, base + "_by_group");
      ++added;
      split_axis = 2;
    }
    std::vector<Value*> parts;
    if (grp.run_len) parts.push_back(g.add_value(grp.concat->outputs[0]->name + "_run"));
    for (size_t i = grp.run_len; i < grp.convs.size(); ++i)
      parts.push_back(g.add_value(grp.convs[i].node->outputs[0]->name + "_part"));
    std::vector<Value*> sins{split_in};
    if (model.opset() >= 13) sins.push_back(g.add_initializer(g.unique_name(base + "_split"), int64_tensor(sizes)));
    Node* split = g.add_node("Split", sins, parts, base + "_split");
    set_int_attr(split, "axis", split_axis);
    if (model.opset() < 13) set_ints_attr(split, "split", sizes);
    ++added;
    if (grp.run_len) {
      removed += splice_run(g, grp.concat, grp.run_begin, grp.run_len, parts[0], &added);
      r->bytes_saved += run_bytes;
    }
    for (size_t i = grp.run_len; i < grp.convs.size(); ++i) {
      Value* y = grp.convs[i].node->outputs[0];
      Value* part = parts[i - grp.run_len + (grp.run_len ? 1 : 0)];
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

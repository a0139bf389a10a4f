// fold_batch_norm_into_conv: see fold_batch_norm_into_conv.h.
#include "fold_batch_norm_into_conv.h"

#include <cmath>

#include "conv_geometry.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

namespace {

using ir::Node;
using ir::Value;

// Why `bn` cannot be folded into the conv that produces its input, or "". Sets *conv.
std::string blocker(Node* bn, ConvGeometry* conv) {
  if (bn->inputs.size() != 5) return "has " + std::to_string(bn->inputs.size()) + " inputs, expected 5";
  for (Value* v : bn->inputs)
    if (!v) return "has an omitted input";
  if (bn->attr_int("training_mode", 0) != 0) return "training_mode=1 (batch statistics, not a fixed affine map)";
  for (size_t k = 1; k < bn->outputs.size(); ++k)
    if (bn->outputs[k] && (!bn->outputs[k]->uses.empty() || bn->outputs[k]->is_graph_output))
      return "its running mean/variance output " + std::to_string(k) + " is used";
  Value* c = bn->inputs[0];
  if (!c->producer || c->producer->op_type != "Conv" || !c->producer->domain.empty())
    return "input '" + c->name + "' is not a Conv's output";
  if (c->is_graph_output || c->uses.size() != 1)
    return "conv output '" + c->name + "' is also read elsewhere (or is a graph output)";
  std::string why;
  auto geo = read_conv(c->producer, &why);
  if (!geo) return "conv " + match::node_label(c->producer) + ": " + why;
  if (!float_data(geo->w)) return "conv weight '" + geo->w->name + "' is not a float constant";
  if (geo->b && !float_data(geo->b)) return "conv bias '" + geo->b->name + "' is not a float constant";
  const int64_t m = geo->out_channels();
  const char* names[] = {"scale", "B", "mean", "var"};
  for (int k = 1; k < 5; ++k) {
    auto d = float_data(bn->inputs[k]);
    if (!d) return std::string(names[k - 1]) + " '" + bn->inputs[k]->name + "' is not a float constant";
    if (static_cast<int64_t>(d->size()) != m)
      return std::string(names[k - 1]) + " '" + bn->inputs[k]->name + "' has " + std::to_string(d->size()) +
             " values, expected the conv's " + std::to_string(m) + " output channels";
  }
  *conv = *geo;
  return "";
}

}  // namespace

PassResult fold_batch_norm_into_conv(ir::Model& model, const PassOptions& options) {
  PassResult result;
  ir::Graph& g = model.graph;
  for (Node* bn : match::node_snapshot(g)) {
    if (bn->dead || bn->op_type != "BatchNormalization" || !bn->domain.empty()) continue;
    ConvGeometry conv;
    std::string why = options.compute_weight_values
                          ? blocker(bn, &conv)
                          : "the weights are runtime arguments, which rewrites may only rearrange, not compute";
    if (!why.empty()) {
      result.skips.push_back({match::node_label(bn), why});
      continue;
    }
    const int64_t m = conv.out_channels();
    const std::vector<float> w = *float_data(conv.w);
    const std::vector<float> b = conv.b ? *float_data(conv.b) : std::vector<float>(m, 0.0f);
    const std::vector<float> scale = *float_data(bn->inputs[1]), beta = *float_data(bn->inputs[2]);
    const std::vector<float> mean = *float_data(bn->inputs[3]), var = *float_data(bn->inputs[4]);
    const double eps = bn->attr("epsilon") ? bn->attr("epsilon")->f : 1e-5;
    const int64_t per_channel = static_cast<int64_t>(w.size()) / m;
    std::vector<float> w2(w.size()), b2(m);
    for (int64_t o = 0; o < m; ++o) {
      const double s = static_cast<double>(scale[o]) / std::sqrt(static_cast<double>(var[o]) + eps);
      for (int64_t k = 0; k < per_channel; ++k)
        w2[o * per_channel + k] = static_cast<float>(w[o * per_channel + k] * s);
      b2[o] = static_cast<float>((static_cast<double>(b[o]) - mean[o]) * s + beta[o]);
    }
    const std::string base = conv.node->name.empty() ? bn->outputs[0]->name : conv.node->name;
    Value* wv = g.add_initializer(g.unique_name(base + "_bn_weight"), float_tensor(conv.wshape, std::move(w2)));
    Value* bv = g.add_initializer(g.unique_name(base + "_bn_bias"), float_tensor({m}, std::move(b2)));
    Value* y = g.add_value(bn->outputs[0]->name + "_folded");
    y->type = bn->outputs[0]->type;
    Node* folded = g.add_node("Conv", {conv.x, wv, bv}, {y}, conv.node->name);
    copy_attrs(conv.node, folded);
    result.bytes_saved += match::float_bytes(conv.node->outputs[0]);
    result.nodes_removed += match::replace_and_erase(g, bn->outputs[0], y, /*take_name=*/true) - 1;
    ++result.fired;
  }
  return result;
}

}  // namespace batchconv::rewrites

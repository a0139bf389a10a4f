// ONNX ModelProto -> graph IR, with validation that names what is wrong.
#include <onnx/onnx_pb.h>

#include <onnx/defs/schema.h>

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "onnx/convert.h"
#include "onnx/onnx_io.h"

namespace batchconv::io {

namespace {

std::string node_label(const onnx::NodeProto& n, int index) {
  std::string name = n.name().empty() ? n.op_type() + "#" + std::to_string(index) : n.name();
  return "node '" + name + "' (" + n.op_type() + ")";
}

// Attribute values that would make ONNX 1.12's own shape inference divide by
// zero (a crash, not an exception): rejected here with the node's name.
void check_geometry(const onnx::NodeProto& n, const std::string& label) {
  static const char* kConvPool[] = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
                                    "AveragePool", "LpPool", "MaxUnpool"};
  bool conv_pool = false;
  for (const char* op : kConvPool) conv_pool |= n.op_type() == op;
  if (!conv_pool || !(n.domain().empty() || n.domain() == "ai.onnx")) return;
  for (const auto& a : n.attribute()) {
    const std::string& name = a.name();
    if (name == "strides" || name == "dilations" || name == "kernel_shape") {
      for (int64_t v : a.ints()) {
        if (v <= 0) throw Error(label + ": " + name + " must be positive, got " + std::to_string(v));
        if (v > kMaxDim) throw Error(label + ": " + name + " entry " + std::to_string(v) + " is larger than " + std::to_string(kMaxDim));
      }
    } else if (name == "group" && a.i() <= 0) {
      throw Error(label + ": group must be positive, got " + std::to_string(a.i()));
    } else if (name == "pads") {
      for (int64_t v : a.ints()) {
        if (v < 0) throw Error(label + ": pads must not be negative, got " + std::to_string(v));
        if (v > kMaxDim) throw Error(label + ": pads entry " + std::to_string(v) + " is larger than " + std::to_string(kMaxDim));
      }
    }
  }
}

// Inputs, outputs and attributes against the op's ONNX schema (standard
// domain, at the model's opset): the count within the schema's bounds, no
// required (non-optional) slot left empty, and every attribute one the schema
// names, of its type. Passes and ONNX's own shape inference index these slots;
// a misspelt attribute (`groux` for `group`) would otherwise be ignored and
// its default used, a silently different model. Ops without a schema (other
// domains) are left to their users.
void check_schema(const onnx::NodeProto& n, const std::string& label, int64_t opset) {
  if (!(n.domain().empty() || n.domain() == "ai.onnx") || opset <= 0) return;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "");
  if (!schema) return;
  auto check = [&](int count, int lo, int hi, const std::vector<onnx::OpSchema::FormalParameter>& formal,
                   const google::protobuf::RepeatedPtrField<std::string>& names, const char* what) {
    if (count < lo || count > hi) {
      std::string want = lo == hi ? std::to_string(lo)
                         : hi == std::numeric_limits<int>::max() ? "at least " + std::to_string(lo)
                                                                  : std::to_string(lo) + " to " + std::to_string(hi);
      throw Error(label + ": has " + std::to_string(count) + " " + what + "s, expected " + want + " (opset " +
                  std::to_string(opset) + ")");
    }
    for (int i = 0; i < count && !formal.empty(); ++i) {
      const auto& f = formal[std::min<size_t>(static_cast<size_t>(i), formal.size() - 1)];
      if (names.Get(i).empty() && f.GetOption() != onnx::OpSchema::Optional)
        throw Error(label + ": " + what + " " + std::to_string(i) + " ('" + f.GetName() + "') is required but empty");
    }
  };
  check(n.input_size(), schema->min_input(), schema->max_input(), schema->inputs(), n.input(), "input");
  check(n.output_size(), schema->min_output(), schema->max_output(), schema->outputs(), n.output(), "output");
  const auto& known = schema->attributes();
  for (const auto& a : n.attribute()) {
    auto it = known.find(a.name());
    if (it == known.end()) {
      std::string names;
      for (const auto& [name, attr] : known) names += (names.empty() ? "" : ", ") + name;
      throw Error(label + ": unknown attribute '" + a.name() + "' (" + n.op_type() + " at opset " +
                  std::to_string(opset) + " has " + (names.empty() ? "none" : names) + ")");
    }
    if (a.type() != onnx::AttributeProto::UNDEFINED && a.type() != it->second.type)
      throw Error(label + ": attribute '" + a.name() + "' has type " + onnx::AttributeProto::AttributeType_Name(a.type()) +
                  ", expected " + onnx::AttributeProto::AttributeType_Name(it->second.type));
  }
}

// A ConstantOfShape whose shape is known in the file (a constant, or the
// Shape of a typed value): every entry must be a sane dimension, and when its
// output is itself used as a shape (Expand, Reshape, Tile, ConstantOfShape),
// its length is a rank and must be small. Otherwise ONNX's shape inference
// would build a shape of that rank and run out of memory (found by the fuzz target).
constexpr int64_t kMaxRank = 64;

void check_constant_of_shape(const ir::Node* n, const std::string& label) {
  if (n->op_type != "ConstantOfShape" || !n->domain.empty() || n->inputs.empty() || !n->inputs[0]) return;
  const ir::Value* s = n->inputs[0];
  std::vector<int64_t> entries;
  std::shared_ptr<const ir::Tensor> t = s->constant;
  if (!t && s->producer && s->producer->op_type == "Constant")
    if (const ir::Attribute* a = s->producer->attr("value"); a && a->t) t = a->t;
  if (t && !t->is_float()) {
    entries = t->i;
  } else if (s->producer && s->producer->op_type == "Shape" && !s->producer->inputs.empty() &&
             s->producer->inputs[0] && s->producer->inputs[0]->type.shape) {
    for (const ir::Dim& d : *s->producer->inputs[0]->type.shape) entries.push_back(d.known() ? d.value : 0);
  }
  for (int64_t d : entries)
    if (d < 0 || d > kMaxDim) throw Error(label + ": shape entry " + std::to_string(d) + " is negative or huge");
  if (entries.empty() || n->outputs.empty() || !n->outputs[0]) return;
  for (const ir::Use& u : n->outputs[0]->uses) {
    const std::string& op = u.node->op_type;
    bool shape_slot = (u.index == 1 && (op == "Expand" || op == "Reshape" || op == "Tile")) ||
                      (u.index == 0 && op == "ConstantOfShape");
    if (shape_slot && entries[0] > kMaxRank)
      throw Error(label + ": its output, " + std::to_string(entries[0]) + " entries long, is used as the shape of " +
                  ir::describe(u.node) + ": a rank over " + std::to_string(kMaxRank));
  }
}

// Conv/pool ranks that ONNX 1.12's shape inference indexes past (a crash, not
// an exception; found by the fuzz target): spatial attributes must match the
// rank of X (or of W) where the file states it.
void check_conv_ranks(const ir::Node* n, const std::string& label) {
  static const char* kOps[] = {"Conv", "ConvTranspose", "ConvInteger", "MaxPool", "AveragePool", "LpPool"};
  bool match = false;
  for (const char* op : kOps) match |= n->op_type == op;
  if (!match || !n->domain.empty()) return;
  auto rank = [](const ir::Value* v) -> int64_t {
    return v && v->type.shape ? static_cast<int64_t>(v->type.shape->size()) : -1;
  };
  int64_t rx = rank(n->inputs.empty() ? nullptr : n->inputs[0]);
  int64_t rw = (n->op_type.find("Conv") != std::string::npos && n->inputs.size() > 1) ? rank(n->inputs[1]) : -1;
  if (rx >= 0 && rx < 3) throw Error(label + ": input X has rank " + std::to_string(rx) + ", expected (N, C, spatial...)");
  if (rx >= 0 && rw >= 0 && rx != rw)
    throw Error(label + ": X has rank " + std::to_string(rx) + " but W has rank " + std::to_string(rw));
  int64_t r = rx >= 0 ? rx : rw;
  if (r < 0) return;
  if (r < 3) throw Error(label + ": W has rank " + std::to_string(r) + ", expected (M, C/group, kernel...)");
  for (const auto& [name, a] : n->attrs) {
    size_t want = name == "pads" ? 2 * static_cast<size_t>(r - 2)
                  : (name == "strides" || name == "dilations" || name == "kernel_shape") ? static_cast<size_t>(r - 2)
                                                                                           : 0;
    if (want && a.kind == ir::Attribute::Kind::Ints && a.ints.size() != want)
      throw Error(label + ": " + name + " has " + std::to_string(a.ints.size()) + " entries, expected " +
                  std::to_string(want) + " for rank " + std::to_string(r));
  }
}

// Every name a subgraph reads (inputs of its nodes, recursively).
void collect_subgraph_reads(const onnx::GraphProto& g, std::unordered_set<std::string>& out) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) out.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) collect_subgraph_reads(a.g(), out);
      for (const auto& sg : a.graphs()) collect_subgraph_reads(sg, out);
    }
  }
}

// Everything but the types from shape inference.
std::unique_ptr<ir::Model> build(const onnx::ModelProto& proto, const std::string& origin) {
  const std::string& f = origin;
  if (!proto.has_graph()) throw Error(f + ": not an ONNX model (no graph)");
  if (proto.ir_version() <= 0) throw Error(f + ": not an ONNX model (no ir_version)");
  if (proto.ir_version() > kMaxIrVersion)
    throw Error(f + ": ONNX IR version " + std::to_string(proto.ir_version()) + " is newer than the supported " +
                std::to_string(kMaxIrVersion) + " (ONNX 1.12)");
  if (proto.ir_version() < 3)
    throw Error(f + ": ONNX IR version " + std::to_string(proto.ir_version()) + " is older than the supported 3");
  if (proto.opset_import_size() == 0) throw Error(f + ": model imports no opset (opset_import is empty)");
  if (proto.functions_size() > 0) throw Error(f + ": model-local functions are not supported");

  auto model = std::make_unique<ir::Model>();
  model->ir_version = proto.ir_version();
  for (const auto& o : proto.opset_import()) model->opset_imports.emplace_back(o.domain(), o.version());
  model->producer_name = proto.producer_name();
  model->producer_version = proto.producer_version();
  model->domain = proto.domain();
  model->doc_string = proto.doc_string();
  model->model_version = proto.model_version();
  for (const auto& p : proto.metadata_props()) model->metadata_props.emplace_back(p.key(), p.value());

  const onnx::GraphProto& gp = proto.graph();
  ir::Graph& g = model->graph;
  g.name = gp.name();
  g.doc_string = gp.doc_string();
  {
    size_t outs = 0;
    for (const auto& n : gp.node()) outs += static_cast<size_t>(n.output_size());
    g.reserve(static_cast<size_t>(gp.node_size()), outs + gp.initializer_size() + gp.input_size());
  }
  if (gp.sparse_initializer_size() > 0) throw Error(f + ": sparse initializers are not supported");

  auto define = [&](const std::string& name, const std::string& by) -> ir::Value* {
    if (name.empty()) throw Error(f + ": " + by + " defines a value with an empty name");
    if (g.find_value(name)) throw Error(f + ": value '" + name + "' is defined twice (again by " + by + ")");
    return g.add_value(name);
  };

  for (const auto& t : gp.initializer()) {
    ir::Value* v = define(t.name(), "an initializer");
    v->constant = std::make_shared<ir::Tensor>(tensor_from_proto(t, f + ": initializer '" + t.name() + "'"));
    v->type.dtype = v->constant->dtype;
    v->type.onnx_elem_type = t.data_type();
    std::vector<ir::Dim> dims;
    for (int64_t d : v->constant->shape) dims.push_back(ir::Dim{d, ""});
    v->type.shape = dims;
  }
  for (const auto& in : gp.input()) {
    ir::Value* v = g.find_value(in.name());
    if (v && (!v->constant || v->is_graph_input))
      throw Error(f + ": graph input '" + in.name() + "' is listed twice");
    if (!v) {
      v = define(in.name(), "graph input");
      if (!in.has_type()) throw Error(f + ": graph input '" + in.name() + "' has no type");
      v->type = type_from_proto(in.type(), f + ": graph input '" + in.name() + "'");
    }
    v->is_graph_input = true;
    g.inputs.push_back(v);
  }

  // Outputs first, so that node inputs may refer forward (cycles are found below).
  std::vector<ir::Node*> nodes;
  nodes.reserve(gp.node_size());
  for (int k = 0; k < gp.node_size(); ++k) {
    const auto& np = gp.node(k);
    if (np.op_type().empty()) throw Error(f + ": " + node_label(np, k) + " has no op_type");
    if (np.output_size() == 0) throw Error(f + ": " + node_label(np, k) + " has no outputs");
    const int64_t opset = model->opset(np.domain() == "ai.onnx" ? "" : np.domain());
    if (opset <= 0)  // without it no schema says what the node's inputs are
      throw Error(f + ": " + node_label(np, k) + ": the model imports no opset for its domain '" + np.domain() + "'");
    check_schema(np, f + ": " + node_label(np, k), opset);
    check_geometry(np, f + ": " + node_label(np, k));
    std::vector<ir::Value*> outs;
    for (const auto& o : np.output()) outs.push_back(o.empty() ? nullptr : define(o, node_label(np, k)));
    ir::Node* n = g.add_node(np.op_type(), {}, outs, np.name());
    n->domain = np.domain() == "ai.onnx" ? "" : np.domain();
    n->doc_string = np.doc_string();
    nodes.push_back(n);
  }
  std::unordered_set<std::string> sub_reads;
  for (int k = 0; k < gp.node_size(); ++k) {
    const auto& np = gp.node(k);
    ir::Node* n = nodes[k];
    for (int i = 0; i < np.input_size(); ++i) {
      const std::string& in = np.input(i);
      ir::Value* v = nullptr;
      if (!in.empty()) {
        v = g.find_value(in);
        if (!v) throw Error(f + ": " + node_label(np, k) + ": input '" + in +
                            "' is not a graph input, an initializer or a node output");
      }
      g.set_input(n, i, v);
    }
    for (const auto& a : np.attribute()) {
      if (a.name().empty()) throw Error(f + ": " + node_label(np, k) + " has an attribute without a name");
      n->attrs[a.name()] = attribute_from_proto(a, f + ": " + node_label(np, k));
      if (a.has_g() || a.graphs_size()) {
        sub_reads.clear();
        if (a.has_g()) collect_subgraph_reads(a.g(), sub_reads);
        for (const auto& sg : a.graphs()) collect_subgraph_reads(sg, sub_reads);
        std::set<std::string> sorted(sub_reads.begin(), sub_reads.end());
        for (const auto& name : sorted)
          if (ir::Value* v = g.find_value(name)) {
            v->pinned = true;
            n->implicit_inputs.push_back(v);
          }
      }
    }
  }
  for (const auto& out : gp.output()) {
    ir::Value* v = g.find_value(out.name());
    if (!v) throw Error(f + ": graph output '" + out.name() + "' is not produced by any node, input or initializer");
    if (out.has_type()) {
      ir::TypeInfo t = type_from_proto(out.type(), f + ": graph output '" + out.name() + "'");
      if (!v->constant || t.shape) v->type = t;
    }
    v->is_graph_output = true;
    g.outputs.push_back(v);
  }
  for (const auto& vi : gp.value_info()) {
    ir::Value* v = g.find_value(vi.name());
    if (!v || !vi.has_type()) continue;
    v->type = type_from_proto(vi.type(), f + ": value_info '" + vi.name() + "'");
    v->declared = true;
  }
  for (int k = 0; k < gp.node_size(); ++k) {
    check_constant_of_shape(nodes[k], f + ": " + node_label(gp.node(k), k));
    check_conv_ranks(nodes[k], f + ": " + node_label(gp.node(k), k));
  }
  try {
    g.topological_order();
  } catch (const std::runtime_error& e) {
    throw Error(f + ": " + e.what());
  }
  for (const auto& v : g.values())
    if (v->constant && v->uses.empty() && !v->is_graph_input && !v->is_graph_output) v->keep = true;
  return model;
}

// Fills unknown value types from an inferred model's value_info.
void apply_inferred(ir::Model& model, const onnx::ModelProto& inferred, const std::string& f) {
  ir::Graph& g = model.graph;
  for (const auto& vi : inferred.graph().value_info()) {
    ir::Value* v = g.find_value(vi.name());
    if (!v || v->constant || v->is_graph_input || v->declared || !vi.has_type()) continue;
    try {
      ir::TypeInfo t = type_from_proto(vi.type(), f + ": value '" + v->name + "'");
      if (t.shape || !v->type.shape) v->type = std::move(t);
    } catch (const Error&) {
      // inference produced a nonsense dim: leave the type unknown
    }
  }
}

// Ranks that only shape inference made known (x through a Relu into a Conv):
// checked again before any pass relies on them.
void recheck_ranks(const ir::Model& model, const onnx::ModelProto& proto, const std::string& f) {
  const auto& order = proto.graph().node();
  const auto& nodes = model.graph.nodes();  // still in file order right after import
  for (size_t k = 0; k < nodes.size(); ++k) {
    const std::string label = k < static_cast<size_t>(order.size())
                                  ? node_label(order.Get(static_cast<int>(k)), static_cast<int>(k))
                                  : ir::describe(nodes[k].get());
    check_conv_ranks(nodes[k].get(), f + ": " + label);
  }
}

}  // namespace

void check_ranks(const ir::Model& model, const std::string& origin) {
  for (const auto& n : model.graph.nodes()) check_conv_ranks(n.get(), origin + ": node " + ir::describe(n.get()));
}

namespace {

std::unique_ptr<ir::Model> finish(std::unique_ptr<ir::Model> model, onnx::ModelProto& inferred,
                                  const onnx::ModelProto& source, const std::string& origin) {
  run_inference(inferred);
  apply_inferred(*model, inferred, origin);
  recheck_ranks(*model, source, origin);
  return model;
}

}  // namespace

std::unique_ptr<ir::Model> import_model(const onnx::ModelProto& proto, const std::string& origin) {
  auto model = build(proto, origin);
  onnx::ModelProto inf = inference_copy(proto);
  return finish(std::move(model), inf, proto, origin);
}

std::unique_ptr<ir::Model> import_model(onnx::ModelProto&& proto, const std::string& origin) {
  auto model = build(proto, origin);
  strip_for_inference(proto);  // no copy: the caller gave the proto away (node list unchanged)
  return finish(std::move(model), proto, proto, origin);
}

}  // namespace batchconv::io

#include "model_parts.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "onnx/onnx_io.h"

namespace batchconv::compiler {
namespace {

onnx::ValueInfoProto float_info(const std::string& name, const std::vector<int64_t>& shape) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  auto* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  auto* s = t->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
  return v;
}

// The graph's nodes as the parts see them: who produces each value, its last reader.
struct Flow {
  std::map<std::string, int> producer;   // value -> node index
  std::map<std::string, int> last_use;   // value -> highest node index reading it
  std::set<std::string> inputs, outputs, initializers;
};

Flow flow_of(const onnx::GraphProto& g) {
  Flow f;
  for (const auto& v : g.input()) f.inputs.insert(v.name());
  for (const auto& v : g.output()) f.outputs.insert(v.name());
  for (const auto& t : g.initializer()) f.initializers.insert(t.name());
  for (int k = 0; k < g.node_size(); ++k) {
    for (const std::string& o : g.node(k).output())
      if (!o.empty()) f.producer[o] = k;
    for (const std::string& i : g.node(k).input())
      if (!i.empty()) f.last_use[i] = std::max(f.last_use[i], k);
  }
  return f;
}

// For each position p, the values produced before node p and read at or
// after it, in one sweep; a position where more than `most` cross gets
// nullopt (no cut there).
std::vector<std::optional<std::vector<std::string>>> crossings(const onnx::GraphProto& g, const Flow& f,
                                                                size_t most) {
  std::vector<std::optional<std::vector<std::string>>> out(static_cast<size_t>(g.node_size()) + 1);
  std::set<std::string> live;
  for (int p = 0; p <= g.node_size(); ++p) {
    if (p > 0) {
      for (const std::string& o : g.node(p - 1).output()) {
        auto u = f.last_use.find(o);
        if (!o.empty() && u != f.last_use.end() && u->second >= p) live.insert(o);
      }
      for (const std::string& i : g.node(p - 1).input())
        if (!i.empty() && f.last_use.at(i) == p - 1) live.erase(i);
    }
    if (live.size() <= most) out[static_cast<size_t>(p)] = std::vector<std::string>(live.begin(), live.end());
  }
  return out;
}

}  // namespace

ModelParts split_model(const ir::Model& model, const LoweredModel& whole, const LowerOptions& options,
                       const std::string& origin, size_t part_nodes) {
  ModelParts out;
  if (part_nodes == 0 || options.target.has_gpu_feature() || options.runtime_weights) return out;
  onnx::ModelProto proto = io::export_model(model);
  const onnx::GraphProto& g = proto.graph();
  const int n = g.node_size();
  if (static_cast<size_t>(n) <= part_nodes) return out;
  const Flow f = flow_of(g);
  // Every graph output is computed by a node, once: the header hands each to the part that computes it.
  std::set<std::string> seen_outputs;
  for (const auto& v : g.output())
    if (!f.producer.count(v.name()) || !seen_outputs.insert(v.name()).second) return out;

  // A cut before node p: at most two values cross it, each computed from
  // the inputs (no constant) and no graph output. Its cost is the bytes
  // crossing it, four times the bytes of a value that is no stored stage
  // result (the earlier part writes it with a pass of its own, and an
  // epilogue may be split there); -1 where it is no valid cut.
  const auto crossing = crossings(g, f, 2);
  auto cost = [&](int p) -> int64_t {
    if (!crossing[static_cast<size_t>(p)] || crossing[static_cast<size_t>(p)]->empty()) return -1;
    const std::vector<std::string>& c = *crossing[static_cast<size_t>(p)];
    int64_t bytes = 0;
    for (const std::string& v : c) {
      if (f.outputs.count(v) || !whole.value_shapes.count(v) || whole.constant_values.count(v)) return -1;
      bytes += numel(whole.value_shapes.at(v)) * (whole.stored_values.count(v) ? 4 : 16);
    }
    return bytes;
  };
  // Each part takes at least `want` nodes, then ends at the cheapest valid
  // cut among the next `want` (the first valid one after them if there is
  // none): a block's output, not its expanded middle.
  std::vector<int> bounds = {0};
  const int want = static_cast<int>(part_nodes);
  int best = -1;
  int64_t best_bytes = 0;
  for (int p = 1; p < n; ++p) {
    const int start = bounds.back();
    if (p - start < want) continue;
    if (n - p < want / 2) break;  // no small last part
    const int64_t bytes = cost(p);
    if (bytes >= 0 && (best < 0 || bytes < best_bytes)) best = p, best_bytes = bytes;
    if (best >= 0 && p - start >= 2 * want - 1) {
      bounds.push_back(best);
      p = best;
      best = -1;
    }
  }
  if (best >= 0) bounds.push_back(best);
  if (bounds.size() < 2) return out;
  bounds.push_back(n);

  std::map<std::string, int> cut_index;
  auto cut_of = [&](const std::string& v) {
    auto it = cut_index.find(v);
    if (it != cut_index.end()) return it->second;
    CutValue c;
    c.name = v;
    c.shape = whole.value_shapes.at(v);
    auto stored = whole.stored_values.find(v);
    c.channels_last = stored != whole.stored_values.end() && stored->second && c.shape.size() == 4;
    out.cuts.push_back(c);
    return cut_index[v] = static_cast<int>(out.cuts.size()) - 1;
  };
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  std::map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& v : g.value_info()) infos[v.name()] = &v;
  for (const auto& v : g.input()) infos[v.name()] = &v;
  for (const auto& v : g.output()) infos[v.name()] = &v;

  for (size_t j = 0; j + 1 < bounds.size(); ++j) {
    const int a = bounds[j], b = bounds[j + 1];
    onnx::ModelProto pp;
    pp.set_ir_version(proto.ir_version());
    *pp.mutable_opset_import() = proto.opset_import();
    onnx::GraphProto* pg = pp.mutable_graph();
    pg->set_name(g.name() + "_part" + std::to_string(j));
    std::set<std::string> here, model_ins, cut_ins, needed;
    std::vector<std::string> cut_in_order;
    for (int k = a; k < b; ++k) {
      for (const std::string& i : g.node(k).input()) {
        if (i.empty() || here.count(i)) continue;
        if (f.initializers.count(i) && !f.inputs.count(i)) needed.insert(i);
        else if (f.inputs.count(i)) model_ins.insert(i);
        else if (cut_ins.insert(i).second) cut_in_order.push_back(i);
      }
      for (const std::string& o : g.node(k).output())
        if (!o.empty()) here.insert(o);
      *pg->add_node() = g.node(k);
    }
    ModelPart part;
    part.first = static_cast<size_t>(a);
    part.last = static_cast<size_t>(b);
    part.options = options;
    part.options.channels_last_edges.clear();
    part.options.stored_input_edges.clear();
    // Inputs: the model's own (in its order), then the cuts.
    for (const auto& v : g.input()) {
      if (!model_ins.count(v.name())) continue;
      *pg->add_input() = v;
      if (options.channels_last_edges.count(v.name())) part.options.channels_last_edges.insert(v.name());
    }
    for (const std::string& v : cut_in_order) {
      const CutValue& c = out.cuts[static_cast<size_t>(cut_of(v))];
      *pg->add_input() = float_info(v, c.shape);
      if (c.channels_last) {
        part.options.channels_last_edges.insert(v);
        part.options.stored_input_edges.insert(v);
      }
    }
    for (const std::string& i : needed) *pg->add_initializer() = *inits.at(i);
    // Outputs: the model's own computed here (in its order), then the values later parts read.
    for (const auto& v : g.output()) {
      if (!here.count(v.name())) continue;
      *pg->add_output() = v;
      if (options.channels_last_edges.count(v.name())) part.options.channels_last_edges.insert(v.name());
    }
    for (int k = a; k < b; ++k) {
      for (const std::string& o : g.node(k).output()) {
        auto u = f.last_use.find(o);
        if (o.empty() || f.outputs.count(o) || u == f.last_use.end() || u->second < b) continue;
        const CutValue& c = out.cuts[static_cast<size_t>(cut_of(o))];
        *pg->add_output() = float_info(o, c.shape);
        if (c.channels_last) part.options.channels_last_edges.insert(o);
      }
    }
    for (const std::string& v : here)
      if (auto it = infos.find(v); it != infos.end() && !f.outputs.count(v)) *pg->add_value_info() = *it->second;
    part.model = io::import_model(std::move(pp), origin + " (part " + std::to_string(j) + ")");
    out.parts.push_back(std::move(part));
  }
  return out;
}

LoweredModel lower_parts(ModelParts& parts, const LoweredModel& whole, const std::string& origin) {
  LoweredModel iface = whole;
  iface.conv_schedules.clear();
  iface.layout_explanations.clear();
  iface.epilogues.clear();
  iface.linear_weights.clear();
  auto index_of = [](const auto& list, const std::string& name) {
    for (size_t k = 0; k < list.size(); ++k)
      if (list[k].onnx_name == name) return static_cast<int>(k);
    return -1;
  };
  auto cut_of = [&](const std::string& name) {
    for (size_t k = 0; k < parts.cuts.size(); ++k)
      if (parts.cuts[k].name == name) return static_cast<int>(k);
    throw Error(origin + ": model part value '" + name + "' is neither a model argument nor a cut (internal error)");
  };
  for (ModelPart& p : parts.parts) {
    p.lowered = lower_model(*p.model, origin, p.options);
    const LoweredModel& l = p.lowered;
    if (!l.weights.empty()) throw Error(origin + ": a model part takes weights (internal error)");
    p.args.clear();
    for (const ParamInfo& in : l.inputs) {
      PartArg a;
      a.model_input = index_of(whole.inputs, in.onnx_name);
      if (a.model_input < 0) a.cut = cut_of(in.onnx_name);
      a.internal = reversed(in.shape);
      if (in.batched) a.batch_dim = static_cast<int>(a.internal.size()) - 1;
      p.args.push_back(a);
    }
    for (const OutputInfo& o : l.outputs) {
      PartArg a;
      a.model_output = index_of(whole.outputs, o.onnx_name);
      if (a.model_output < 0) a.cut = cut_of(o.onnx_name);
      else {
        OutputInfo& whole_output = iface.outputs[static_cast<size_t>(a.model_output)];
        whole_output.internal_extents = o.internal_extents;
        whole_output.internal_strides = o.internal_strides;
        whole_output.batch_dim = o.batch_dim;
      }
      a.internal = o.internal_extents;
      a.strides = o.internal_strides;
      a.batch_dim = o.batch_dim;
      p.args.push_back(a);
    }
    iface.conv_schedules.insert(iface.conv_schedules.end(), l.conv_schedules.begin(), l.conv_schedules.end());
    iface.layout_explanations.insert(iface.layout_explanations.end(), l.layout_explanations.begin(),
                                     l.layout_explanations.end());
    iface.epilogues.insert(iface.epilogues.end(), l.epilogues.begin(), l.epilogues.end());
    iface.linear_weights.insert(iface.linear_weights.end(), l.linear_weights.begin(), l.linear_weights.end());
  }
  return iface;
}

std::string parts_function(const ModelParts& parts, const LoweredModel& iface, const std::string& name) {
  std::ostringstream h;
  const size_t ncut = parts.cuts.size();
  std::vector<std::string> params;
  for (const ParamInfo& p : iface.inputs) params.push_back(p.c_name);
  for (const ParamInfo& p : iface.weights) params.push_back(p.c_name);
  for (const OutputInfo& o : iface.outputs) params.push_back(o.c_name);
  h << "// The model as " << parts.parts.size() << " pipelines run in order (" << name << "_impl_p0...): the "
    << ncut << " values between them\n// live in buffers allocated here through the Halide runtime's allocator.\n"
    << "static inline int " << name << "__parts(" << (iface.dynamic_batch ? "int64_t batch" : "");
  for (size_t k = 0; k < params.size(); ++k)
    h << (k || iface.dynamic_batch ? ", " : "") << "struct halide_buffer_t *" << params[k];
  // With a run-time batch every cut holds `batch` images (its bytes are one image's).
  h << ") {\n  static const size_t bytes[" << std::max<size_t>(ncut, 1) << "] = {";
  for (size_t k = 0; k < ncut; ++k) h << (k ? ", " : "") << numel(parts.cuts[k].shape) * 4;
  if (ncut == 0) h << "0";
  h << "};\n  void *cut[" << std::max<size_t>(ncut, 1) << "] = {NULL};\n  int k, err = 0;\n"
    << "  for (k = 0; k < " << ncut << "; ++k) {\n"
    << "    if ((cut[k] = halide_malloc(NULL, bytes[k]" << (iface.dynamic_batch ? " * (size_t)batch" : "")
    << ")) == NULL) {\n"
    << "      err = halide_error_code_out_of_memory;\n      goto done;\n    }\n  }\n";
  for (size_t j = 0; j < parts.parts.size(); ++j) {
    const ModelPart& p = parts.parts[j];
    h << "  {\n";
    std::vector<std::string> call;
    for (size_t a = 0; a < p.args.size(); ++a) {
      const PartArg& arg = p.args[a];
      if (arg.cut < 0) {
        call.push_back(arg.model_input >= 0 ? params[static_cast<size_t>(arg.model_input)]
                                            : params[iface.inputs.size() + iface.weights.size() +
                                                     static_cast<size_t>(arg.model_output)]);
        continue;
      }
      const std::string b = "b" + std::to_string(a);
      h << "    halide_dimension_t d" << a << "[" << std::max<size_t>(arg.internal.size(), 1) << "] = {";
      // Dense strides, as C expressions: those outside a run-time batch dim take the batch.
      int64_t stride = 1;
      bool past_batch = false;
      for (size_t d = 0; d < arg.internal.size(); ++d) {
        const bool is_batch = static_cast<int>(d) == arg.batch_dim;
        const std::string st = !arg.strides.empty() ? std::to_string(arg.strides[d])
                               : past_batch ? std::to_string(stride) + " * (int32_t)batch" : std::to_string(stride);
        h << (d ? ", " : "") << "{0, " << (is_batch ? std::string("(int32_t)batch") : std::to_string(arg.internal[d]))
          << ", " << st << ", 0}";
        if (!is_batch) stride *= arg.internal[d];
        past_batch = past_batch || is_batch;
      }
      h << "};\n    struct halide_buffer_t " << b << ";\n    memset((void *)&" << b << ", 0, sizeof " << b << ");\n"
        << "    " << b << ".host = (uint8_t *)cut[" << arg.cut << "];\n"
        << "    " << b << ".type.code = halide_type_float;\n    " << b << ".type.bits = 32;\n    " << b
        << ".type.lanes = 1;\n    " << b << ".dimensions = " << arg.internal.size() << ";\n    " << b << ".dim = d"
        << a << ";\n";
      call.push_back("&" + b);
    }
    h << "    err = " << name << "_impl_p" << j << "(";
    for (size_t k = 0; k < call.size(); ++k) h << (k ? ", " : "") << call[k];
    h << ");\n  }\n  if (err != 0) goto done;\n";
  }
  h << "done:\n  for (k = 0; k < " << ncut << "; ++k)\n    if (cut[k] != NULL) halide_free(NULL, cut[k]);\n"
    << "  return err;\n}\n\n";
  return h.str();
}

}  // namespace batchconv::compiler

// Graph IR -> ONNX ModelProto: inputs/outputs in order, used initializers,
// nodes in topological order, declared value_info, opsets and metadata.
#include <onnx/onnx_pb.h>

#include "onnx/convert.h"
#include "onnx/onnx_io.h"

namespace batchconv::io {

namespace {

void value_info(const ir::Value* v, onnx::ValueInfoProto* out) {
  out->set_name(v->name);
  type_to_proto(v->type, out->mutable_type());
}

bool initializer_needed(const ir::Value* v) {
  return v->constant && !v->producer && (!v->uses.empty() || v->is_graph_input || v->is_graph_output || v->pinned || v->keep);
}

}  // namespace

onnx::ModelProto export_model(const ir::Model& m) {
  onnx::ModelProto p;
  export_into(m, &p);
  return p;
}

void export_into(const ir::Model& m, onnx::ModelProto* out) {
  const ir::Graph& g = m.graph;
  onnx::ModelProto& p = *out;
  p.set_ir_version(m.ir_version);
  bool has_batchconv_import = false;
  for (const auto& [domain, version] : m.opset_imports) {
    auto* o = p.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    has_batchconv_import |= domain == "batchconv";
  }
  if (!m.producer_name.empty()) p.set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) p.set_producer_version(m.producer_version);
  if (!m.domain.empty()) p.set_domain(m.domain);
  if (!m.doc_string.empty()) p.set_doc_string(m.doc_string);
  if (m.model_version) p.set_model_version(m.model_version);
  for (const auto& [k, v] : m.metadata_props) {
    auto* e = p.add_metadata_props();
    e->set_key(k);
    e->set_value(v);
  }

  onnx::GraphProto* gp = p.mutable_graph();
  gp->set_name(g.name);
  if (!g.doc_string.empty()) gp->set_doc_string(g.doc_string);
  for (const ir::Value* v : g.inputs) value_info(v, gp->add_input());
  for (const auto& v : g.values())
    if (initializer_needed(v.get())) *gp->add_initializer() = tensor_to_proto(*v->constant, v->name);

  std::vector<ir::Node*> order = g.topological_order();
  gp->mutable_node()->Reserve(static_cast<int>(order.size()));
  for (const ir::Node* n : order) {
    auto* np = gp->add_node();
    if (!n->name.empty()) np->set_name(n->name);
    np->set_op_type(n->op_type);
    if (!n->domain.empty()) np->set_domain(n->domain);
    if (!n->doc_string.empty()) np->set_doc_string(n->doc_string);
    size_t used = n->inputs.size();
    while (used > 0 && !n->inputs[used - 1]) --used;  // omitted trailing optionals
    for (size_t k = 0; k < used; ++k) np->add_input(n->inputs[k] ? n->inputs[k]->name : "");
    for (const ir::Value* o : n->outputs) np->add_output(o ? o->name : "");
    for (const auto& [name, a] : n->attrs) attribute_to_proto(name, a, np->add_attribute());
    if (n->domain == "batchconv" && !has_batchconv_import) {
      auto* o = p.add_opset_import();
      o->set_domain("batchconv");
      o->set_version(1);
      has_batchconv_import = true;
    }
  }
  for (const ir::Value* v : g.outputs) value_info(v, gp->add_output());
  for (const auto& v : g.values()) {
    const ir::Value* x = v.get();
    if (x->declared && x->producer && !x->is_graph_output && !x->is_graph_input) value_info(x, gp->add_value_info());
  }
}

}  // namespace batchconv::io

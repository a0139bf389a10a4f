#include "conv_geometry.h"

#include <sstream>

#include "ir/conv_window.h"
#include "match/graph_search.h"

namespace batchconv::rewrites {

using ir::Node;
using ir::Value;

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ")";
  return o.str();
}

std::optional<ConvGeometry> read_conv(Node* n, std::string* reason) {
  auto fail = [&](std::string why) -> std::optional<ConvGeometry> {
    if (reason) *reason = std::move(why);
    return std::nullopt;
  };
  if (n->op_type != "Conv" || !n->domain.empty()) return fail("not an ONNX Conv");
  if (n->inputs.size() < 2 || !n->inputs[0] || !n->inputs[1]) return fail("Conv without input or weight");
  ConvGeometry c;
  c.node = n;
  c.x = n->inputs[0];
  c.w = n->inputs[1];
  c.b = n->inputs.size() > 2 ? n->inputs[2] : nullptr;
  auto ws = match::static_shape(c.w);
  if (!ws) return fail("weight '" + c.w->name + "' has no static shape");
  if (ws->size() < 3) return fail("weight '" + c.w->name + "' has rank " + std::to_string(ws->size()) + " < 3");
  c.wshape = *ws;
  c.spatial = static_cast<int64_t>(ws->size()) - 2;
  c.group = n->attr_int("group", 1);
  if (c.group < 1 || c.wshape[0] % c.group != 0)
    return fail("group=" + std::to_string(c.group) + " does not divide " + std::to_string(c.wshape[0]) +
                " output channels");
  if (auto ks = n->attr_ints("kernel_shape"); !ks.empty()) {
    if (ks != std::vector<int64_t>(c.wshape.begin() + 2, c.wshape.end()))
      return fail("kernel_shape " + shape_str(ks) + " differs from weight shape " + shape_str(c.wshape));
  }
  if (c.b) {
    auto bs = match::static_shape(c.b);
    if (bs && (bs->size() != 1 || (*bs)[0] != c.wshape[0]))
      return fail("bias '" + c.b->name + "' has shape " + shape_str(*bs) + ", expected (" +
                  std::to_string(c.wshape[0]) + ")");
  }
  try {
    ir::WindowAttrs a = ir::window_attrs(*n, c.spatial);
    c.strides = a.strides;
    c.dilations = a.dilations;
    c.pads = a.pads;
    c.auto_pad = a.auto_pad;
  } catch (const ir::WindowError& e) {
    return fail(e.what());
  }
  return c;
}

std::string geometry_mismatch(const ConvGeometry& a, const ConvGeometry& b) {
  auto w = [](const ConvGeometry& c) { return "'" + c.w->name + "' " + shape_str(c.wshape); };
  if (a.spatial != b.spatial) return "spatial rank differs";
  for (size_t i = 1; i < a.wshape.size(); ++i)
    if (a.wshape[i] != b.wshape[i]) return "weight " + w(b) + " vs " + w(a) + ": kernel or Cin/group differs";
  if (a.group != b.group) return "group " + std::to_string(b.group) + " != " + std::to_string(a.group);
  if (a.strides != b.strides) return "strides differ";
  if (a.dilations != b.dilations) return "dilations differ";
  if (a.auto_pad != b.auto_pad) return "auto_pad differs";
  if (a.auto_pad == "NOTSET" && a.pads != b.pads) return "pads differ";
  if ((a.b == nullptr) != (b.b == nullptr)) return "one has a bias, the other not";
  return "";
}

std::optional<std::vector<int64_t>> conv_output_spatial(const ConvGeometry& c,
                                                        const std::vector<int64_t>& in) {
  if (static_cast<int64_t>(in.size()) != c.spatial || !c.node) return std::nullopt;
  try {
    return ir::conv_window(ir::window_attrs(*c.node, c.spatial), in,
                           std::vector<int64_t>(c.wshape.begin() + 2, c.wshape.end()))
        .out;
  } catch (const ir::WindowError&) {
    return std::nullopt;
  }
}

std::optional<std::vector<float>> float_data(const Value* v) {
  auto t = match::constant_of(v);
  if (!t || t->dtype != ir::DType::Float || static_cast<int64_t>(t->f.size()) != t->numel())
    return std::nullopt;
  return t->f;
}

ir::Tensor int64_tensor(const std::vector<int64_t>& values) {
  ir::Tensor t;
  t.dtype = ir::DType::Int64;
  t.shape = {static_cast<int64_t>(values.size())};
  t.i = values;
  return t;
}

ir::Tensor float_tensor(std::vector<int64_t> shape, std::vector<float> data) {
  ir::Tensor t;
  t.dtype = ir::DType::Float;
  t.shape = std::move(shape);
  t.f = std::move(data);
  return t;
}

void set_float_shape(Value* v, const std::optional<std::vector<int64_t>>& shape) {
  v->type.dtype = ir::DType::Float;
  if (!shape) {
    v->type.shape.reset();
    return;
  }
  std::vector<ir::Dim> dims;
  for (int64_t d : *shape) dims.push_back(ir::Dim{d, ""});
  v->type.shape = dims;
}

void copy_attrs(const Node* from, Node* to) { to->attrs = from->attrs; }

void set_int_attr(Node* n, const std::string& key, int64_t value) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Int;
  a.i = value;
  n->attrs[key] = a;
}

void set_ints_attr(Node* n, const std::string& key, const std::vector<int64_t>& values) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::Ints;
  a.ints = values;
  n->attrs[key] = a;
}

}  // namespace batchconv::rewrites

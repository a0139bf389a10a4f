// Conversions between ONNX protos and IR tensors, types and attributes.
#include "onnx/convert.h"

#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "onnx/onnx_io.h"

namespace batchconv::io {

using ir::DType;

DType dtype_from_onnx(int32_t e) {
  switch (e) {
    case onnx::TensorProto::FLOAT: return DType::Float;
    case onnx::TensorProto::DOUBLE: return DType::Double;
    case onnx::TensorProto::INT64: return DType::Int64;
    case onnx::TensorProto::INT32: return DType::Int32;
    case onnx::TensorProto::INT8: return DType::Int8;
    case onnx::TensorProto::UINT8: return DType::UInt8;
    case onnx::TensorProto::BOOL: return DType::Bool;
    case onnx::TensorProto::FLOAT16: return DType::Float16;
    default: return DType::Other;
  }
}

int32_t dtype_to_onnx(DType t, int32_t fallback) {
  switch (t) {
    case DType::Float: return onnx::TensorProto::FLOAT;
    case DType::Double: return onnx::TensorProto::DOUBLE;
    case DType::Int64: return onnx::TensorProto::INT64;
    case DType::Int32: return onnx::TensorProto::INT32;
    case DType::Int8: return onnx::TensorProto::INT8;
    case DType::UInt8: return onnx::TensorProto::UINT8;
    case DType::Bool: return onnx::TensorProto::BOOL;
    case DType::Float16: return onnx::TensorProto::FLOAT16;
    default: return fallback;
  }
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 6.103515625e-05f) return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));  // subnormal
  int e;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  uint32_t mant = static_cast<uint32_t>(std::nearbyint((m * 2 - 1) * 1024));
  int exp = e - 1 + 15;
  if (mant == 1024) { mant = 0; ++exp; }
  return sign | static_cast<uint16_t>(exp << 10) | static_cast<uint16_t>(mant);
}

template <typename T>
static std::vector<T> raw_as(const std::string& raw, int64_t n, const std::string& what) {
  if (static_cast<int64_t>(raw.size()) != n * static_cast<int64_t>(sizeof(T)))
    throw Error(what + ": raw_data has " + std::to_string(raw.size()) + " bytes, shape needs " +
                std::to_string(n * sizeof(T)));
  std::vector<T> v(n);
  if (n) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

static void check_count(int64_t have, int64_t n, const std::string& what) {
  if (have != n)
    throw Error(what + ": has " + std::to_string(have) + " values, its shape needs " + std::to_string(n));
}

ir::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what) {
  ir::Tensor out;
  out.dtype = dtype_from_onnx(t.data_type());
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim) throw Error(what + ": dimension " + std::to_string(d) + " is negative or huge");
    out.shape.push_back(d);
    if (d && n > kMaxElements / d) throw Error(what + ": shape has more than 2^40 elements");
    n *= d;
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(what + ": external tensor data is not supported (save the model with data inline)");
  if (t.data_type() == onnx::TensorProto::UNDEFINED) throw Error(what + ": tensor has no data_type");
  const bool raw = t.has_raw_data();
  const std::string& r = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (raw) out.f = raw_as<float>(r, n, what);
      else { check_count(t.float_data_size(), n, what); out.f.assign(t.float_data().begin(), t.float_data().end()); }
      break;
    case onnx::TensorProto::DOUBLE: {
      std::vector<double> d;
      if (raw) d = raw_as<double>(r, n, what);
      else { check_count(t.double_data_size(), n, what); d.assign(t.double_data().begin(), t.double_data().end()); }
      out.f.assign(d.begin(), d.end());
      break;
    }
    case onnx::TensorProto::FLOAT16: {
      std::vector<uint16_t> h;
      if (raw) h = raw_as<uint16_t>(r, n, what);
      else { check_count(t.int32_data_size(), n, what); for (int32_t x : t.int32_data()) h.push_back(static_cast<uint16_t>(x)); }
      for (uint16_t x : h) out.f.push_back(half_to_float(x));
      break;
    }
    case onnx::TensorProto::INT64:
      if (raw) out.i = raw_as<int64_t>(r, n, what);
      else { check_count(t.int64_data_size(), n, what); out.i.assign(t.int64_data().begin(), t.int64_data().end()); }
      break;
    case onnx::TensorProto::UINT64:
      if (raw) { auto u = raw_as<uint64_t>(r, n, what); out.i.assign(u.begin(), u.end()); }
      else { check_count(t.uint64_data_size(), n, what); out.i.assign(t.uint64_data().begin(), t.uint64_data().end()); }
      break;
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT16: case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8: case onnx::TensorProto::UINT16: case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT32: {
      if (!raw && t.data_type() == onnx::TensorProto::UINT32) {
        check_count(t.uint64_data_size(), n, what);
        out.i.assign(t.uint64_data().begin(), t.uint64_data().end());
        break;
      }
      if (!raw) {
        check_count(t.int32_data_size(), n, what);
        out.i.assign(t.int32_data().begin(), t.int32_data().end());
        break;
      }
      switch (t.data_type()) {
        case onnx::TensorProto::INT32: { auto v = raw_as<int32_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
        case onnx::TensorProto::UINT32: { auto v = raw_as<uint32_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
        case onnx::TensorProto::INT16: { auto v = raw_as<int16_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
        case onnx::TensorProto::UINT16: { auto v = raw_as<uint16_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
        case onnx::TensorProto::INT8: { auto v = raw_as<int8_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
        default: { auto v = raw_as<uint8_t>(r, n, what); out.i.assign(v.begin(), v.end()); break; }
      }
      break;
    }
    default:
      break;  // strings, complex, bfloat16: data kept only in onnx_proto
  }
  if (out.dtype == DType::Double || out.dtype == DType::Float16 || out.dtype == DType::Other) {
    onnx::TensorProto copy = t;
    copy.clear_name();
    out.onnx_proto = copy.SerializeAsString();
  }
  return out;
}

template <typename T>
static void put_raw(onnx::TensorProto& p, const std::vector<T>& v) {
  p.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

onnx::TensorProto tensor_to_proto(const ir::Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  if (!t.onnx_proto.empty() && p.ParseFromString(t.onnx_proto)) {
    p.set_name(name);
    return p;
  }
  p = onnx::TensorProto();
  p.set_name(name);
  for (int64_t d : t.shape) p.add_dims(d);
  p.set_data_type(dtype_to_onnx(t.dtype, onnx::TensorProto::UNDEFINED));
  switch (t.dtype) {
    case DType::Float: put_raw(p, t.f); break;
    case DType::Double: put_raw(p, std::vector<double>(t.f.begin(), t.f.end())); break;
    case DType::Float16: {
      std::vector<uint16_t> h;
      for (float x : t.f) h.push_back(float_to_half(x));
      put_raw(p, h);
      break;
    }
    case DType::Int64: put_raw(p, t.i); break;
    case DType::Int32: put_raw(p, std::vector<int32_t>(t.i.begin(), t.i.end())); break;
    case DType::Int8: put_raw(p, std::vector<int8_t>(t.i.begin(), t.i.end())); break;
    case DType::UInt8: case DType::Bool: put_raw(p, std::vector<uint8_t>(t.i.begin(), t.i.end())); break;
    default: throw Error("tensor '" + name + "': cannot write a tensor of dtype 'other' without its original data");
  }
  return p;
}

ir::TypeInfo type_from_proto(const onnx::TypeProto& t, const std::string& what) {
  ir::TypeInfo out;
  if (!t.has_tensor_type()) {
    out.dtype = DType::Other;
    out.onnx_type = t.SerializeAsString();
    return out;
  }
  const auto& tt = t.tensor_type();
  out.dtype = dtype_from_onnx(tt.elem_type());
  out.onnx_elem_type = tt.elem_type();
  if (!tt.has_shape()) return out;
  std::vector<ir::Dim> dims;
  for (const auto& d : tt.shape().dim()) {
    ir::Dim dim;
    if (d.has_dim_value()) {
      if (d.dim_value() < 0 || d.dim_value() > kMaxDim)
        throw Error(what + ": dimension " + std::to_string(d.dim_value()) + " is negative or huge");
      dim.value = d.dim_value();
    } else {
      dim.param = d.dim_param();
    }
    dims.push_back(dim);
  }
  out.shape = std::move(dims);
  return out;
}

void type_to_proto(const ir::TypeInfo& t, onnx::TypeProto* out) {
  if (!t.onnx_type.empty() && out->ParseFromString(t.onnx_type)) return;
  auto* tt = out->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(t.dtype, t.onnx_elem_type));
  if (!t.shape) return;
  auto* s = tt->mutable_shape();
  for (const ir::Dim& d : *t.shape) {
    auto* pd = s->add_dim();
    if (d.known()) pd->set_dim_value(d.value);
    else if (!d.param.empty()) pd->set_dim_param(d.param);
  }
}

ir::Attribute attribute_from_proto(const onnx::AttributeProto& a, const std::string& what) {
  using K = ir::Attribute::Kind;
  ir::Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::INT: out.kind = K::Int; out.i = a.i(); return out;
    case onnx::AttributeProto::FLOAT: out.kind = K::Float; out.f = a.f(); return out;
    case onnx::AttributeProto::STRING: out.kind = K::String; out.s = a.s(); return out;
    case onnx::AttributeProto::INTS: out.kind = K::Ints; out.ints.assign(a.ints().begin(), a.ints().end()); return out;
    case onnx::AttributeProto::FLOATS: out.kind = K::Floats; out.floats.assign(a.floats().begin(), a.floats().end()); return out;
    case onnx::AttributeProto::STRINGS: out.kind = K::Strings; out.strings.assign(a.strings().begin(), a.strings().end()); return out;
    case onnx::AttributeProto::TENSOR:
      out.kind = K::Tensor;
      out.t = std::make_shared<ir::Tensor>(tensor_from_proto(a.t(), what + " attribute '" + a.name() + "'"));
      if (a.ref_attr_name().empty() && a.doc_string().empty()) return out;
      break;
    case onnx::AttributeProto::GRAPH: case onnx::AttributeProto::GRAPHS: out.kind = K::Graph; break;
    default: out.kind = K::Other; break;
  }
  out.raw = a.SerializeAsString();
  return out;
}

void attribute_to_proto(const std::string& name, const ir::Attribute& a, onnx::AttributeProto* out) {
  using K = ir::Attribute::Kind;
  if (!a.raw.empty() && (a.kind == K::Graph || a.kind == K::Other || a.kind == K::Tensor)) {
    if (!out->ParseFromString(a.raw)) throw Error("attribute '" + name + "': stored attribute does not parse");
    out->set_name(name);
    return;
  }
  out->set_name(name);
  switch (a.kind) {
    case K::Int: out->set_type(onnx::AttributeProto::INT); out->set_i(a.i); break;
    case K::Float: out->set_type(onnx::AttributeProto::FLOAT); out->set_f(a.f); break;
    case K::String: out->set_type(onnx::AttributeProto::STRING); out->set_s(a.s); break;
    case K::Ints: out->set_type(onnx::AttributeProto::INTS); for (int64_t v : a.ints) out->add_ints(v); break;
    case K::Floats: out->set_type(onnx::AttributeProto::FLOATS); for (float v : a.floats) out->add_floats(v); break;
    case K::Strings: out->set_type(onnx::AttributeProto::STRINGS); for (const auto& v : a.strings) out->add_strings(v); break;
    case K::Tensor:
      if (!a.t) throw Error("attribute '" + name + "': tensor attribute without a tensor");
      out->set_type(onnx::AttributeProto::TENSOR);
      *out->mutable_t() = tensor_to_proto(*a.t, "");
      out->mutable_t()->clear_name();
      break;
    default: throw Error("attribute '" + name + "': unmodelled attribute without its original bytes");
  }
}

namespace {

bool weight_like(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::FLOAT && t.data_type() != onnx::TensorProto::DOUBLE &&
      t.data_type() != onnx::TensorProto::FLOAT16)
    return false;
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n > 64;
}

void add_typed_input(onnx::GraphProto* g, const onnx::TensorProto& t) {
  auto* in = g->add_input();
  in->set_name(t.name());
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(t.data_type());
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
}

}  // namespace

onnx::ModelProto inference_copy(const onnx::ModelProto& proto) {
  onnx::ModelProto copy;
  copy.set_ir_version(proto.ir_version());
  *copy.mutable_opset_import() = proto.opset_import();
  const onnx::GraphProto& g = proto.graph();
  onnx::GraphProto* c = copy.mutable_graph();
  c->set_name(g.name());
  *c->mutable_node() = g.node();
  *c->mutable_output() = g.output();
  std::unordered_set<std::string> inputs;
  for (const auto& in : g.input()) inputs.insert(in.name());
  *c->mutable_input() = g.input();
  for (const auto& t : g.initializer()) {
    if (!weight_like(t)) *c->add_initializer() = t;
    else if (!inputs.count(t.name())) add_typed_input(c, t);
  }
  return copy;
}

void strip_for_inference(onnx::ModelProto& proto) {
  onnx::GraphProto* g = proto.mutable_graph();
  g->clear_value_info();
  std::unordered_set<std::string> inputs;
  for (const auto& in : g->input()) inputs.insert(in.name());
  google::protobuf::RepeatedPtrField<onnx::TensorProto> all;
  all.Swap(g->mutable_initializer());
  for (auto& t : all) {
    if (!weight_like(t)) g->add_initializer()->Swap(&t);
    else if (!inputs.count(t.name())) add_typed_input(g, t);
  }
}

namespace {

// Shape inference runs without data propagation (see run_inference), so the
// shape PyTorch's repeat export feeds to Expand (ConstantOfShape of a
// Constant) stays unknown, and with it every shape after it until
// fold_constants has run and inference runs again (on a 100k-node model,
// half of the import + rewrite time). In the copy that inference runs on
// (never in the IR), such a ConstantOfShape becomes the Constant it computes.
void precompute_constant_of_shape(onnx::ModelProto& proto) {
  constexpr int64_t kMaxElems = int64_t(1) << 16;
  std::unordered_map<std::string, std::vector<int64_t>> ints;  // small int64 constants by name
  auto remember = [&](const std::string& name, const onnx::TensorProto& t) {
    if (t.data_type() != onnx::TensorProto::INT64 || t.dims_size() > 1) return;
    try {
      ir::Tensor v = tensor_from_proto(t, name);
      if (v.i.size() <= 64) ints[name] = v.i;
    } catch (const std::exception&) {
    }
  };
  onnx::GraphProto* g = proto.mutable_graph();
  for (const auto& t : g->initializer()) remember(t.name(), t);
  for (onnx::NodeProto& n : *g->mutable_node()) {
    const bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (std_domain && n.op_type() == "Constant" && n.output_size() == 1) {
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) remember(n.output(0), a.t());
      continue;
    }
    if (!std_domain || n.op_type() != "ConstantOfShape" || n.input_size() != 1 || n.output_size() != 1) continue;
    auto it = ints.find(n.input(0));
    if (it == ints.end()) continue;
    int64_t count = 1;
    bool ok = true;
    for (int64_t d : it->second) {
      ok &= d >= 0 && d <= kMaxElems;
      if (ok) count *= d;
      ok &= count <= kMaxElems;
    }
    onnx::TensorProto value;
    value.set_data_type(onnx::TensorProto::FLOAT);
    value.add_float_data(0.0f);
    for (const auto& a : n.attribute())
      if (a.name() == "value" && a.has_t()) value = a.t();
    ir::Tensor one;
    try {
      one = tensor_from_proto(value, "ConstantOfShape value");
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || one.numel() != 1 || (one.is_float() ? one.f.size() : one.i.size()) != 1) continue;
    ir::Tensor filled;
    filled.dtype = one.dtype;
    filled.shape = it->second;
    if (one.is_float()) filled.f.assign(static_cast<size_t>(count), one.f[0]);
    else filled.i.assign(static_cast<size_t>(count), one.i[0]);
    onnx::TensorProto t;
    try {
      t = tensor_to_proto(filled, n.output(0));
    } catch (const std::exception&) {
      continue;
    }
    if (t.data_type() != value.data_type()) continue;
    n.set_op_type("Constant");
    n.clear_input();
    n.clear_attribute();
    onnx::AttributeProto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = t;
    remember(n.output(0), t);
  }
}

}  // namespace

void run_inference(onnx::ModelProto& proto) {
  install_inference_guards();
  precompute_constant_of_shape(proto);
  try {
    onnx::ShapeInferenceOptions opts{/*check_type=*/false, /*error_mode=*/0, /*enable_data_propagation=*/false};
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception&) {
    proto.mutable_graph()->clear_value_info();
  }
}

}  // namespace batchconv::io

// ONNX text syntax: our own printer (ONNX 1.12's printer drops initializers,
// domains and the model header) and ONNX's parser.
#include <onnx/defs/parser.h>
#include <onnx/defs/printer.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "onnx/convert.h"
#include "onnx/onnx_io.h"

namespace batchconv::io {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Maps value names to identifiers the parser accepts, keeping valid names as they are.
class Names {
 public:
  explicit Names(const onnx::GraphProto& g) {
    auto note = [&](const std::string& s) { if (is_identifier(s)) taken_.insert(s); };
    for (const auto& v : g.input()) note(v.name());
    for (const auto& v : g.initializer()) note(v.name());
    for (const auto& n : g.node()) for (const auto& o : n.output()) note(o);
  }
  const std::string& operator()(const std::string& s) {
    auto it = map_.find(s);
    if (it != map_.end()) return it->second;
    std::string id = s;
    if (!is_identifier(s)) {
      for (char& c : id)
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
      if (id.empty() || isdigit(static_cast<unsigned char>(id[0]))) id = "_" + id;
      std::string base = id;
      for (int k = 1; taken_.count(id); ++k) id = base + "_" + std::to_string(k);
      taken_.insert(id);
    }
    return map_[s] = id;
  }

 private:
  std::unordered_set<std::string> taken_;
  std::unordered_map<std::string, std::string> map_;
};

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += (c == '"' ? '\'' : c == '\n' ? ' ' : c);  // the 1.12 parser has no escapes
  return out + "\"";
}

std::string fmt_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

const char* elem_name(int32_t t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "float";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "double";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    default: return "float";
  }
}

void print_type(std::ostream& os, const onnx::TypeProto& t) {
  if (!t.has_tensor_type()) { os << t; return; }
  os << elem_name(t.tensor_type().elem_type());
  if (!t.tensor_type().has_shape()) return;
  os << "[";
  const auto& dims = t.tensor_type().shape().dim();
  for (int k = 0; k < dims.size(); ++k) {
    if (k) os << ",";
    if (dims[k].has_dim_value()) os << dims[k].dim_value();
    else if (!dims[k].dim_param().empty() && is_identifier(dims[k].dim_param())) os << dims[k].dim_param();
    else os << "?";
  }
  os << "]";
}

void print_tensor_value(std::ostream& os, const onnx::TensorProto& tp) {
  os << elem_name(tp.data_type());
  if (tp.dims_size() == 0) return;  // a scalar: "int64 c = {3}" (the 1.12 parser rejects "int64[]")
  os << "[";
  for (int k = 0; k < tp.dims_size(); ++k) os << (k ? "," : "") << tp.dims(k);
  os << "]";
}

void print_tensor_data(std::ostream& os, const onnx::TensorProto& tp, int64_t max_elements = -1) {
  if (max_elements >= 0) {
    int64_t n = 1;
    for (int64_t d : tp.dims()) n *= d;
    if (n > max_elements) {
      os << " {...}";
      return;
    }
  }
  ir::Tensor t = tensor_from_proto(tp, "tensor '" + tp.name() + "'");
  os << " {";
  if (t.is_float()) {
    for (size_t k = 0; k < t.f.size(); ++k) os << (k ? ", " : "") << fmt_float(t.f[k]);
  } else {
    for (size_t k = 0; k < t.i.size(); ++k) os << (k ? ", " : "") << t.i[k];
  }
  os << "}";
}

void print_attribute(std::ostream& os, const onnx::AttributeProto& a) {
  os << a.name() << " = ";
  switch (a.type()) {
    case onnx::AttributeProto::INT: os << a.i(); break;
    case onnx::AttributeProto::FLOAT: os << fmt_float(a.f()); break;
    case onnx::AttributeProto::STRING: os << quoted(a.s()); break;
    case onnx::AttributeProto::INTS:
      os << "[";
      for (int k = 0; k < a.ints_size(); ++k) os << (k ? ", " : "") << a.ints(k);
      os << "]";
      break;
    case onnx::AttributeProto::FLOATS:
      os << "[";
      for (int k = 0; k < a.floats_size(); ++k) os << (k ? ", " : "") << fmt_float(a.floats(k));
      os << "]";
      break;
    case onnx::AttributeProto::STRINGS:
      os << "[";
      for (int k = 0; k < a.strings_size(); ++k) os << (k ? ", " : "") << quoted(a.strings(k));
      os << "]";
      break;
    case onnx::AttributeProto::TENSOR:
      print_tensor_value(os, a.t());
      print_tensor_data(os, a.t());
      break;
    default: {
      std::ostringstream tmp;
      tmp << a;  // ONNX's own printer for graphs and the rest
      std::string s = tmp.str();
      os << s.substr(s.find('=') == std::string::npos ? 0 : s.find('=') + 1);
    }
  }
}

}  // namespace

std::string to_text(const onnx::ModelProto& p, int64_t max_elements) {
  std::ostringstream os;
  os << "<\n  ir_version: " << p.ir_version() << ",\n  opset_import: [";
  for (int k = 0; k < p.opset_import_size(); ++k)
    os << (k ? ", " : "") << quoted(p.opset_import(k).domain()) << " : " << p.opset_import(k).version();
  os << "]";
  if (!p.producer_name().empty()) os << ",\n  producer_name: " << quoted(p.producer_name());
  if (!p.producer_version().empty()) os << ",\n  producer_version: " << quoted(p.producer_version());
  if (!p.domain().empty()) os << ",\n  domain: " << quoted(p.domain());
  if (p.model_version()) os << ",\n  model_version: " << p.model_version();
  if (!p.doc_string().empty()) os << ",\n  doc_string: " << quoted(p.doc_string());
  os << "\n>\n";
  const onnx::GraphProto& g = p.graph();
  Names names(g);
  auto value_list = [&](const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vs) {
    os << "(";
    for (int k = 0; k < vs.size(); ++k) {
      os << (k ? ", " : "");
      print_type(os, vs[k].type());
      os << " " << names(vs[k].name());
    }
    os << ")";
  };
  os << (is_identifier(g.name()) ? g.name() : "main_graph") << " ";
  value_list(g.input());
  os << " => ";
  value_list(g.output());
  os << "\n";
  if (g.initializer_size()) {
    os << "<";
    for (int k = 0; k < g.initializer_size(); ++k) {
      const auto& t = g.initializer(k);
      os << (k ? ",\n " : "");
      print_tensor_value(os, t);
      os << " " << names(t.name()) << " =";
      print_tensor_data(os, t, max_elements);
    }
    os << ">\n";
  }
  os << "{\n";
  for (const auto& n : g.node()) {
    os << "  ";
    for (int k = 0; k < n.output_size(); ++k) os << (k ? ", " : "") << (n.output(k).empty() ? "" : names(n.output(k)));
    os << " = " << (n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ".") << n.op_type();
    if (n.attribute_size()) {
      os << " <";
      for (int k = 0; k < n.attribute_size(); ++k) {
        os << (k ? ", " : "");
        print_attribute(os, n.attribute(k));
      }
      os << ">";
    }
    os << " (";
    for (int k = 0; k < n.input_size(); ++k) os << (k ? ", " : "") << (n.input(k).empty() ? "" : names(n.input(k)));
    os << ")\n";
  }
  os << "}\n";
  return os.str();
}

onnx::ModelProto parse_text(const std::string& text, const std::string& origin) {
  onnx::ModelProto p;
  // Lines starting with "//" (lit's RUN/CHECK lines, "// -----") are comments too.
  std::string src = text;
  for (size_t pos = 0; pos < src.size();) {
    size_t eol = src.find('\n', pos);
    if (eol == std::string::npos) eol = src.size();
    size_t k = src.find_first_not_of(" \t", pos);
    if (k != std::string::npos && k + 1 < eol && src[k] == '/' && src[k + 1] == '/') src[k] = src[k + 1] = '#';
    pos = eol + 1;
  }
  onnx::OnnxParser parser(src.c_str());
  auto status = parser.Parse(p);
  if (!status.IsOK()) {
    std::string msg = status.ErrorMessage();
    for (char& c : msg)
      if (c == '\n') c = ' ';
    throw Error(origin + ": not valid ONNX text syntax: " + msg);
  }
  if (!p.has_graph()) throw Error(origin + ": ONNX text has no graph");
  if (p.ir_version() == 0) p.set_ir_version(kMaxIrVersion);
  return p;
}

std::string print_model(const ir::Model& model) { return to_text(export_model(model)); }

std::unique_ptr<ir::Model> parse_model(const std::string& text, const std::string& origin) {
  onnx::ModelProto p = parse_text(text, origin);
  return import_model(std::move(p), origin);
}

}  // namespace batchconv::io

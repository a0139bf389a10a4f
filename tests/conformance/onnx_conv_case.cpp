#include "onnx_conv_case.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace batchconv::conformance {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

template <class Proto>
Proto parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  Proto p;
  if (!p.ParseFromIstream(&in)) fail(path, "not a valid protobuf message");
  return p;
}

FloatTensor to_float(const onnx::TensorProto& t, const std::string& where) {
  if (t.data_type() != onnx::TensorProto::FLOAT)
    fail(where, "tensor '" + t.name() + "' has data_type " + std::to_string(t.data_type()) +
                    ", expected FLOAT (1)");
  FloatTensor f;
  int64_t n = 1;
  for (int64_t d : t.dims()) f.shape.push_back(d), n *= d;
  if (t.float_data_size() > 0) {
    f.data.assign(t.float_data().begin(), t.float_data().end());
  } else {
    const std::string& raw = t.raw_data();  // little-endian float32, like this machine
    f.data.resize(raw.size() / sizeof(float));
    std::memcpy(f.data.data(), raw.data(), f.data.size() * sizeof(float));
  }
  if (static_cast<int64_t>(f.data.size()) != n)
    fail(where, "tensor '" + t.name() + "' holds " + std::to_string(f.data.size()) +
                    " values for " + std::to_string(n) + " elements");
  return f;
}

std::vector<int64_t> ints_attr(const onnx::AttributeProto& a) { return {a.ints().begin(), a.ints().end()}; }

// Resolves ONNX's auto_pad SAME_UPPER / SAME_LOWER into explicit pads, as the
// operator spec defines them: output = ceil(input / stride), the total padding
// split evenly with the odd element at the end (UPPER) or the beginning (LOWER).
void same_pads(const std::string& mode, int64_t in, int64_t k, int64_t s, int64_t d, int& begin,
               int& end) {
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>(0, (out - 1) * s + (k - 1) * d + 1 - in);
  const int64_t small = total / 2, large = total - small;
  begin = static_cast<int>(mode == "SAME_UPPER" ? small : large);
  end = static_cast<int>(mode == "SAME_UPPER" ? large : small);
}

}  // namespace

std::string onnx_testdata_root() {
  if (const char* env = std::getenv("BATCHCONV_ONNX_TESTDATA")) return env;
  return BATCHCONV_ONNX_TESTDATA_DIR;
}

std::vector<std::string> discover_cases(const std::string& root,
                                        const std::vector<std::string>& relative_prefixes) {
  std::vector<std::string> found;
  for (const std::string& rp : relative_prefixes) {
    const fs::path p(rp);
    const fs::path dir = fs::path(root) / p.parent_path();
    const std::string prefix = p.filename().string();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_directory() && name.rfind(prefix, 0) == 0)
        found.push_back((p.parent_path() / name).string());
    }
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

OnnxConvCase load_onnx_conv_case(const std::string& dir) {
  OnnxConvCase c;
  c.dir = dir;
  const std::string model_path = dir + "/model.onnx";
  const auto model = parse_file<onnx::ModelProto>(model_path);
  const onnx::GraphProto& g = model.graph();
  if (g.node_size() != 1 || g.node(0).op_type() != "Conv")
    fail(model_path, "expected a graph of exactly one Conv node, found " +
                         std::to_string(g.node_size()) + " node(s), first '" +
                         (g.node_size() ? g.node(0).op_type() : std::string()) + "'");
  const onnx::NodeProto& node = g.node(0);

  std::map<std::string, FloatTensor> known;  // initializers, then the data set's inputs
  for (const auto& t : g.initializer()) known[t.name()] = to_float(t, model_path);
  std::vector<std::string> fed;  // graph inputs that the data sets feed, in order
  for (const auto& in : g.input())
    if (!known.count(in.name())) fed.push_back(in.name());

  std::string auto_pad = "NOTSET";
  std::vector<int64_t> strides, dilations, pads, kernel_shape;
  int64_t group = 1;
  std::ostringstream attrs;
  for (const auto& a : node.attribute()) {
    attrs << a.name() << "=";
    if (a.name() == "auto_pad") auto_pad = a.s(), attrs << auto_pad;
    else if (a.name() == "group") group = a.i(), attrs << group;
    else {
      const auto v = ints_attr(a);
      for (size_t i = 0; i < v.size(); ++i) attrs << (i ? "," : "[") << v[i];
      attrs << "]";
      if (a.name() == "strides") strides = v;
      else if (a.name() == "dilations") dilations = v;
      else if (a.name() == "pads") pads = v;
      else if (a.name() == "kernel_shape") kernel_shape = v;
      else fail(model_path, "unknown Conv attribute '" + a.name() + "'");
    }
    attrs << " ";
  }
  c.attributes = attrs.str();

  std::vector<std::string> set_dirs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      set_dirs.push_back(e.path().string());
  std::sort(set_dirs.begin(), set_dirs.end());
  if (set_dirs.empty()) fail(dir, "no test_data_set_* directory");

  for (const std::string& sd : set_dirs) {
    std::map<std::string, FloatTensor> values = known;
    for (size_t i = 0;; ++i) {
      const std::string path = sd + "/input_" + std::to_string(i) + ".pb";
      if (!fs::exists(path)) break;
      const auto t = parse_file<onnx::TensorProto>(path);
      std::string name = t.name();
      if (name.empty() || std::find(fed.begin(), fed.end(), name) == fed.end()) {
        if (i >= fed.size()) fail(path, "more input files than graph inputs");
        name = fed[i];
      }
      values[name] = to_float(t, path);
    }
    auto get = [&](int k) -> FloatTensor {
      if (node.input_size() <= k || node.input(k).empty()) return {};
      auto it = values.find(node.input(k));
      if (it == values.end()) fail(sd, "no value for Conv input '" + node.input(k) + "'");
      return it->second;
    };
    DataSet ds{sd, get(0), get(1), get(2), {}};
    ds.y = to_float(parse_file<onnx::TensorProto>(sd + "/output_0.pb"), sd + "/output_0.pb");
    c.data_sets.push_back(ds);
  }

  const DataSet& first = c.data_sets.front();
  c.spatial_dims = static_cast<int>(first.x.shape.size()) - 2;
  if (c.spatial_dims < 1) fail(model_path, "x has rank < 3");
  if (!kernel_shape.empty() &&
      !std::equal(kernel_shape.begin(), kernel_shape.end(), first.w.shape.begin() + 2))
    fail(model_path, "kernel_shape does not match W's shape");
  if (c.spatial_dims > 2) return c;  // 3-D: the caller skips it

  const int n = c.spatial_dims;
  ConvDesc& d = c.desc;
  d.groups = static_cast<int>(group);
  for (int i = 0; i < n; ++i) {
    d.stride[i] = strides.empty() ? 1 : static_cast<int>(strides[i]);
    d.dilation[i] = dilations.empty() ? 1 : static_cast<int>(dilations[i]);
    const int64_t in = first.x.shape[2 + i], k = first.w.shape[2 + i];
    if (auto_pad == "NOTSET") {
      d.pad_begin[i] = pads.empty() ? 0 : static_cast<int>(pads[i]);
      d.pad_end[i] = pads.empty() ? 0 : static_cast<int>(pads[n + i]);
    } else if (auto_pad == "VALID") {
      d.pad_begin[i] = d.pad_end[i] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      same_pads(auto_pad, in, k, d.stride[i], d.dilation[i], d.pad_begin[i], d.pad_end[i]);
    } else {
      fail(model_path, "unknown auto_pad '" + auto_pad + "'");
    }
  }
  return c;
}

}  // namespace batchconv::conformance

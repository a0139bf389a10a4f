// Double-precision plain-loop kernels for the ops the compiler lowers but the
// reference interpreter (rewrites/interpreter) does not run: activations,
// BatchNormalization, pools and softmax. run_reference() runs a model with
// the interpreter's kernels plus these.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>

#include "compile_test_support.h"

namespace batchconv::testing {
namespace {

using Kernel = std::function<ir::Tensor(const ir::Node&, const std::vector<const ir::Tensor*>&)>;

ir::Tensor like(const ir::Tensor& x, std::vector<int64_t> shape) {
  ir::Tensor t;
  t.dtype = ir::DType::Float;
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  t.f.assign(n, 0.0f);
  (void)x;
  return t;
}

Kernel unary(std::function<double(double)> fn) {
  return [fn](const ir::Node&, const std::vector<const ir::Tensor*>& in) {
    ir::Tensor y = like(*in[0], in[0]->shape);
    for (size_t k = 0; k < y.f.size(); ++k) y.f[k] = static_cast<float>(fn(in[0]->f[k]));
    return y;
  };
}

float attr_f(const ir::Node& n, const char* k, float def) {
  const ir::Attribute* a = n.attr(k);
  return a ? a->f : def;
}

ir::Tensor batch_norm(const ir::Node& n, const std::vector<const ir::Tensor*>& in) {
  const ir::Tensor& x = *in[0];
  ir::Tensor y = like(x, x.shape);
  const int64_t C = x.shape[1], N = x.shape[0], S = x.numel() / (N * C);
  const double eps = attr_f(n, "epsilon", 1e-5f);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t k = (i * C + c) * S + s;
        y.f[k] = static_cast<float>((x.f[k] - double(in[3]->f[c])) / std::sqrt(double(in[4]->f[c]) + eps) * in[1]->f[c] +
                                    in[2]->f[c]);
      }
  return y;
}

// 1-D and 2-D pools (a 1-D pool is H = 1).
ir::Tensor pool(const ir::Node& n, const std::vector<const ir::Tensor*>& in, bool is_max) {
  const ir::Tensor& x = *in[0];
  const bool two = x.shape.size() == 4;
  const int64_t N = x.shape[0], C = x.shape[1], H = two ? x.shape[2] : 1, W = x.shape.back();
  std::vector<int64_t> k = n.attr_ints("kernel_shape"), s = n.attr_ints("strides", {1, 1});
  std::vector<int64_t> d = n.attr_ints("dilations", {1, 1}), p = n.attr_ints("pads", {0, 0, 0, 0});
  if (!two) k.insert(k.begin(), 1), s.insert(s.begin(), 1), d.insert(d.begin(), 1), p = {0, p[0], 0, p[1]};
  if (!is_max) d = {1, 1};
  const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0, include_pad = n.attr_int("count_include_pad", 0) != 0;
  auto out_size = [&](int64_t in_, int i) {
    const int64_t room = in_ + p[i] + p[i + 2] - (d[i] * (k[i] - 1) + 1);
    int64_t o = (ceil_mode ? (room + s[i] - 1) / s[i] : room / s[i]) + 1;
    if (ceil_mode && (o - 1) * s[i] >= in_ + p[i]) --o;
    return o;
  };
  const int64_t OH = out_size(H, 0), OW = out_size(W, 1);
  ir::Tensor y = like(x, two ? std::vector<int64_t>{N, C, OH, OW} : std::vector<int64_t>{N, C, OW});
  for (int64_t i = 0; i < N * C; ++i)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < k[0]; ++ky)
          for (int64_t kx = 0; kx < k[1]; ++kx) {
            const int64_t iy = oy * s[0] + ky * d[0] - p[0], ix = ox * s[1] + kx * d[1] - p[1];
            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
            const bool in_pad = iy < H + p[2] && ix < W + p[3];
            if (include_pad ? in_pad : inside) ++count;
            if (!inside) continue;
            const double v = x.f[(i * H + iy) * W + ix];
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        y.f[(i * OH + oy) * OW + ox] = static_cast<float>(is_max ? acc : acc / std::max<int64_t>(count, 1));
      }
  return y;
}

ir::Tensor global_average_pool(const ir::Node&, const std::vector<const ir::Tensor*>& in) {
  const ir::Tensor& x = *in[0];
  std::vector<int64_t> shape(x.shape.size(), 1);
  shape[0] = x.shape[0];
  shape[1] = x.shape[1];
  ir::Tensor y = like(x, shape);
  const int64_t S = x.numel() / (x.shape[0] * x.shape[1]);
  for (int64_t i = 0; i < x.shape[0] * x.shape[1]; ++i) {
    double acc = 0;
    for (int64_t k = 0; k < S; ++k) acc += x.f[i * S + k];
    y.f[i] = static_cast<float>(acc / S);
  }
  return y;
}

ir::Tensor softmax(const ir::Node& n, const std::vector<const ir::Tensor*>& in, int64_t opset, bool log) {
  const ir::Tensor& x = *in[0];
  const int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attr_int("axis", opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  // Reduced block: dims [axis, last]; last = axis for opset >= 13.
  const int64_t last = opset >= 13 ? axis : r - 1;
  int64_t outer = 1, red = 1, inner = 1;
  for (int64_t k = 0; k < r; ++k) (k < axis ? outer : k <= last ? red : inner) *= x.shape[k];
  ir::Tensor y = like(x, x.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * red + j) * inner + i; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < red; ++j) mx = std::max(mx, double(x.f[at(j)]));
      for (int64_t j = 0; j < red; ++j) sum += std::exp(x.f[at(j)] - mx);
      for (int64_t j = 0; j < red; ++j) {
        const double v = x.f[at(j)] - mx;
        y.f[at(j)] = static_cast<float>(log ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
  return y;
}

const std::map<std::string, Kernel>& extra_kernels(int64_t opset) {
  static std::map<int64_t, std::map<std::string, Kernel>> by_opset;
  auto& m = by_opset[opset];
  if (m.empty()) {
    m["Sigmoid"] = unary([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    m["Tanh"] = unary([](double v) { return std::tanh(v); });
    m["Exp"] = unary([](double v) { return std::exp(v); });
    m["Neg"] = unary([](double v) { return -v; });
    m["Sqrt"] = unary([](double v) { return std::sqrt(v); });
    m["BatchNormalization"] = batch_norm;
    m["MaxPool"] = [](const ir::Node& n, const std::vector<const ir::Tensor*>& in) { return pool(n, in, true); };
    m["AveragePool"] = [](const ir::Node& n, const std::vector<const ir::Tensor*>& in) { return pool(n, in, false); };
    m["GlobalAveragePool"] = global_average_pool;
    m["Softmax"] = [opset](const ir::Node& n, const std::vector<const ir::Tensor*>& in) { return softmax(n, in, opset, false); };
    m["LogSoftmax"] = [opset](const ir::Node& n, const std::vector<const ir::Tensor*>& in) { return softmax(n, in, opset, true); };
  }
  return m;
}

}  // namespace

interp::TensorMap run_reference(const ir::Model& model, const interp::TensorMap& inputs) {
  std::map<const ir::Value*, ir::Tensor> vals;
  for (const ir::Value* v : model.graph.inputs) {
    if (!v->constant) vals[v] = inputs.at(v->name);
  }
  for (const auto& v : model.graph.values())
    if (v->constant && !v->producer) vals[v.get()] = *v->constant;
  for (const ir::Node* n : model.graph.topological_order()) {
    if (n->dead) continue;
    std::vector<const ir::Tensor*> in;
    for (const ir::Value* v : n->inputs) in.push_back(v && !v->name.empty() ? &vals.at(v) : nullptr);
    std::vector<ir::Tensor> out;
    if (interp::supports(*n)) {
      out = interp::run_node(*n, in, model.opset(n->domain));
    } else {
      const auto& extra = extra_kernels(model.opset(""));
      auto it = extra.find(n->op_type);
      if (it == extra.end()) throw std::runtime_error("run_reference: no kernel for " + ir::describe(n));
      out.push_back(it->second(*n, in));
    }
    for (size_t k = 0; k < out.size() && k < n->outputs.size(); ++k)
      if (n->outputs[k]) vals[n->outputs[k]] = std::move(out[k]);
  }
  interp::TensorMap result;
  for (const ir::Value* v : model.graph.outputs) result[v->name] = vals.at(v);
  return result;
}

}  // namespace batchconv::testing

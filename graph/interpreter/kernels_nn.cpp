// Activations (Sigmoid Tanh Exp Neg Sqrt Erf Abs Reciprocal Log Softplus
// LeakyRelu HardSwish HardSigmoid), BatchNormalization (inference),
// MaxPool / AveragePool (1-D and 2-D, through the shared window reading),
// GlobalAveragePool, Softmax and LogSoftmax: the ops the model compiler
// lowers besides those the rewrites touch, so that --verify and the compiler
// tests can check every one of them. Double-precision accumulation.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "interpreter/kernel_util.h"
#include "ir/conv_window.h"

namespace batchconv::interp {

namespace {

const Tensor& float_in(const Inputs& ins, size_t k, const char* what) {
  const Tensor& t = in(ins, k, what);
  if (!t.is_float()) fail(std::string(what) + " must be a float tensor");
  return t;
}

Outputs one(Tensor t) {
  t.onnx_proto.clear();
  Outputs o;
  o.push_back(std::move(t));
  return o;
}

Kernel unary(double (*fn)(double)) {
  return [fn](const ir::Node&, const Inputs& ins, int64_t) {
    Tensor y = float_in(ins, 0, "X");
    for (float& v : y.f) v = static_cast<float>(fn(v));
    return one(std::move(y));
  };
}

Outputs batch_norm(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = float_in(ins, 0, "X");
  if (x.shape.size() < 2) fail("X must be (N, C, ...), got " + shape_str(x.shape));
  const int64_t N = x.shape[0], C = x.shape[1], S = N * C == 0 ? 0 : x.numel() / (N * C);
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  const Tensor* p[4];
  for (int k = 0; k < 4; ++k) {
    p[k] = &float_in(ins, static_cast<size_t>(k + 1), names[k]);
    if (p[k]->shape != std::vector<int64_t>{C}) fail(std::string(names[k]) + " must have shape [" + std::to_string(C) + "]");
  }
  const ir::Attribute* e = n.attr("epsilon");
  const double eps = e ? e->f : 1e-5;
  Tensor y = make_tensor(x.dtype, x.shape);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t k = (i * C + c) * S + s;
        y.f[k] = static_cast<float>((x.f[k] - double(p[2]->f[c])) / std::sqrt(double(p[3]->f[c]) + eps) * p[0]->f[c] +
                                    p[1]->f[c]);
      }
  return one(std::move(y));
}

Outputs pool(const ir::Node& n, const Inputs& ins, bool is_max, int64_t opset) {
  const Tensor& x = float_in(ins, 0, "X");
  if (x.shape.size() != 3 && x.shape.size() != 4) fail("X must be (N, C, W) or (N, C, H, W), got " + shape_str(x.shape));
  const int64_t sp = static_cast<int64_t>(x.shape.size()) - 2;
  ir::Window w;
  try {
    w = ir::conv_window(ir::window_attrs(n, sp, is_max || opset >= 19),
                        std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  } catch (const ir::WindowError& e) {
    fail(e.what());
  }
  // As 2-D with H = 1 for a 1-D pool.
  auto at = [&](const std::vector<int64_t>& v, int64_t i, int64_t def) { return sp == 2 ? v[i] : (i == 0 ? def : v[0]); };
  const int64_t N = x.shape[0], C = x.shape[1], H = sp == 2 ? x.shape[2] : 1, W = x.shape.back();
  const int64_t kh = at(w.kernel, 0, 1), kw = at(w.kernel, 1, 1), sh = at(w.strides, 0, 1), sw = at(w.strides, 1, 1);
  const int64_t dh = at(w.dilations, 0, 1), dw = at(w.dilations, 1, 1);
  const int64_t pt = at(w.pad_begin, 0, 0), pl = at(w.pad_begin, 1, 0), pb = at(w.pad_end, 0, 0), pr = at(w.pad_end, 1, 0);
  const int64_t OH = at(w.out, 0, 1), OW = at(w.out, 1, 1);
  const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
  std::vector<int64_t> shape{N, C};
  shape.insert(shape.end(), w.out.begin(), w.out.end());
  Tensor y = make_tensor(x.dtype, shape);
  if (ir::mul_sat(y.numel(), ir::mul_sat(kh, kw)) > (int64_t(1) << 34)) fail("the pool is too large for the reference interpreter");
  for (int64_t i = 0; i < N * C; ++i)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox) {
        double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t count = 0;
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            const int64_t iy = oy * sh + ky * dh - pt, ix = ox * sw + kx * dw - pl;
            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
            const bool in_pad = iy < H + pb && ix < W + pr;
            if (include_pad ? in_pad : inside) ++count;
            if (!inside) continue;
            const double v = x.f[(i * H + iy) * W + ix];
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        y.f[(i * OH + oy) * OW + ox] = static_cast<float>(is_max ? acc : acc / std::max<int64_t>(count, 1));
      }
  return one(std::move(y));
}

Outputs global_average_pool(const Inputs& ins) {
  const Tensor& x = float_in(ins, 0, "X");
  if (x.shape.size() < 3) fail("X must be (N, C, spatial...), got " + shape_str(x.shape));
  std::vector<int64_t> shape(x.shape.size(), 1);
  shape[0] = x.shape[0];
  shape[1] = x.shape[1];
  Tensor y = make_tensor(x.dtype, shape);
  const int64_t nc = x.shape[0] * x.shape[1], S = nc == 0 ? 0 : x.numel() / nc;
  for (int64_t i = 0; i < nc; ++i) {
    double acc = 0;
    for (int64_t k = 0; k < S; ++k) acc += x.f[i * S + k];
    y.f[i] = static_cast<float>(acc / static_cast<double>(std::max<int64_t>(S, 1)));
  }
  return one(std::move(y));
}

Outputs softmax(const ir::Node& n, const Inputs& ins, int64_t opset, bool log) {
  const Tensor& x = float_in(ins, 0, "input");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  if (r == 0) fail("input must have rank >= 1");
  const int64_t axis = normalize_axis(n.attr_int("axis", opset >= 13 ? -1 : 1), r, "axis");
  // Reduced block: dims [axis, last]; last = axis from opset 13 on.
  const int64_t last = opset >= 13 ? axis : r - 1;
  int64_t outer = 1, red = 1, inner = 1;
  for (int64_t k = 0; k < r; ++k) (k < axis ? outer : k <= last ? red : inner) *= x.shape[k];
  Tensor y = make_tensor(x.dtype, x.shape);
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
  return one(std::move(y));
}

}  // namespace

void register_nn_kernels(Registry& r) {
  r["Sigmoid"] = unary([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  r["Tanh"] = unary([](double v) { return std::tanh(v); });
  r["Exp"] = unary([](double v) { return std::exp(v); });
  r["Neg"] = unary([](double v) { return -v; });
  r["Sqrt"] = unary([](double v) { return std::sqrt(v); });
  r["Erf"] = unary([](double v) { return std::erf(v); });
  r["Abs"] = unary([](double v) { return std::fabs(v); });
  r["Reciprocal"] = unary([](double v) { return 1.0 / v; });
  r["Log"] = unary([](double v) { return std::log(v); });
  r["Softplus"] = unary([](double v) { return v > 20 ? v : std::log1p(std::exp(v)); });
  r["HardSwish"] = unary([](double v) { return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5)); });
  r["HardSigmoid"] = [](const ir::Node& n, const Inputs& i, int64_t) {
    Tensor y = float_in(i, 0, "X");
    const ir::Attribute* a = n.attr("alpha");
    const ir::Attribute* b = n.attr("beta");
    const double alpha = a ? a->f : 0.2, beta = b ? b->f : 0.5;
    for (float& v : y.f) v = static_cast<float>(std::min(1.0, std::max(0.0, alpha * v + beta)));
    return one(std::move(y));
  };
  r["LeakyRelu"] = [](const ir::Node& n, const Inputs& i, int64_t) {
    Tensor y = float_in(i, 0, "X");
    const ir::Attribute* a = n.attr("alpha");
    const double alpha = a ? a->f : 0.01;
    for (float& v : y.f) v = v < 0 ? static_cast<float>(alpha * v) : v;
    return one(std::move(y));
  };
  r["BatchNormalization"] = [](const ir::Node& n, const Inputs& i, int64_t) { return batch_norm(n, i); };
  r["MaxPool"] = [](const ir::Node& n, const Inputs& i, int64_t opset) {
    if (n.outputs.size() > 1 && n.outputs[1]) fail("the Indices output is not supported");
    return pool(n, i, true, opset);
  };
  r["AveragePool"] = [](const ir::Node& n, const Inputs& i, int64_t opset) { return pool(n, i, false, opset); };
  r["GlobalAveragePool"] = [](const ir::Node&, const Inputs& i, int64_t) { return global_average_pool(i); };
  r["Softmax"] = [](const ir::Node& n, const Inputs& i, int64_t opset) { return softmax(n, i, opset, false); };
  r["LogSoftmax"] = [](const ir::Node& n, const Inputs& i, int64_t opset) { return softmax(n, i, opset, true); };
}

}  // namespace batchconv::interp

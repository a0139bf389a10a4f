// Elementwise and linear-algebra kernels: Add Sub Mul Div Pow Max Min Equal Where Relu
// Clip Cast Identity MatMul Gemm.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "interpreter/kernel_util.h"
#include "onnx/convert.h"

namespace batchconv::interp {

namespace {

// Integer results wrap around like the narrow type would.
int64_t wrap_to(int64_t x, ir::DType t) {
  switch (t) {
    case ir::DType::Int32: return static_cast<int32_t>(x);
    case ir::DType::Int8: return static_cast<int8_t>(x);
    case ir::DType::UInt8: return static_cast<uint8_t>(x);
    case ir::DType::Bool: return x != 0;
    default: return x;
  }
}

// Integer Add/Sub/Mul wrap around (two's complement, as ONNX runtimes do)
// instead of overflowing: computed on uint64_t, where wrapping is defined.
struct Wrapping {};

template <typename F>
int64_t int_op(F f, int64_t x, int64_t y, Wrapping*) {
  return static_cast<int64_t>(f(static_cast<uint64_t>(x), static_cast<uint64_t>(y)));
}
template <typename F>
int64_t int_op(F f, int64_t x, int64_t y, void*) {
  return static_cast<int64_t>(f(x, y));
}

template <typename Mode = void, typename F>
Outputs binary(const Inputs& ins, bool bool_result, F f) {
  const Tensor& a = in(ins, 0, "A");
  const Tensor& b = in(ins, 1, "B");
  if (a.is_float() != b.is_float())
    fail(std::string("inputs have different types: ") + ir::dtype_name(a.dtype) + " and " + ir::dtype_name(b.dtype));
  std::vector<int64_t> shape = broadcast_shapes(a.shape, b.shape);
  Tensor out = make_tensor(bool_result ? ir::DType::Bool : a.dtype, shape);
  std::vector<int64_t> ia = broadcast_index(a.shape, shape), ib = broadcast_index(b.shape, shape);
  const int64_t n = out.numel();
  if (a.is_float()) {
    for (int64_t k = 0; k < n; ++k) {
      double r = f(static_cast<double>(a.f[ia[k]]), static_cast<double>(b.f[ib[k]]));
      set(out, k, r);
    }
  } else {
    for (int64_t k = 0; k < n; ++k)
      out.i[k] = wrap_to(int_op(f, a.i[ia[k]], b.i[ib[k]], static_cast<Mode*>(nullptr)), out.dtype);
  }
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

Outputs int_div(const Inputs& ins) {
  const Tensor& b = in(ins, 1, "B");
  if (!b.is_float())
    for (int64_t v : b.i)
      if (v == 0) fail("integer division by zero");
  // INT64_MIN / -1 overflows: computed as the wrapped negation.
  return binary(ins, false, [](auto x, auto y) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      if (y == -1) return static_cast<decltype(x)>(0 - static_cast<uint64_t>(x));
    }
    return x / y;
  });
}

ir::DType cast_target(int64_t to) {
  switch (to) {
    case 1: return ir::DType::Float;
    case 11: return ir::DType::Double;
    case 10: return ir::DType::Float16;
    case 7: return ir::DType::Int64;
    case 6: return ir::DType::Int32;
    case 3: return ir::DType::Int8;
    case 2: return ir::DType::UInt8;
    case 9: return ir::DType::Bool;
    default: fail("Cast to ONNX type " + std::to_string(to) + " is not supported");
  }
}

// Cast's float-to-integer conversion. ONNX leaves out-of-range values
// undefined; here they are a named error, never undefined behaviour.
int64_t float_to_int(double v, ir::DType t) {
  if (t == ir::DType::Bool) return v != 0;
  return wrap_to(float_to_int64(v, "Cast"), t);
}

Outputs cast(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "input");
  const Attribute* to = n.attr("to");
  if (!to) fail("missing attribute 'to'");
  Tensor out = make_tensor(cast_target(to->i), x.shape);
  const int64_t cnt = x.numel();
  for (int64_t k = 0; k < cnt; ++k) {
    if (out.dtype == ir::DType::Float16) {
      out.f[k] = io::half_to_float(io::float_to_half(x.is_float() ? x.f[k] : static_cast<float>(x.i[k])));
    } else if (out.is_float()) {
      out.f[k] = x.is_float() ? x.f[k] : static_cast<float>(x.i[k]);
    } else {
      out.i[k] = x.is_float() ? float_to_int(x.f[k], out.dtype) : wrap_to(x.i[k], out.dtype);
    }
  }
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

Outputs where(const Inputs& ins) {
  const Tensor& c = in(ins, 0, "condition");
  const Tensor& x = in(ins, 1, "X");
  const Tensor& y = in(ins, 2, "Y");
  if (c.is_float()) fail("condition must be bool");
  if (x.is_float() != y.is_float()) fail("X and Y have different types");
  std::vector<int64_t> shape = broadcast_shapes(broadcast_shapes(c.shape, x.shape), y.shape);
  Tensor out = make_tensor(x.dtype, shape);
  auto ic = broadcast_index(c.shape, shape), ix = broadcast_index(x.shape, shape), iy = broadcast_index(y.shape, shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    if (c.i[ic[k]]) copy_elem(x, ix[k], out, k);
    else copy_elem(y, iy[k], out, k);
  }
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

// C[m,n] = sum_k A[m,k] B[k,n], each batch; accumulation in double.
void matmul_2d(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(s);
    }
}

Outputs matmul(const Inputs& ins) {
  Tensor a = in(ins, 0, "A"), b = in(ins, 1, "B");
  if (!a.is_float() || !b.is_float()) fail("MatMul supports float tensors only");
  if (a.shape.empty() || b.shape.empty()) fail("MatMul inputs must have rank >= 1");
  bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  int64_t k2 = b.shape[b.shape.size() - 2], n = b.shape.back();
  if (k != k2) fail("MatMul inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  std::vector<int64_t> ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  std::vector<int64_t> batch = broadcast_shapes(ba, bb);
  std::vector<int64_t> ia = broadcast_index(ba, batch), ib = broadcast_index(bb, batch);
  std::vector<int64_t> shape = batch;
  shape.push_back(m);
  shape.push_back(n);
  Tensor out = make_tensor(a.dtype, shape);
  for (size_t e = 0; e < ia.size(); ++e)
    matmul_2d(a.f.data() + ia[e] * m * k, b.f.data() + ib[e] * k * n, out.f.data() + e * m * n, m, k, n);
  if (b1) out.shape.pop_back();
  if (a1) out.shape.erase(out.shape.end() - (b1 ? 1 : 2));
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

Outputs gemm(const ir::Node& nd, const Inputs& ins) {
  const Tensor& a = in(ins, 0, "A");
  const Tensor& b = in(ins, 1, "B");
  const Tensor* c = opt_in(ins, 2);
  if (a.shape.size() != 2 || b.shape.size() != 2) fail("Gemm needs 2-D A and B, got " + shape_str(a.shape) + ", " + shape_str(b.shape));
  bool ta = nd.attr_int("transA", 0), tb = nd.attr_int("transB", 0);
  const Attribute* al = nd.attr("alpha");
  const Attribute* be = nd.attr("beta");
  double alpha = al ? al->f : 1.0, beta = be ? be->f : 1.0;
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t k2 = tb ? b.shape[1] : b.shape[0], n = tb ? b.shape[0] : b.shape[1];
  if (k != k2) fail("Gemm inner dimensions differ: " + std::to_string(k) + " vs " + std::to_string(k2));
  Tensor out = make_tensor(a.dtype, {m, n});
  std::vector<int64_t> ic;
  if (c) ic = broadcast_index(c->shape, broadcast_shapes(c->shape, {m, n}));
  if (c && broadcast_shapes(c->shape, {m, n}) != std::vector<int64_t>{m, n}) fail("Gemm C does not broadcast to [M,N]");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += static_cast<double>(a.f[ta ? p * m + i : i * k + p]) * b.f[tb ? j * k + p : p * n + j];
      s *= alpha;
      if (c) s += beta * get(*c, ic[i * n + j]);
      out.f[i * n + j] = static_cast<float>(s);
    }
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

}  // namespace

void register_math_kernels(Registry& r) {
  r["Add"] = [](const ir::Node&, const Inputs& i, int64_t) { return binary<Wrapping>(i, false, [](auto x, auto y) { return x + y; }); };
  r["Sub"] = [](const ir::Node&, const Inputs& i, int64_t) { return binary<Wrapping>(i, false, [](auto x, auto y) { return x - y; }); };
  r["Mul"] = [](const ir::Node&, const Inputs& i, int64_t) { return binary<Wrapping>(i, false, [](auto x, auto y) { return x * y; }); };
  r["Div"] = [](const ir::Node&, const Inputs& i, int64_t) { return int_div(i); };
  r["Equal"] = [](const ir::Node&, const Inputs& i, int64_t) {
    return binary(i, true, [](auto x, auto y) { return static_cast<decltype(x)>(x == y); });
  };
  r["Pow"] = [](const ir::Node&, const Inputs& i, int64_t) {
    if (!in(i, 0, "X").is_float() || !in(i, 1, "Y").is_float()) fail("Pow supports float tensors only");
    return binary(i, false, [](auto x, auto y) { return std::pow(x, y); });
  };
  r["Max"] = [](const ir::Node& n, const Inputs& i, int64_t) {
    if (n.inputs.size() != 2) fail("Max of " + std::to_string(n.inputs.size()) + " inputs: only 2 are supported");
    return binary(i, false, [](auto x, auto y) { return x > y ? x : y; });
  };
  r["Min"] = [](const ir::Node& n, const Inputs& i, int64_t) {
    if (n.inputs.size() != 2) fail("Min of " + std::to_string(n.inputs.size()) + " inputs: only 2 are supported");
    return binary(i, false, [](auto x, auto y) { return x < y ? x : y; });
  };
  r["Where"] = [](const ir::Node&, const Inputs& i, int64_t) { return where(i); };
  r["Cast"] = [](const ir::Node& n, const Inputs& i, int64_t) { return cast(n, i); };
  r["Relu"] = [](const ir::Node&, const Inputs& i, int64_t) {
    Tensor t = in(i, 0, "X");
    for (float& x : t.f) x = x > 0 ? x : 0.0f;
    for (int64_t& x : t.i) x = x > 0 ? x : 0;
    t.onnx_proto.clear();
    Outputs o;
    o.push_back(std::move(t));
    return o;
  };
  r["Clip"] = [](const ir::Node& n, const Inputs& i, int64_t opset) {
    Tensor t = in(i, 0, "input");
    if (!t.is_float()) fail("Clip supports float tensors only");
    double lo = -INFINITY, hi = INFINITY;
    auto scalar = [&](size_t k, double* v) {
      const Tensor* s = opt_in(i, k);
      if (!s) return;
      if (s->numel() != 1) fail(std::string(k == 1 ? "min" : "max") + " must be a scalar");
      *v = get(*s, 0);
    };
    if (opset >= 11) {
      scalar(1, &lo);
      scalar(2, &hi);
    } else {
      if (const ir::Attribute* a = n.attr("min")) lo = a->f;
      if (const ir::Attribute* a = n.attr("max")) hi = a->f;
    }
    for (float& x : t.f) x = static_cast<float>(std::min(hi, std::max(lo, static_cast<double>(x))));
    t.onnx_proto.clear();
    Outputs o;
    o.push_back(std::move(t));
    return o;
  };
  r["Identity"] = [](const ir::Node&, const Inputs& i, int64_t) {
    Outputs o;
    o.push_back(in(i, 0, "input"));
    return o;
  };
  r["MatMul"] = [](const ir::Node&, const Inputs& i, int64_t) { return matmul(i); };
  r["Gemm"] = [](const ir::Node& n, const Inputs& i, int64_t) { return gemm(n, i); };
}

}  // namespace batchconv::interp

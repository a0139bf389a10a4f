#include "device_common.h"

#include <limits>
#include <sstream>

namespace batchconv::detail::device {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
thread_local std::string t_last_error;
float g_zero = 0.0f;

void capture(void* /*uc*/, const char* msg) { t_last_error = msg ? msg : ""; }

struct Dim {
  int64_t extent, stride;
};

// A float32 halide_buffer_t of up to 6 dims (innermost first) over host
// memory (host != null) or nothing yet (a device handle gets wrapped).
class Buf {
 public:
  Buf(const std::string& op, const char* what, float* host, const std::vector<Dim>& dims) {
    int64_t furthest = 0;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim& d = dims[i];
      if (d.extent > kInt32Max || d.stride > kInt32Max || d.stride < -kInt32Max) {
        throw Error(op + ": " + what + " has an extent or stride beyond the kernels' 32-bit indexing");
      }
      furthest += (d.stride < 0 ? -d.stride : d.stride) * (d.extent - 1);
      if (furthest > kInt32Max) throw Error(op + ": " + what + " spans more than 2^31 elements; split the call");
      dims_[i].min = 0;
      dims_[i].extent = static_cast<int32_t>(d.extent);
      dims_[i].stride = static_cast<int32_t>(d.stride);
      dims_[i].flags = 0;
    }
    bytes_ = 4 * (furthest + 1);
    buf_.host = reinterpret_cast<uint8_t*>(host);
    buf_.type = halide_type_t(halide_type_float, 32, 1);
    buf_.dimensions = static_cast<int>(dims.size());
    buf_.dim = dims_;
    if (host) buf_.flags = halide_buffer_flag_host_dirty;
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  halide_buffer_t* get() { return &buf_; }
  int64_t bytes() const { return bytes_; }

 private:
  halide_buffer_t buf_{};
  halide_dimension_t dims_[6]{};
  int64_t bytes_ = 0;
};

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  if (!strides.empty()) return strides;
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// A tensor as the shape functions of batchconv.h see it (data is only a tag).
TensorView view_of(const DeviceTensor& t) {
  return TensorView(reinterpret_cast<float*>(t.handle), t.shape, t.strides);
}

// Halide dims of a conv tensor: the spatial axes after `first_spatial`
// (innermost first, a 1-D tensor gets a unit H), then `inner` axes (e.g.
// w's Cin_g) innermost first, the `split` axis as (extent/groups, groups),
// then the `outer` axes in the order given.
std::vector<Dim> conv_dims(const std::vector<int64_t>& shape, const std::vector<int64_t>& st, int first_spatial,
                           bool one_d, const std::vector<int>& inner, int split, int64_t groups,
                           const std::vector<int>& outer) {
  std::vector<Dim> d;
  const int r = static_cast<int>(shape.size());
  for (int i = r - 1; i >= first_spatial; --i) d.push_back({shape[i], st[i]});
  if (one_d) d.push_back({1, st[r - 1] * shape[r - 1]});
  for (int i : inner) d.push_back({shape[i], st[i]});
  const int64_t per = shape[split] / groups;
  d.push_back({per, st[split]});
  d.push_back({groups, per * st[split]});
  for (int i : outer) d.push_back({shape[i], st[i]});
  return d;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream o;
  o << "(";
  for (size_t i = 0; i < shape.size(); ++i) o << (i ? ", " : "") << shape[i];
  o << ")";
  return o.str();
}

void check_shape(const std::string& op, const char* what, const std::vector<int64_t>& got,
                 const std::vector<int64_t>& expected) {
  if (got != expected) {
    throw Error(op + ": " + what + " has shape " + shape_str(got) + " but expected " + shape_str(expected));
  }
}

void check_unit_inner(const std::string& op, const char* what, const std::vector<int64_t>& st) {
  if (!st.empty() && st.back() != 1) {
    throw Error(op + ": " + what + " has innermost stride " + std::to_string(st.back()) +
                "; the GPU kernels need 1 (pass a contiguous copy)");
  }
}

// Everything a conv call needs, from shapes only (validated as the CPU ops do).
struct ConvPlan {
  std::vector<Dim> x, w, bias, y;
  std::vector<int64_t> bias_shape;
  ConvArgs args{};
};

ConvPlan plan_conv(const std::string& op, ConvKernel k, const TensorView& x, const TensorView& w,
                   const TensorView* bias, const TensorView& y, const ConvDesc& d, BroadcastLayout layout) {
  std::vector<int64_t> expected;
  if (k == ConvKernel::Grouped) {
    expected = grouped_conv_output_shape(x, w, d);
  } else if (k == ConvKernel::BatchedWeight) {
    expected = batched_weight_conv_output_shape(x, w, d);
  } else {
    expected = broadcast_input_conv_output_shape(x, w, d, layout);
  }
  check_shape(op, "y", y.shape, expected);
  const bool wb = k != ConvKernel::Grouped;  // w has a leading B
  const bool xb = k == ConvKernel::BatchedWeight;
  const int wr = w.rank();
  const bool one_d = wr == (wb ? 4 : 3);
  const int64_t G = d.groups;
  const int64_t B = wb ? w.shape[0] : 1;
  const int64_t cout = w.shape[wb ? 1 : 0];
  const std::vector<int64_t> xs = strides_of(x.shape, x.strides), ws = strides_of(w.shape, w.strides),
                             ys = strides_of(y.shape, y.strides);
  ConvPlan p;
  const int xc = xb ? 2 : 1;
  p.x = conv_dims(x.shape, xs, xc + 1, one_d, {}, xc, G, xb ? std::vector<int>{1, 0} : std::vector<int>{0});
  const int wc = wb ? 1 : 0;
  p.w = conv_dims(w.shape, ws, wc + 2, one_d, {wc + 1}, wc, G, wb ? std::vector<int>{0} : std::vector<int>{});
  if (k == ConvKernel::BroadcastInput && layout == BroadcastLayout::Concatenated) {
    // y (N, B*Cout, ...): bank b's channels start at b * Cout.
    p.y = conv_dims(y.shape, ys, 2, one_d, {}, 1, G * B, {0});
    p.y.back() = {y.shape[0], ys[0]};
    p.y[p.y.size() - 2] = {G, (cout / G) * ys[1]};
    p.y.push_back({B, cout * ys[1]});
  } else {
    const int yc = (k == ConvKernel::Grouped) ? 1 : 2;
    p.y = conv_dims(y.shape, ys, yc + 1, one_d, {}, yc, G,
                    k == ConvKernel::Grouped ? std::vector<int>{0} : std::vector<int>{1, 0});
  }
  p.bias_shape = wb ? std::vector<int64_t>{B, cout} : std::vector<int64_t>{cout};
  if (bias) {
    check_shape(op, "bias", bias->shape, p.bias_shape);
    const std::vector<int64_t> bs = strides_of(bias->shape, bias->strides);
    const int c = wb ? 1 : 0;
    p.bias = {{cout / G, bs[c]}, {G, (cout / G) * bs[c]}};
    if (wb) p.bias.push_back({B, bs[0]});
  } else {
    p.bias = {{cout / G, 0}, {G, 0}};
    if (wb) p.bias.push_back({B, 0});
  }
  const int h = one_d ? -1 : 0, wi = one_d ? 0 : 1;
  p.args.stride_x = d.stride[wi];
  p.args.dilation_x = d.dilation[wi];
  p.args.pad_x = d.pad_begin[wi];
  p.args.stride_y = h < 0 ? 1 : d.stride[0];
  p.args.dilation_y = h < 0 ? 1 : d.dilation[0];
  p.args.pad_y = h < 0 ? 0 : d.pad_begin[0];
  p.args.relu = d.activation == Activation::ReLU;
  return p;
}

struct LinearPlan {
  std::vector<Dim> x, w, bias, y;
};

LinearPlan plan_linear(const std::string& op, const TensorView& x, const TensorView& w, const TensorView* bias,
                       const TensorView& y, Activation act) {
  if (act != Activation::None && act != Activation::ReLU) throw Error(op + ": activation is not None or ReLU");
  if (w.rank() != 3) throw Error(op + ": w has shape " + w.shape_string() + " but expected (B, K, M)");
  const int64_t B = w.shape[0], K = w.shape[1], M = w.shape[2];
  if (x.rank() != 2 && x.rank() != 3) {
    throw Error(op + ": x has shape " + x.shape_string() + " but expected (B, N, K) or shared (N, K)");
  }
  const bool shared = x.rank() == 2;
  const int64_t N = x.shape[shared ? 0 : 1];
  check_shape(op, "x", x.shape, shared ? std::vector<int64_t>{N, K} : std::vector<int64_t>{B, N, K});
  check_shape(op, "y", y.shape, {B, N, M});
  for (int64_t e : {B, N, K, M}) {
    if (e < 1) throw Error(op + ": every size must be at least 1, got x " + x.shape_string() + ", w " + w.shape_string());
  }
  const std::vector<int64_t> xs = strides_of(x.shape, x.strides), ws = strides_of(w.shape, w.strides),
                             ys = strides_of(y.shape, y.strides);
  LinearPlan p;
  p.x = shared ? std::vector<Dim>{{K, xs[1]}, {N, xs[0]}, {B, 0}}
               : std::vector<Dim>{{K, xs[2]}, {N, xs[1]}, {B, xs[0]}};
  p.w = {{M, ws[2]}, {K, ws[1]}, {B, ws[0]}};
  p.y = {{M, ys[2]}, {N, ys[1]}, {B, ys[0]}};
  if (bias) {
    check_shape(op, "bias", bias->shape, {B, M});
    const std::vector<int64_t> bs = strides_of(bias->shape, bias->strides);
    p.bias = {{M, bs[1]}, {B, bs[0]}};
  } else {
    p.bias = {{M, 0}, {B, 0}};
  }
  return p;
}

const char* conv_name(ConvKernel k) {
  return k == ConvKernel::Grouped ? "grouped_conv"
         : k == ConvKernel::BatchedWeight ? "batched_weight_conv"
                                          : "broadcast_input_conv";
}

[[noreturn]] void fail(const std::string& op, int code) {
  std::string msg = last_halide_error();
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  throw Error(op + ": the kernel failed (Halide error " + std::to_string(code) + ")" + (msg.empty() ? "" : ": " + msg));
}

void require_available(Backend& be, const std::string& op, const char* hint) {
  const std::string why = be.unavailable_reason();
  if (!why.empty()) throw Error(op + ": " + why + hint);
}

// Runs `kernel` on device handles: checks them, wraps x, w, bias, y,
// calls, detaches (also on failure), frees the zero bias's copy.
template <typename F>
void run_on_device(Backend& be, const std::string& op, const DeviceContext& ctx,
                   const std::vector<std::pair<const DeviceTensor*, Buf*>>& tensors, const char* const* names,
                   Buf* zero_bias, F&& kernel) {
  require_available(be, op, "");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].first) continue;
    check_unit_inner(op, names[i], tensors[i].first->strides);
    be.check_handle(op.c_str(), names[i], tensors[i].first->handle, tensors[i].second->bytes(), ctx);
  }
  CallContext cc{&ctx};
  install_error_capture();
  std::vector<Buf*> wrapped;
  int code = 0;
  for (const auto& t : tensors) {
    if (!t.first) continue;
    code = be.wrap(&cc, t.second->get(), t.first->handle);
    if (code != 0) break;
    wrapped.push_back(t.second);
  }
  if (code == 0) code = kernel(&cc);
  for (Buf* b : wrapped) be.detach(&cc, b->get());
  if (zero_bias) halide_device_free(&cc, zero_bias->get());
  if (code != 0) fail(op, code);
}

// Runs `kernel` on host views: Halide copies the inputs in, y is copied back.
template <typename F>
void run_on_host(Backend& /*be*/, const std::string& op, const DeviceContext& ctx, const std::vector<Buf*>& bufs, Buf* y,
                 F&& kernel) {
  CallContext cc{&ctx};
  install_error_capture();
  int code = kernel(&cc);
  if (code == 0) code = halide_copy_to_host(&cc, y->get());
  for (Buf* b : bufs) halide_device_free(&cc, b->get());
  if (code != 0) fail(op, code);
}

void check_host_view(const std::string& op, const char* what, const TensorView& t) {
  if (!t.data) throw Error(op + ": " + what + " is null");
  if (t.layout == Layout::NHWC && t.strides.empty()) {
    throw Error(op + ": " + what + " is an NHWC view without strides; give its strides");
  }
}

constexpr const char* kFallbackHint = " (DeviceContext::cpu_fallback = true runs the CPU kernels instead)";

}  // namespace

void install_error_capture() { halide_set_error_handler(capture); }
std::string last_halide_error() { return t_last_error; }

void conv(Backend& be, ConvKernel k, const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
          const DeviceTensor& y, const ConvDesc& d, BroadcastLayout layout, const DeviceContext& ctx) {
  const std::string op = std::string(be.name()) + ": " + conv_name(k);
  TensorView bv = bias ? view_of(*bias) : TensorView();
  ConvPlan p = plan_conv(op, k, view_of(x), view_of(w), bias ? &bv : nullptr, view_of(y), d, layout);
  Buf xb(op, "x", nullptr, p.x), wb(op, "w", nullptr, p.w), yb(op, "y", nullptr, p.y);
  Buf bb(op, "bias", bias ? nullptr : &g_zero, p.bias);
  const char* names[] = {"x", "w", "bias", "y"};
  run_on_device(be, op, ctx, {{&x, &xb}, {&w, &wb}, {bias, &bb}, {&y, &yb}}, names, bias ? nullptr : &bb,
                [&](void* uc) { return be.conv(k, uc, xb.get(), wb.get(), bb.get(), p.args, yb.get()); });
}

void conv(Backend& be, ConvKernel k, const TensorView& x, const TensorView& w, const TensorView* bias,
          const TensorView& y, const ConvDesc& d, BroadcastLayout layout, const DeviceContext& ctx) {
  const std::string op = std::string(be.name()) + ": " + conv_name(k);
  if (!be.unavailable_reason().empty() && ctx.cpu_fallback) {
    if (k == ConvKernel::Grouped) {
      batchconv::grouped_conv(x, w, bias, y, d);
    } else if (k == ConvKernel::BatchedWeight) {
      batchconv::batched_weight_conv(x, w, bias, y, d);
    } else {
      batchconv::broadcast_input_conv(x, w, bias, y, d, layout);
    }
    return;
  }
  ConvPlan p = plan_conv(op, k, x, w, bias, y, d, layout);
  for (const auto& [what, t] : {std::pair<const char*, const TensorView*>{"x", &x}, {"w", &w}, {"y", &y}}) {
    check_host_view(op, what, *t);
    check_unit_inner(op, what, t->strides);
  }
  if (bias) check_host_view(op, "bias", *bias);
  require_available(be, op, kFallbackHint);
  Buf xb(op, "x", x.data, p.x), wb(op, "w", w.data, p.w), yb(op, "y", y.data, p.y);
  Buf bb(op, "bias", bias ? bias->data : &g_zero, p.bias);
  yb.get()->flags = 0;
  run_on_host(be, op, ctx, {&xb, &wb, &bb, &yb}, &yb,
              [&](void* uc) { return be.conv(k, uc, xb.get(), wb.get(), bb.get(), p.args, yb.get()); });
}

void linear(Backend& be, const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
            const DeviceTensor& y, Activation act, const DeviceContext& ctx) {
  const std::string op = std::string(be.name()) + ": batched_linear";
  TensorView bv = bias ? view_of(*bias) : TensorView();
  LinearPlan p = plan_linear(op, view_of(x), view_of(w), bias ? &bv : nullptr, view_of(y), act);
  Buf xb(op, "x", nullptr, p.x), wb(op, "w", nullptr, p.w), yb(op, "y", nullptr, p.y);
  Buf bb(op, "bias", bias ? nullptr : &g_zero, p.bias);
  const char* names[] = {"x", "w", "bias", "y"};
  run_on_device(be, op, ctx, {{&x, &xb}, {&w, &wb}, {bias, &bb}, {&y, &yb}}, names, bias ? nullptr : &bb,
                [&](void* uc) { return be.linear(uc, xb.get(), wb.get(), bb.get(), act == Activation::ReLU, yb.get()); });
}

void linear(Backend& be, const TensorView& x, const TensorView& w, const TensorView* bias, const TensorView& y,
            Activation act, const DeviceContext& ctx) {
  const std::string op = std::string(be.name()) + ": batched_linear";
  if (!be.unavailable_reason().empty() && ctx.cpu_fallback) {
    batchconv::batched_linear(x, w, bias, y, act);
    return;
  }
  LinearPlan p = plan_linear(op, x, w, bias, y, act);
  for (const auto& [what, t] : {std::pair<const char*, const TensorView*>{"x", &x}, {"w", &w}, {"y", &y}}) {
    check_host_view(op, what, *t);
    check_unit_inner(op, what, t->strides);
  }
  if (bias) check_host_view(op, "bias", *bias);
  require_available(be, op, kFallbackHint);
  Buf xb(op, "x", x.data, p.x), wb(op, "w", w.data, p.w), yb(op, "y", y.data, p.y);
  Buf bb(op, "bias", bias ? bias->data : &g_zero, p.bias);
  yb.get()->flags = 0;
  run_on_host(be, op, ctx, {&xb, &wb, &bb, &yb}, &yb,
              [&](void* uc) { return be.linear(uc, xb.get(), wb.get(), bb.get(), act == Activation::ReLU, yb.get()); });
}

}  // namespace batchconv::detail::device

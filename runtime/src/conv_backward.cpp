#include "conv_backward.h"

#include "batchconv_conv_grad_input.h"
#include "batchconv_conv_grad_input_shared.h"
#include "batchconv_conv_grad_weight.h"
#include "batchconv/batchconv.h"
#include "contiguous.h"
#include "halide_view.h"
#include "validate.h"

namespace batchconv::detail {

namespace {

// Halide dims (w, h, c_g, g, n, b) of an activation-like operand.
std::vector<Dim> activation(const TensorView& t, Operand kind, const ConvPlan& p, int64_t c_g,
                            int64_t cout) {
  switch (kind) {
    case Operand::Batched:
      return activation_dims(t, 1, p.spatial, c_g, p.groups);
    case Operand::Unbatched: {
      std::vector<Dim> d = activation_dims(t, 0, p.spatial, c_g, p.groups);
      d.push_back({1, 0});
      return d;
    }
    case Operand::Shared: {
      std::vector<Dim> d = activation_dims(t, 0, p.spatial, c_g, p.groups);
      d.push_back({p.batch, 0});
      return d;
    }
    case Operand::Concat: {
      // (N, B*Cout, ...): channel = b*Cout + g*Cout_g + co
      std::vector<Dim> d;
      const int r = t.rank();
      d.push_back({t.shape[r - 1], t.stride(r - 1)});
      d.push_back(p.spatial == 2 ? Dim{t.shape[r - 2], t.stride(r - 2)} : Dim{1, 0});
      const int64_t sc = t.stride(1);
      d.push_back({c_g, sc});
      d.push_back({p.groups, c_g * sc});
      d.push_back({p.n, t.stride(0)});
      d.push_back({p.batch, cout * sc});
      return d;
    }
  }
  return {};
}

std::vector<Dim> weight(const TensorView& w, Operand kind, const ConvPlan& p) {
  if (kind == Operand::Batched) return weight_dims(w, 1, p.spatial, p.cout_g, p.groups);
  std::vector<Dim> d = weight_dims(w, 0, p.spatial, p.cout_g, p.groups);
  d.push_back({1, 0});
  return d;
}

// Channels per group of dx from which the forward path below is taken: with
// fewer (seed 3's RGB inputs) the gradient kernel's exact narrow tiles win.
constexpr int64_t kForwardMinChannels = 16;

// The input gradient of a unit-stride conv is a forward conv of dy with each
// group's weights transposed (Cout_g <-> Cin_g) and flipped in space, padded
// by d*(K-1) - pad_begin before and d*(K-1) - pad_end after. The forward
// kernels run faster than the gradient kernel (and take any dy/dx strides),
// so unit-stride batched or plain convs take this path. Returns false where
// it does not apply: other strides, the broadcast op's summed dx, narrow
// groups, padding wider than the dilated kernel.
bool grad_input_as_forward(const ConvPlan& p, const TensorView& dy, Operand dy_kind,
                           const TensorView& w, Operand w_kind, const TensorView& dx,
                           Operand dx_kind) {
  const bool batched = dy_kind == Operand::Batched && w_kind == Operand::Batched && dx_kind == Operand::Batched;
  const bool plain =
      dy_kind == Operand::Unbatched && w_kind == Operand::Unbatched && dx_kind == Operand::Unbatched;
  if (!(batched || plain) || p.stride_x != 1 || p.stride_y != 1 || p.cin_g < kForwardMinChannels) return false;
  ConvDesc d;  // spatial entries (H, W) or (W), as ConvDesc takes them
  d.groups = static_cast<int>(p.groups);
  for (int i = 0; i < p.spatial; ++i) {
    const bool along_w = i == p.spatial - 1;
    const int64_t k = p.kernel[i], dil = along_w ? p.dilation_x : p.dilation_y;
    const int64_t pb = along_w ? p.pad_x : p.pad_y;
    const int64_t pe = p.out[i] - p.in[i] - pb + dil * (k - 1);  // unit stride
    const int64_t span = dil * (k - 1);
    if (pb > span || pe > span || pe < 0) return false;
    d.stride[i] = 1;
    d.dilation[i] = static_cast<int>(dil);
    d.pad_begin[i] = static_cast<int>(span - pb);
    d.pad_end[i] = static_cast<int>(span - pe);
  }
  // w' ([B,] G*Cin_g, Cout_g, [KH,] KW), dense: w'[b, g*Cin_g + ci, co, ky, kx] =
  // w[b, g*Cout_g + co, ci, KH-1-ky, KW-1-kx]. Reused across calls on a thread.
  const int lead = batched ? 1 : 0;
  const int64_t kh = p.spatial == 2 ? p.kernel[0] : 1, kw = p.kernel.back();
  const int64_t s_b = batched ? w.stride(0) : 0, s_co = w.stride(lead), s_ci = w.stride(lead + 1);
  const int64_t s_kh = p.spatial == 2 ? w.stride(lead + 2) : 0, s_kw = w.stride(w.rank() - 1);
  thread_local std::vector<float> packed;
  packed.resize(static_cast<size_t>(p.batch * p.cin * p.cout_g * kh * kw));
  float* out = packed.data();
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t ci = 0; ci < p.cin_g; ++ci)
        for (int64_t co = 0; co < p.cout_g; ++co) {
          const float* src = w.data + b * s_b + (g * p.cout_g + co) * s_co + ci * s_ci;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) *out++ = src[(kh - 1 - ky) * s_kh + (kw - 1 - kx) * s_kw];
        }
  std::vector<int64_t> shape;
  if (batched) shape.push_back(p.batch);
  shape.insert(shape.end(), {p.cin, p.cout_g});
  if (p.spatial == 2) shape.push_back(kh);
  shape.push_back(kw);
  const TensorView wt(packed.data(), shape);
  if (batched) batched_weight_conv(dy, wt, nullptr, dx, d);
  else grouped_conv(dy, wt, nullptr, dx, d);
  return true;
}

}  // namespace

void check_backward(const char* op, const ConvDesc& d, const TensorView& dy,
                    const std::vector<int64_t>& expected_dy, const TensorView& out,
                    const std::vector<int64_t>& expected_out) {
  if (d.activation != Activation::None) {
    fail(op, "the descriptor has a fused activation; gradients take the conv without it "
             "(apply the activation's gradient to dy first)");
  }
  check_tensor(op, "dy", dy, static_cast<int>(expected_dy.size()),
               static_cast<int>(expected_dy.size()), "the forward output's shape");
  check_shape(op, "dy", dy, expected_dy, "the forward conv's output has that shape");
  check_output(op, out, expected_out);
}

void run_conv_grad_input(const char* op, const ConvPlan& p, const TensorView& dy_in,
                         Operand dy_kind, const TensorView& w_in, Operand w_kind,
                         const TensorView& dx_in, Operand dx_kind) {
  if (grad_input_as_forward(p, dy_in, dy_kind, w_in, w_kind, dx_in, dx_kind)) return;
  const TensorView dyp = unit_stride_view(dy_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView dxp = unit_stride_view(dx_in, Scratch::Y, /*copy_in=*/false);
  HalideView hdy(op, "dy", dyp.data, activation(dyp, dy_kind, p, p.cout_g, p.cout));
  HalideView hw(op, "w", wp.data, weight(wp, w_kind, p));
  const bool shared = dx_kind == Operand::Shared;
  std::vector<Dim> dxd = activation(dxp, shared ? Operand::Unbatched : dx_kind, p, p.cin_g, p.cin);
  HalideView hdx(op, "dx", dxp.data, dxd);
  const auto kernel = shared ? batchconv_conv_grad_input_shared : batchconv_conv_grad_input;
  call_kernel(op, [&] {
    return kernel(hdy.get(), hw.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y, p.pad_x,
                  p.pad_y, hdx.get());
  });
  scatter(dxp, dx_in);
}

void run_conv_grad_weight(const char* op, const ConvPlan& p, const TensorView& x_in,
                          Operand x_kind, const TensorView& dy_in, Operand dy_kind,
                          const TensorView& dw_in, Operand dw_kind) {
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView dyp = unit_stride_view(dy_in, Scratch::W);
  const TensorView dwp = unit_stride_view(dw_in, Scratch::Y, /*copy_in=*/false);
  HalideView hx(op, "x", xp.data, activation(xp, x_kind, p, p.cin_g, p.cin));
  HalideView hdy(op, "dy", dyp.data, activation(dyp, dy_kind, p, p.cout_g, p.cout));
  HalideView hdw(op, "dw", dwp.data, weight(dwp, dw_kind, p));
  call_kernel(op, [&] {
    const int kernel_w = static_cast<int>(p.kernel.back());
    const int kernel_h = p.spatial == 2 ? static_cast<int>(p.kernel.front()) : 1;
    return batchconv_conv_grad_weight(hx.get(), hdy.get(), p.stride_x, p.stride_y, p.dilation_x,
                                      p.dilation_y, p.pad_x, p.pad_y, kernel_w, kernel_h,
                                      hdw.get());
  });
  scatter(dwp, dw_in);
}

}  // namespace batchconv::detail

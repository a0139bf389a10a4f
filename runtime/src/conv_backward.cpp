#include "conv_backward.h"

#include "batchconv_conv_grad_input.h"
#include "batchconv_conv_grad_input_shared.h"
#include "batchconv_conv_grad_weight.h"
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

// batched_weight_conv: validation, then the AOT kernel over the caller's memory.
#include "batchconv_batched_weight_conv.h"
#include "conv_plan.h"
#include "contiguous.h"
#include "validate.h"

namespace batchconv {

namespace {

constexpr const char* kOp = "batched_weight_conv";

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.batch, p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

}  // namespace

std::vector<int64_t> batched_weight_conv_output_shape(const TensorView& x, const TensorView& w,
                                                      const ConvDesc& d) {
  return output_shape(detail::plan_conv(kOp, x, 1, w, 1, d));
}

void batched_weight_conv(const TensorView& x_in, const TensorView& w_in, const TensorView* bias,
                         const TensorView& y_in, const ConvDesc& d) {
  using namespace detail;
  ConvPlan p = plan_conv(kOp, x_in, 1, w_in, 1, d);
  check_bias(kOp, bias, {p.batch, p.cout}, "(B, Cout)");
  check_output(kOp, y_in, output_shape(p));

  // Non-unit innermost strides go through a packed copy.
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView yp = unit_stride_view(y_in, Scratch::Y, /*copy_in=*/false);
  const TensorView &x = xp, &w = wp, &y = yp;

  HalideView hx(kOp, "x", x.data, activation_dims(x, 1, p.spatial, p.cin_g, p.groups));
  HalideView hw(kOp, "w", w.data, weight_dims(w, 1, p.spatial, p.cout_g, p.groups));
  const int64_t sc = bias ? bias->stride(1) : 0, sb = bias ? bias->stride(0) : 0;
  HalideView hb = bias_view(kOp, bias, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}, {p.batch, sb}});
  HalideView hy(kOp, "y", y.data, activation_dims(y, 1, p.spatial, p.cout_g, p.groups));
  call_kernel(kOp, [&] {
    return batchconv_batched_weight_conv(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y,
                                         p.dilation_x, p.dilation_y, p.pad_x, p.pad_y, p.relu,
                                         hy.get());
  });
  scatter(yp, y_in);
}

}  // namespace batchconv

// grouped_conv: validation, then the AOT kernel over the caller's memory.
#include "batchconv_grouped_conv.h"
#include "batchconv_grouped_conv_cv.h"
#include "conv_path.h"
#include "conv_plan.h"
#include "contiguous.h"
#include "validate.h"

namespace batchconv {

namespace {

constexpr const char* kOp = "grouped_conv";

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

}  // namespace

std::vector<int64_t> grouped_conv_output_shape(const TensorView& x, const TensorView& w,
                                               const ConvDesc& d) {
  return output_shape(detail::plan_conv(kOp, x, 0, w, 0, d));
}

void grouped_conv(const TensorView& x_in, const TensorView& w_in, const TensorView* bias,
                  const TensorView& y_in, const ConvDesc& d) {
  using namespace detail;
  ConvPlan p = plan_conv(kOp, x_in, 0, w_in, 0, d);
  check_bias(kOp, bias, {p.cout}, "(Cout)");
  check_output(kOp, y_in, output_shape(p));

  // Non-unit innermost strides go through a packed copy.
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView yp = unit_stride_view(y_in, Scratch::Y, /*copy_in=*/false);
  const TensorView &x = xp, &w = wp, &y = yp;

  HalideView hx(kOp, "x", x.data, activation_dims(x, 0, p.spatial, p.cin_g, p.groups));
  HalideView hw(kOp, "w", w.data, weight_dims(w, 0, p.spatial, p.cout_g, p.groups));
  std::vector<Dim> bias_dims{{p.cout_g, bias ? bias->stride(0) : 0},
                             {p.groups, p.cout_g * (bias ? bias->stride(0) : 0)}};
  HalideView hb = bias_view(kOp, bias, bias_dims);
  HalideView hy(kOp, "y", y.data, activation_dims(y, 0, p.spatial, p.cout_g, p.groups));
  const auto kernel = use_channels_in_vector(p) ? batchconv_grouped_conv_cv : batchconv_grouped_conv;
  call_kernel(kOp, [&] {
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
  scatter(yp, y_in);
}

}  // namespace batchconv

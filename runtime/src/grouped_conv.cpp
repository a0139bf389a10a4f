// grouped_conv: validation, then the AOT kernel over the caller's memory.
#include "batchconv_grouped_conv.h"
#include "batchconv_grouped_conv_channels.h"
#include "batchconv_grouped_conv_channels_blocked.h"
#include "batchconv_grouped_conv_channels_fitted.h"
#include "batchconv_grouped_conv_lanes.h"
#include "conv_path.h"
#include "conv_plan.h"
#include "contiguous.h"
#include "layout.h"
#include "packed_weights.h"
#include "tuned_kernels.h"
#include "validate.h"

namespace batchconv {

namespace {

constexpr const char* kOp = "grouped_conv";

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

// The channels and lanes families: x and y through their own strides, w
// packed with the output channel innermost (in place when it already is).
void run_channels(const detail::ConvPlan& p, const TensorView& x, const TensorView& w_in,
                  const TensorView* bias, const TensorView& y, bool lanes) {
  using namespace detail;
  if (!lanes && small_planes_run_channels_last(p, x.stride(1), y.stride(1))) {
    const TensorView xs = channels_last_scratch(x, 1, Scratch::X, true);
    const TensorView ys = channels_last_scratch(y, 1, Scratch::Y, false);
    run_channels(p, xs, w_in, bias, ys, false);
    scatter(ys, y);
    return;
  }
  const TensorView w = weights_for_channels(w_in, 0);
  const std::vector<Dim> xd = activation_dims(x, 0, p.spatial, p.cin_g, p.groups);
  const std::vector<Dim> yd = activation_dims(y, 0, p.spatial, p.cout_g, p.groups);
  HalideView hx(kOp, "x", x.data, xd);
  std::vector<Dim> wd = weight_dims(w, 0, p.spatial, p.cout_g, p.groups);
  if (wd[3].extent == 1) wd[3].stride = 1;  // one channel per group: any stride is 1
  HalideView hw(kOp, "w", w.data, wd);
  const int64_t sc = bias ? bias->stride(0) : 0;
  HalideView hb = bias_view(kOp, bias, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}});
  HalideView hy(kOp, "y", y.data, yd);
  const bool blocked = !lanes && blocked_kernel_fits(p);
  const bool fitted = !lanes && fitted_kernel_fits(p, batchconv_gen::ConvOp::Grouped);
  call_kernel(kOp, [&] {
    const ConvKernelFn kernel =
        lanes  ? conv_kernel("grouped_conv", batchconv_grouped_conv_lanes, "batchconv_grouped_conv_lanes")
        : blocked ? conv_kernel("grouped_conv", batchconv_grouped_conv_channels_blocked,
                             "batchconv_grouped_conv_channels_blocked")
        : fitted ? conv_kernel("grouped_conv", batchconv_grouped_conv_channels_fitted,
                               "batchconv_grouped_conv_channels_fitted")
               : conv_kernel("grouped_conv", batchconv_grouped_conv_channels, "batchconv_grouped_conv_channels");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
}

}  // namespace

std::vector<int64_t> grouped_conv_output_shape(const TensorView& x, const TensorView& w,
                                               const ConvDesc& d) {
  return output_shape(detail::plan_conv(kOp, x, 0, w, 0, d));
}

void grouped_conv(const TensorView& x_arg, const TensorView& w_in, const TensorView* bias,
                  const TensorView& y_arg, const ConvDesc& d) {
  using namespace detail;
  const TensorView x_in = resolve_layout(kOp, "x", x_arg, 1);
  const TensorView y_in = resolve_layout(kOp, "y", y_arg, 1);
  ConvPlan p = plan_conv(kOp, x_in, 0, w_in, 0, d);
  check_bias(kOp, bias, {p.cout}, "(Cout)");
  check_output(kOp, y_in, output_shape(p));
  check_no_overlap(kOp, y_in, {{"x", &x_in}, {"w", &w_in}, {"bias", bias}});

  const batchconv_gen::ConvFamily family =
      conv_family(p, batchconv_gen::ConvOp::Grouped, x_in.stride(1), y_in.stride(1));
  if (family != batchconv_gen::ConvFamily::Rows) {
    run_channels(p, x_in, w_in, bias, y_in, family == batchconv_gen::ConvFamily::Lanes);
    return;
  }

  // The rows family. Non-unit innermost strides go through a packed copy.
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
  call_kernel(kOp, [&] {
    const ConvKernelFn kernel =
        conv_kernel("grouped_conv", batchconv_grouped_conv, "batchconv_grouped_conv");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
  scatter(yp, y_in);
}

void grouped_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                  const TensorView& y, const ConvDesc& d) {
  grouped_conv(x, detail::packed_view(kOp, w, d.groups, false), bias, y, d);
}

}  // namespace batchconv

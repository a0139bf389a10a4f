// broadcast_input_conv: validation, then the AOT kernel over the caller's
// memory; the output layout is chosen by the strides of the y view.
#include "batchconv_broadcast_input_conv.h"
#include "batchconv_broadcast_input_conv_channels.h"
#include "batchconv_broadcast_input_conv_channels_blocked.h"
#include "batchconv_broadcast_input_conv_channels_fitted.h"
#include "batchconv_grouped_conv.h"
#include "conv_path.h"
#include "conv_plan.h"
#include "contiguous.h"
#include "layout.h"
#include "packed_weights.h"
#include "tuned_kernels.h"
#include "validate.h"

namespace batchconv {

namespace {

constexpr const char* kOp = "broadcast_input_conv";

std::vector<int64_t> output_shape(const detail::ConvPlan& p, BroadcastLayout layout) {
  std::vector<int64_t> s;
  if (layout == BroadcastLayout::Concatenated) s = {p.n, p.batch * p.cout};
  else s = {p.batch, p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

// y in the kernel's (w, h, co, g, n, b) order.
std::vector<detail::Dim> output_dims(const detail::ConvPlan& p, const TensorView& y,
                                     BroadcastLayout layout) {
  std::vector<detail::Dim> yd;
  const int r = y.rank();
  yd.push_back({y.shape[r - 1], y.stride(r - 1)});
  yd.push_back(p.spatial == 2 ? detail::Dim{y.shape[r - 2], y.stride(r - 2)} : detail::Dim{1, 0});
  if (layout == BroadcastLayout::Concatenated) {  // (N, B*Cout, ...): channel = b*Cout + g*Cout_g + co
    const int64_t sc_y = y.stride(1);
    yd.push_back({p.cout_g, sc_y});
    yd.push_back({p.groups, p.cout_g * sc_y});
    yd.push_back({p.n, y.stride(0)});
    yd.push_back({p.batch, p.cout * sc_y});
  } else {  // (B, N, Cout, ...)
    const int64_t sc_y = y.stride(2);
    yd.push_back({p.cout_g, sc_y});
    yd.push_back({p.groups, p.cout_g * sc_y});
    yd.push_back({p.n, y.stride(1)});
    yd.push_back({p.batch, y.stride(0)});
  }
  return yd;
}

// The channels family: x and y through their own strides (one pass over
// each task's input for all banks), w packed with the output channel
// innermost (in place when it already is).
void run_channels(const detail::ConvPlan& p, const TensorView& x, const TensorView& w_in,
                  const TensorView* bias, const TensorView& y, BroadcastLayout layout) {
  using namespace detail;
  const TensorView w = weights_for_channels(w_in, 1);
  const std::vector<Dim> xd = activation_dims(x, 0, p.spatial, p.cin_g, p.groups);
  const std::vector<Dim> yd = output_dims(p, y, layout);
  HalideView hx(kOp, "x", x.data, xd);
  std::vector<Dim> wd = weight_dims(w, 1, p.spatial, p.cout_g, p.groups);
  if (wd[3].extent == 1) wd[3].stride = 1;  // one channel per group: any stride is 1
  HalideView hw(kOp, "w", w.data, wd);
  const int64_t sc = bias ? bias->stride(1) : 0, sb = bias ? bias->stride(0) : 0;
  HalideView hb = bias_view(kOp, bias, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}, {p.batch, sb}});
  HalideView hy(kOp, "y", y.data, yd);
  const bool blocked = blocked_kernel_fits(p);
  const bool fitted = fitted_kernel_fits(p, batchconv_gen::ConvOp::BroadcastInput);
  call_kernel(kOp, [&] {
    const ConvKernelFn kernel =
        blocked ? conv_kernel("broadcast_input_conv", batchconv_broadcast_input_conv_channels_blocked,
                           "batchconv_broadcast_input_conv_channels_blocked")
        : fitted ? conv_kernel("broadcast_input_conv", batchconv_broadcast_input_conv_channels_fitted,
                               "batchconv_broadcast_input_conv_channels_fitted")
             : conv_kernel("broadcast_input_conv", batchconv_broadcast_input_conv_channels,
                           "batchconv_broadcast_input_conv_channels");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
}

// The groups = 1, Concatenated case through the dense grouped_conv kernel:
// w (B, Cout, Cin, ...) viewed as (B*Cout, Cin, ...), y (N, B*Cout, ...).
void run_as_dense_conv(const detail::ConvPlan& p, const TensorView& x, const TensorView& w,
                       const TensorView* bias, const TensorView& y) {
  using namespace detail;
  const int64_t cout = p.batch * p.cout;
  std::vector<Dim> wd = weight_dims(w, 1, p.spatial, p.cout_g, 1);
  wd[3] = {cout, w.stride(1)};  // co over all banks
  wd.pop_back();                // no b
  HalideView hw(kOp, "w", w.data, wd);
  HalideView hx(kOp, "x", x.data, activation_dims(x, 0, p.spatial, p.cin, 1));
  const int64_t sc = bias ? bias->stride(1) : 0;
  HalideView hb = bias_view(kOp, bias, {{cout, sc}, {1, cout * sc}});
  HalideView hy(kOp, "y", y.data, activation_dims(y, 0, p.spatial, cout, 1));
  call_kernel(kOp, [&] {
    const ConvKernelFn kernel =
        conv_kernel("grouped_conv", batchconv_grouped_conv, "batchconv_grouped_conv");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y,
                                  p.dilation_x, p.dilation_y, p.pad_x, p.pad_y, p.relu, hy.get());
  });
}

}  // namespace

std::vector<int64_t> broadcast_input_conv_output_shape(const TensorView& x, const TensorView& w,
                                                       const ConvDesc& d, BroadcastLayout layout) {
  return output_shape(detail::plan_conv(kOp, x, 0, w, 1, d), layout);
}

void broadcast_input_conv(const TensorView& x_arg, const TensorView& w_in, const TensorView* bias,
                          const TensorView& y_arg, const ConvDesc& d, BroadcastLayout layout) {
  using namespace detail;
  const int y_channel = layout == BroadcastLayout::Concatenated ? 1 : 2;
  const TensorView x_in = resolve_layout(kOp, "x", x_arg, 1);
  const TensorView y_in = resolve_layout(kOp, "y", y_arg, y_channel);
  ConvPlan p = plan_conv(kOp, x_in, 0, w_in, 1, d);
  check_bias(kOp, bias, {p.batch, p.cout}, "(B, Cout)");
  check_output(kOp, y_in, output_shape(p, layout));
  check_no_overlap(kOp, y_in, {{"x", &x_in}, {"w", &w_in}, {"bias", bias}});

  if (conv_family(p, batchconv_gen::ConvOp::BroadcastInput, x_in.stride(1), y_in.stride(y_channel),
                  layout == BroadcastLayout::Batched) == batchconv_gen::ConvFamily::Channels) {
    run_channels(p, x_in, w_in, bias, y_in, layout);
    return;
  }

  // The rows family. Non-unit innermost strides go through a packed copy.
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView yp = unit_stride_view(y_in, Scratch::Y, /*copy_in=*/false);
  const TensorView &x = xp, &w = wp, &y = yp;

  if (layout == BroadcastLayout::Concatenated && p.groups == 1 &&
      (p.batch == 1 || w.stride(0) == p.cout * w.stride(1)) &&
      (!bias || p.batch == 1 || bias->stride(0) == p.cout * bias->stride(1))) {
    // Seed 1's case: B dense banks over one x with the concatenated output
    // are exactly one dense conv with B*Cout output channels.
    run_as_dense_conv(p, x, w, bias, y);
    scatter(yp, y_in);
    return;
  }
  HalideView hx(kOp, "x", x.data, activation_dims(x, 0, p.spatial, p.cin_g, p.groups));
  HalideView hw(kOp, "w", w.data, weight_dims(w, 1, p.spatial, p.cout_g, p.groups));
  const int64_t sc = bias ? bias->stride(1) : 0, sb = bias ? bias->stride(0) : 0;
  HalideView hb = bias_view(kOp, bias, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}, {p.batch, sb}});

  HalideView hy(kOp, "y", y.data, output_dims(p, y, layout));
  call_kernel(kOp, [&] {
    const ConvKernelFn kernel = conv_kernel("broadcast_input_conv", batchconv_broadcast_input_conv,
                                            "batchconv_broadcast_input_conv");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y,
                                          p.dilation_x, p.dilation_y, p.pad_x, p.pad_y, p.relu,
                                          hy.get());
  });
  scatter(yp, y_in);
}

void broadcast_input_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                          const TensorView& y, const ConvDesc& d, BroadcastLayout layout) {
  broadcast_input_conv(x, detail::packed_view(kOp, w, d.groups, true), bias, y, d, layout);
}

}  // namespace batchconv

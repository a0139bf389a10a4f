// batched_weight_conv: validation, then the AOT kernel over the caller's memory.
#include "batchconv_batched_weight_conv.h"
#include "batchconv_batched_weight_conv_channels.h"
#include "batchconv_batched_weight_conv_channels_blocked.h"
#include "batchconv_batched_weight_conv_channels_fitted.h"
#include "batchconv_batched_weight_conv_lanes.h"
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

constexpr const char* kOp = "batched_weight_conv";

// B = 1 runs the grouped_conv kernel on the one slice, so it costs exactly a
// plain conv. Every B > 1 runs the batched kernel (b is one more parallel
// loop of the same schedule). Until 2026-11-30 large slices ran one by one
// through grouped_conv because the batched schedule was slower there; since
// tasks cover whole row chunks the two measure the same (seed 3: 141 against
// 138 ms, MAML with B = 8: 300 against 298-305 ms, seed 2 with G = 2: 7.8
// against 7.8-8.5 ms; batchconv-bench, same machine, back to back).

// Slice b of a tensor with a leading B dimension.
TensorView slice(const TensorView& t, int64_t b) {
  TensorView s(t.data + b * t.stride(0), {t.shape.begin() + 1, t.shape.end()});
  for (int i = 1; i < t.rank(); i++) s.strides.push_back(t.stride(i));
  return s;
}

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.batch, p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

// The channels and lanes families: x and y through their own strides, w
// packed with the output channel innermost (in place when it already is).
// B = 1 runs the grouped kernel on the one slice, as the rows family does.
void run_channels(const detail::ConvPlan& p, const TensorView& x, const TensorView& w_in,
                  const TensorView* bias, const TensorView& y, bool lanes) {
  using namespace detail;
  if (!lanes && small_planes_run_channels_last(p, x.stride(2), y.stride(2))) {
    const TensorView xs = channels_last_scratch(x, 2, Scratch::X, true);
    const TensorView ys = channels_last_scratch(y, 2, Scratch::Y, false);
    run_channels(p, xs, w_in, bias, ys, false);
    scatter(ys, y);
    return;
  }
  const TensorView w = weights_for_channels(w_in, 1);
  const int64_t sc = bias ? bias->stride(1) : 0, sb = bias ? bias->stride(0) : 0;
  const int lead = p.batch == 1 ? 0 : 1;
  const TensorView xs = lead ? x : slice(x, 0), ws = lead ? w : slice(w, 0), ys = lead ? y : slice(y, 0);
  std::vector<Dim> wd = weight_dims(ws, lead, p.spatial, p.cout_g, p.groups);
  if (wd[3].extent == 1) wd[3].stride = 1;  // one channel per group: any stride is 1
  const std::vector<Dim> xd = activation_dims(xs, lead, p.spatial, p.cin_g, p.groups);
  const std::vector<Dim> yd = activation_dims(ys, lead, p.spatial, p.cout_g, p.groups);
  HalideView hx(kOp, "x", xs.data, xd);
  HalideView hw(kOp, "w", ws.data, wd);
  std::vector<Dim> bd{{p.cout_g, sc}, {p.groups, p.cout_g * sc}};
  if (lead) bd.push_back({p.batch, sb});
  HalideView hb = bias_view(kOp, bias, bd);
  HalideView hy(kOp, "y", ys.data, yd);
  const bool blocked = !lanes && blocked_kernel_fits(p);
  const bool fitted = !lanes && fitted_kernel_fits(p, batchconv_gen::ConvOp::BatchedWeight);
  const ConvKernelFn kernel =
      lanes ? (lead ? conv_kernel("batched_weight_conv", batchconv_batched_weight_conv_lanes,
                                  "batchconv_batched_weight_conv_lanes")
                    : conv_kernel("grouped_conv", batchconv_grouped_conv_lanes, "batchconv_grouped_conv_lanes"))
      : blocked ? (lead ? conv_kernel("batched_weight_conv", batchconv_batched_weight_conv_channels_blocked,
                                   "batchconv_batched_weight_conv_channels_blocked")
                     : conv_kernel("grouped_conv", batchconv_grouped_conv_channels_blocked,
                                   "batchconv_grouped_conv_channels_blocked"))
      : fitted ? (lead ? conv_kernel("batched_weight_conv", batchconv_batched_weight_conv_channels_fitted,
                                     "batchconv_batched_weight_conv_channels_fitted")
                       : conv_kernel("grouped_conv", batchconv_grouped_conv_channels_fitted,
                                     "batchconv_grouped_conv_channels_fitted"))
      : lead ? conv_kernel("batched_weight_conv", batchconv_batched_weight_conv_channels,
                           "batchconv_batched_weight_conv_channels")
             : conv_kernel("grouped_conv", batchconv_grouped_conv_channels, "batchconv_grouped_conv_channels");
  call_kernel(kOp, [&] {
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
}

// A 1x1 conv (unit stride, no padding, one group, no bias or ReLU) on small
// planes is B matrix products per image n, y[b, n] (Cout, P) = w[b] (Cout,
// Cin) x[b, n] (Cin, P): run as batched_linear calls, one per n, reading x,
// w and y in place. The conv kernels' tiles do not fit such planes
// (population.py's 32 -> 8 layer on 8x8 maps, B = 256, N = 16: 163 ms
// through the conv kernels, 4.1 ms as products). Not reported by
// last_conv_kernel() / last_conv_family(). Returns false where
// it does not apply.
bool run_pointwise_as_products(const detail::ConvPlan& p, const TensorView& x, const TensorView& w,
                               const TensorView* bias, const TensorView& y) {
  constexpr int64_t kMaxPlane = 1024;
  if (p.batch < 2 || p.groups != 1 || bias || p.relu || p.stride_x != 1 || p.stride_y != 1 ||
      p.pad_x != 0 || p.pad_y != 0 || p.in != p.out) {
    return false;
  }
  for (int64_t k : p.kernel) {
    if (k != 1) return false;
  }
  const int64_t plane = p.spatial == 2 ? p.out.front() * p.out.back() : p.out.back();
  if (plane > kMaxPlane) return false;
  // The plane must be one unit-stride run in x and y.
  auto dense_plane = [&](const TensorView& t) {
    const int r = t.rank();
    return t.stride(r - 1) == 1 && (p.spatial == 1 || t.stride(r - 2) == t.shape[r - 1]);
  };
  if (!dense_plane(x) || !dense_plane(y)) return false;
  const TensorView wm(w.data, {p.batch, p.cout, p.cin}, {w.stride(0), w.stride(1), w.stride(2)});
  for (int64_t n = 0; n < p.n; ++n) {
    const TensorView xm(x.data + n * x.stride(1), {p.batch, p.cin, plane}, {x.stride(0), x.stride(2), 1});
    const TensorView ym(y.data + n * y.stride(1), {p.batch, p.cout, plane}, {y.stride(0), y.stride(2), 1});
    batched_linear(wm, xm, nullptr, ym);
  }
  return true;
}

}  // namespace

std::vector<int64_t> batched_weight_conv_output_shape(const TensorView& x, const TensorView& w,
                                                      const ConvDesc& d) {
  return output_shape(detail::plan_conv(kOp, x, 1, w, 1, d));
}

void batched_weight_conv(const TensorView& x_arg, const TensorView& w_in, const TensorView* bias,
                         const TensorView& y_arg, const ConvDesc& d) {
  using namespace detail;
  const TensorView x_in = resolve_layout(kOp, "x", x_arg, 2);
  const TensorView y_in = resolve_layout(kOp, "y", y_arg, 2);
  ConvPlan p = plan_conv(kOp, x_in, 1, w_in, 1, d);
  check_bias(kOp, bias, {p.batch, p.cout}, "(B, Cout)");
  check_output(kOp, y_in, output_shape(p));
  check_no_overlap(kOp, y_in, {{"x", &x_in}, {"w", &w_in}, {"bias", bias}});

  if (schedule_family() == ScheduleFamily::Auto && run_pointwise_as_products(p, x_in, w_in, bias, y_in)) return;
  const batchconv_gen::ConvFamily family =
      conv_family(p, batchconv_gen::ConvOp::BatchedWeight, x_in.stride(2), y_in.stride(2));
  if (family != batchconv_gen::ConvFamily::Rows) {
    run_channels(p, x_in, w_in, bias, y_in, family == batchconv_gen::ConvFamily::Lanes);
    return;
  }

  // The rows family. Non-unit innermost strides go through a packed copy.
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView yp = unit_stride_view(y_in, Scratch::Y, /*copy_in=*/false);
  const TensorView &x = xp, &w = wp, &y = yp;

  HalideView hx(kOp, "x", x.data, activation_dims(x, 1, p.spatial, p.cin_g, p.groups));
  HalideView hw(kOp, "w", w.data, weight_dims(w, 1, p.spatial, p.cout_g, p.groups));
  const int64_t sc = bias ? bias->stride(1) : 0, sb = bias ? bias->stride(0) : 0;
  HalideView hb = bias_view(kOp, bias, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}, {p.batch, sb}});
  HalideView hy(kOp, "y", y.data, activation_dims(y, 1, p.spatial, p.cout_g, p.groups));
  // The views above also check the whole batch against 32-bit indexing.
  if (p.batch == 1) {
    const int64_t b = 0;
    const TensorView xb = slice(x, b), wb = slice(w, b), yb = slice(y, b);
    HalideView sx(kOp, "x", xb.data, activation_dims(xb, 0, p.spatial, p.cin_g, p.groups));
    HalideView sw(kOp, "w", wb.data, weight_dims(wb, 0, p.spatial, p.cout_g, p.groups));
    const TensorView* bb = bias;
    TensorView bias_b;
    if (bias) {
      bias_b = slice(*bias, b);
      bb = &bias_b;
    }
    HalideView sbias = bias_view(kOp, bb, {{p.cout_g, sc}, {p.groups, p.cout_g * sc}});
    HalideView sy(kOp, "y", yb.data, activation_dims(yb, 0, p.spatial, p.cout_g, p.groups));
    call_kernel(kOp, [&] {
      const ConvKernelFn kernel =
          conv_kernel("grouped_conv", batchconv_grouped_conv, "batchconv_grouped_conv");
      return kernel(sx.get(), sw.get(), sbias.get(), p.stride_x, p.stride_y, p.dilation_x,
                    p.dilation_y, p.pad_x, p.pad_y, p.relu, sy.get());
    });
    scatter(yp, y_in);
    return;
  }

  call_kernel(kOp, [&] {
    const ConvKernelFn kernel = conv_kernel("batched_weight_conv", batchconv_batched_weight_conv,
                                            "batchconv_batched_weight_conv");
    return kernel(hx.get(), hw.get(), hb.get(), p.stride_x, p.stride_y, p.dilation_x, p.dilation_y,
                  p.pad_x, p.pad_y, p.relu, hy.get());
  });
  scatter(yp, y_in);
}

void batched_weight_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                         const TensorView& y, const ConvDesc& d) {
  batched_weight_conv(x, detail::packed_view(kOp, w, d.groups, true), bias, y, d);
}

}  // namespace batchconv

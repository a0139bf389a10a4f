// batched_linear: validation, then the AOT kernel variant the chooser picks
// for the shape (generators/linear_chooser.h); a shared x (N, K) is passed
// with stride 0 along B (no copy).
#include <atomic>

#include "batchconv_batched_linear.h"
#include "batchconv_batched_linear_panels.h"
#include "batchconv_batched_linear_weights.h"
#include "conv_path.h"
#include "contiguous.h"
#include "halide_view.h"
#include "linear_chooser.h"
#include "validate.h"

namespace batchconv {

namespace {
constexpr const char* kOp = "batched_linear";
std::atomic<int> g_linear_kernel{static_cast<int>(LinearKernel::Auto)};
thread_local const char* t_last_linear = "none";

batchconv_gen::LinearPanels linear_panels(int64_t n, int64_t k, int64_t m) {
  using batchconv_gen::LinearPanels;
  switch (static_cast<LinearKernel>(g_linear_kernel.load())) {
    case LinearKernel::InPlace: return LinearPanels::None;
    case LinearKernel::WeightPanels: return LinearPanels::Weights;
    case LinearKernel::AllPanels: return LinearPanels::All;
    default: return batchconv_gen::choose_linear_panels(n, k, m, detail::variant_facts());
  }
}
}  // namespace

void set_linear_kernel(LinearKernel k) { g_linear_kernel = static_cast<int>(k); }
std::string last_linear_kernel() { return t_last_linear; }

void batched_linear(const TensorView& x_in, const TensorView& w_in, const TensorView* bias,
                    const TensorView& y_in, Activation act) {
  using namespace detail;
  check_tensor(kOp, "x", x_in, 2, 3, "(B, N, K) or a shared (N, K)");
  check_tensor(kOp, "w", w_in, 3, 3, "(B, K, M)");
  const bool shared = x_in.rank() == 2;
  const int64_t b = w_in.shape[0], k = w_in.shape[1], m = w_in.shape[2];
  const int64_t n = x_in.shape[shared ? 0 : 1];
  if (!shared && x_in.shape[0] != b) {
    check_shape(kOp, "w", w_in, {x_in.shape[0], x_in.shape[2], m},
                "x " + shape_string(x_in.shape) + " has B=" + std::to_string(x_in.shape[0]) +
                    " and needs B=" + std::to_string(x_in.shape[0]) + " weight matrices");
  }
  const int64_t xk = x_in.shape[x_in.rank() - 1];
  if (xk != k) {
    check_shape(kOp, "w", w_in, {b, xk, m},
                "x " + shape_string(x_in.shape) + " has K=" + std::to_string(xk) + " features");
  }
  if (bias) {
    check_tensor(kOp, "bias", *bias, 2, 2, "(B, M)");
    check_shape(kOp, "bias", *bias, {b, m}, "w " + shape_string(w_in.shape) + " gives (B, M)");
  }
  check_output(kOp, y_in, {b, n, m});
  check_no_overlap(kOp, y_in, {{"x", &x_in}, {"w", &w_in}, {"bias", bias}});
  check_activation(kOp, act);

  // Non-unit innermost strides go through a packed copy.
  const TensorView xp = unit_stride_view(x_in, Scratch::X);
  const TensorView wp = unit_stride_view(w_in, Scratch::W);
  const TensorView yp = unit_stride_view(y_in, Scratch::Y, /*copy_in=*/false);
  const TensorView &x = xp, &w = wp, &y = yp;

  std::vector<Dim> xd{{k, x.stride(x.rank() - 1)}, {n, x.stride(x.rank() - 2)},
                      {b, shared ? 0 : x.stride(0)}};
  HalideView hx(kOp, "x", x.data, xd);
  HalideView hw(kOp, "w", w.data, {{m, w.stride(2)}, {k, w.stride(1)}, {b, w.stride(0)}});
  HalideView hb = bias_view(kOp, bias, {{m, bias ? bias->stride(1) : 0}, {b, bias ? bias->stride(0) : 0}});
  HalideView hy(kOp, "y", y.data, {{m, y.stride(2)}, {n, y.stride(1)}, {b, y.stride(0)}});
  const bool relu = act == Activation::ReLU;
  const batchconv_gen::LinearPanels panels = linear_panels(n, k, m);
  call_kernel(kOp, [&] {
    switch (panels) {
      case batchconv_gen::LinearPanels::Weights:
        t_last_linear = "weight_panels";
        return batchconv_batched_linear_weights(hx.get(), hw.get(), hb.get(), relu, hy.get());
      case batchconv_gen::LinearPanels::All:
        t_last_linear = "all_panels";
        return batchconv_batched_linear_panels(hx.get(), hw.get(), hb.get(), relu, hy.get());
      default:
        t_last_linear = "in_place";
        return batchconv_batched_linear(hx.get(), hw.get(), hb.get(), relu, hy.get());
    }
  });
  scatter(yp, y_in);
}

}  // namespace batchconv

// batched_linear: validation, then the AOT kernel; a shared x (N, K) is
// passed with stride 0 along B (no copy).
#include "batchconv_batched_linear.h"
#include "halide_view.h"
#include "validate.h"

namespace batchconv {

namespace {
constexpr const char* kOp = "batched_linear";
}  // namespace

void batched_linear(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const TensorView& y, Activation act) {
  using namespace detail;
  check_tensor(kOp, "x", x, 2, 3, "(B, N, K) or a shared (N, K)");
  check_tensor(kOp, "w", w, 3, 3, "(B, K, M)");
  const bool shared = x.rank() == 2;
  const int64_t b = w.shape[0], k = w.shape[1], m = w.shape[2];
  const int64_t n = x.shape[shared ? 0 : 1];
  if (!shared && x.shape[0] != b) {
    check_shape(kOp, "w", w, {x.shape[0], x.shape[2], m},
                "x " + shape_string(x.shape) + " has B=" + std::to_string(x.shape[0]) +
                    " and needs B=" + std::to_string(x.shape[0]) + " weight matrices");
  }
  const int64_t xk = x.shape[x.rank() - 1];
  if (xk != k) {
    check_shape(kOp, "w", w, {b, xk, m},
                "x " + shape_string(x.shape) + " has K=" + std::to_string(xk) + " features");
  }
  if (bias) {
    check_tensor(kOp, "bias", *bias, 2, 2, "(B, M)", /*unit_last_stride=*/false);
    check_shape(kOp, "bias", *bias, {b, m}, "w " + shape_string(w.shape) + " gives (B, M)");
  }
  check_output(kOp, y, {b, n, m});

  std::vector<Dim> xd{{k, x.stride(x.rank() - 1)}, {n, x.stride(x.rank() - 2)},
                      {b, shared ? 0 : x.stride(0)}};
  HalideView hx(kOp, "x", x.data, xd);
  HalideView hw(kOp, "w", w.data, {{m, w.stride(2)}, {k, w.stride(1)}, {b, w.stride(0)}});
  HalideView hb = bias_view(kOp, bias, {{m, bias ? bias->stride(1) : 0}, {b, bias ? bias->stride(0) : 0}});
  HalideView hy(kOp, "y", y.data, {{m, y.stride(2)}, {n, y.stride(1)}, {b, y.stride(0)}});
  const bool relu = act == Activation::ReLU;
  call_kernel(kOp, [&] {
    return batchconv_batched_linear(hx.get(), hw.get(), hb.get(), relu, hy.get());
  });
}

}  // namespace batchconv

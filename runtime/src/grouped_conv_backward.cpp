// grouped_conv's gradients: validation, then the gradient kernels (one slice).
#include "batchconv/backward.h"
#include "conv_backward.h"
#include "validate.h"

namespace batchconv {

namespace {

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

}  // namespace

void grouped_conv_backward_input(const TensorView& dy, const TensorView& w, const TensorView& dx,
                                 const ConvDesc& d) {
  using namespace detail;
  constexpr const char* kOp = "grouped_conv_backward_input";
  // dx has the forward x's shape; planning the forward call checks it against w.
  ConvPlan p = plan_conv(kOp, dx, 0, w, 0, d);
  check_backward(kOp, d, dy, output_shape(p), dx, dx.shape);
  run_conv_grad_input(kOp, p, dy, Operand::Unbatched, w, Operand::Unbatched, dx, Operand::Unbatched);
}

void grouped_conv_backward_weight(const TensorView& x, const TensorView& dy, const TensorView& dw,
                                  const ConvDesc& d) {
  using namespace detail;
  constexpr const char* kOp = "grouped_conv_backward_weight";
  ConvPlan p = plan_conv(kOp, x, 0, dw, 0, d);
  check_backward(kOp, d, dy, output_shape(p), dw, dw.shape);
  run_conv_grad_weight(kOp, p, x, Operand::Unbatched, dy, Operand::Unbatched, dw, Operand::Unbatched);
}

}  // namespace batchconv

// batched_weight_conv's gradients: validation, then the gradient kernels
// with b as one more parallel loop.
#include "batchconv/backward.h"
#include "conv_backward.h"
#include "validate.h"

namespace batchconv {

namespace {

std::vector<int64_t> output_shape(const detail::ConvPlan& p) {
  std::vector<int64_t> s{p.batch, p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

}  // namespace

void batched_weight_conv_backward_input(const TensorView& dy, const TensorView& w,
                                        const TensorView& dx, const ConvDesc& d) {
  using namespace detail;
  constexpr const char* kOp = "batched_weight_conv_backward_input";
  // dx has the forward x's shape; planning the forward call checks it against w.
  ConvPlan p = plan_conv(kOp, dx, 1, w, 1, d);
  check_backward(kOp, d, dy, output_shape(p), dx, dx.shape);
  run_conv_grad_input(kOp, p, dy, Operand::Batched, w, Operand::Batched, dx, Operand::Batched);
}

void batched_weight_conv_backward_weight(const TensorView& x, const TensorView& dy,
                                         const TensorView& dw, const ConvDesc& d) {
  using namespace detail;
  constexpr const char* kOp = "batched_weight_conv_backward_weight";
  ConvPlan p = plan_conv(kOp, x, 1, dw, 1, d);
  check_backward(kOp, d, dy, output_shape(p), dw, dw.shape);
  run_conv_grad_weight(kOp, p, x, Operand::Batched, dy, Operand::Batched, dw, Operand::Batched);
}

}  // namespace batchconv

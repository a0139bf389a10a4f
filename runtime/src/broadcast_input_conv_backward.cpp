// broadcast_input_conv's gradients: dx sums the B banks' transposed convs
// (one kernel call, no per-bank temporaries); dw reads the shared x with
// stride 0 along B. dy may be in either output layout.
#include "batchconv/backward.h"
#include "conv_backward.h"
#include "validate.h"

namespace batchconv {

namespace {

std::vector<int64_t> output_shape(const detail::ConvPlan& p, BroadcastLayout layout) {
  std::vector<int64_t> s;
  if (layout == BroadcastLayout::Concatenated) s = {p.n, p.batch * p.cout};
  else s = {p.batch, p.n, p.cout};
  s.insert(s.end(), p.out.begin(), p.out.end());
  return s;
}

detail::Operand dy_kind(BroadcastLayout layout) {
  return layout == BroadcastLayout::Concatenated ? detail::Operand::Concat : detail::Operand::Batched;
}

}  // namespace

void broadcast_input_conv_backward_input(const TensorView& dy, const TensorView& w,
                                         const TensorView& dx, const ConvDesc& d,
                                         BroadcastLayout layout) {
  using namespace detail;
  constexpr const char* kOp = "broadcast_input_conv_backward_input";
  ConvPlan p = plan_conv(kOp, dx, 0, w, 1, d);
  check_backward(kOp, d, dy, output_shape(p, layout), dx, dx.shape);
  run_conv_grad_input(kOp, p, dy, dy_kind(layout), w, Operand::Batched, dx, Operand::Shared);
}

void broadcast_input_conv_backward_weight(const TensorView& x, const TensorView& dy,
                                          const TensorView& dw, const ConvDesc& d,
                                          BroadcastLayout layout) {
  using namespace detail;
  constexpr const char* kOp = "broadcast_input_conv_backward_weight";
  ConvPlan p = plan_conv(kOp, x, 0, dw, 1, d);
  check_backward(kOp, d, dy, output_shape(p, layout), dw, dw.shape);
  run_conv_grad_weight(kOp, p, x, Operand::Shared, dy, dy_kind(layout), dw, Operand::Batched);
}

}  // namespace batchconv

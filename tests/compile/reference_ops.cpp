// run_reference(): the reference interpreter, which runs every op the
// compiler lowers (activations, BatchNormalization, pools and softmax live in
// graph/interpreter/kernels_nn.cpp beside the rest).
#include "compile_test_support.h"

namespace batchconv::testing {

interp::TensorMap run_reference(const ir::Model& model, const interp::TensorMap& inputs) {
  return interp::run(model, inputs);
}

}  // namespace batchconv::testing

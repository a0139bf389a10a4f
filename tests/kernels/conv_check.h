// Runs one swept case of a convolution op through the runtime and checks it
// against the double-precision reference.
#pragma once

#include "conv_cases.h"

namespace batchconv::test {

// Fresh random x, w, bias; y poisoned; calls the op; checks y against the
// reference, that y's surroundings and the inputs are untouched, and that the
// runtime's *_output_shape helper agrees with the reference's shape.
void check_conv_case(ConvOp op, const ConvCase& c);

}  // namespace batchconv::test

// Internal: which schedule family runs a planned conv call. The decision is
// the project's one chooser (generators/conv_chooser.h) on the facts of the
// kernel variant Halide picked for this machine; set_schedule_family()
// overrides it.
#pragma once

#include <string>

#include "conv_chooser.h"
#include "conv_plan.h"

namespace batchconv::detail {

batchconv_gen::ConvProblem conv_problem(const ConvPlan& p, batchconv_gen::ConvOp op,
                                        bool x_channels_last, bool y_channels_last);

// True when the channels family runs this call (and records the family for
// last_conv_family()). `x_channel_stride` / `y_channel_stride`: the
// channel axes' strides (1: channels last); `y_banks_outer`: a
// broadcast-input y laid out (B, N, Cout, ...). A tuned kernel registered
// for the call's shape (tuned_kernels.h) decides the family, unless
// set_schedule_family() forced one.
bool use_channels_family(const ConvPlan& p, batchconv_gen::ConvOp op, int64_t x_channel_stride,
                         int64_t y_channel_stride, bool y_banks_outer = false);

}  // namespace batchconv::detail

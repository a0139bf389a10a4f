// Internal: which schedule family runs a planned conv call. The decision is
// the project's one chooser (generators/conv_chooser.h) on the facts of the
// kernel variant Halide picked for this machine; set_schedule_family()
// overrides it.
#pragma once

#include <string>

#include "conv_chooser.h"
#include "conv_plan.h"

namespace batchconv::detail {

// Facts of the kernel variant Halide picked for this machine (vector width,
// registers, caches), for the choosers.
const batchconv_gen::TargetFacts& variant_facts();

batchconv_gen::ConvProblem conv_problem(const ConvPlan& p, batchconv_gen::ConvOp op,
                                        bool x_channels_last, bool y_channels_last);

// The family that runs this call: Rows, Channels or Lanes (recorded for
// last_conv_family()). `x_channel_stride` / `y_channel_stride`: the
// channel axes' strides (1: channels last); `y_banks_outer`: a
// broadcast-input y laid out (B, N, Cout, ...). A tuned kernel registered
// for the call's shape (tuned_kernels.h) decides the family, unless
// set_schedule_family() forced one. Lanes is only returned where its AOT
// kernels run the call (lanes_fits); forced elsewhere, the rows family runs.
batchconv_gen::ConvFamily conv_family(const ConvPlan& p, batchconv_gen::ConvOp op, int64_t x_channel_stride,
                                      int64_t y_channel_stride, bool y_banks_outer = false);

// Whether the lanes family's AOT kernels run this call: a grouped or
// batched-weight conv with a vector's worth of output channels across its
// groups and a Cout_g the kernels have their own code for (a divisor of
// the vector below it). The kernels' general case (other Cout_g) fails
// Halide's bounds checks (a read past the last group) and is not called.
bool lanes_fits(const ConvPlan& p, batchconv_gen::ConvOp op);

// Whether the channels family's blocked kernels (*_channels_blocked: x
// staged in blocks of a vector of channels, register tiles stored straight
// into y, any strides) run this call: at least a vector of input channels
// per group (a block of fewer would mostly copy padding). Fastest on
// channels-last x and y (dense staging copies and stores); NCHW ones are
// transposed into the blocks and scattered from the tiles.
bool blocked_kernel_fits(const ConvPlan& p);

// Whether the channels family's kernels with tiles fitted to the row
// (*_channels_fitted, ch_fit_rows=1) run this call: where the blocked
// kernels do not and fitted_row_columns() gives the default point's tiles
// on this variant a row they divide (seed 2: 3 -> 64 channels, 7x7, rows
// of 22 columns in 2 x 11 tiles instead of 4 x 6 ones computing 24).
bool fitted_kernel_fits(const ConvPlan& p, batchconv_gen::ConvOp op);

// Whether a blocked-kernel call whose x and y are both NCHW runs through
// channels-last scratch copies of them instead: small planes (MAML's 14x14
// to 3x3 maps), where the kernel's transposed staging and scattered stores
// cost several times the two copies.
bool small_planes_run_channels_last(const ConvPlan& p, int64_t x_channel_stride, int64_t y_channel_stride);

}  // namespace batchconv::detail

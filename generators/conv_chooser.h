// The one chooser: for a conv problem and a target, which schedule family
// and which point of the space run. The runtime calls it for every call
// (choosing between the AOT libraries built for each family) and the model
// compiler for every conv it lowers (with each target of a multi-target
// build). No Halide dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule_space.h"

namespace batchconv_gen {

enum class ConvOp { Grouped, BatchedWeight, BroadcastInput };

struct ConvProblem {
  ConvOp op = ConvOp::Grouped;
  int64_t batch = 1, n = 1;          // B (banks or slices) and N
  int64_t groups = 1, cin_g = 1, cout_g = 1;
  int64_t in_w = 1, in_h = 1, out_w = 1, out_h = 1;
  int64_t kernel_w = 1, kernel_h = 1;
  int stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1;
  int pad_x = 0, pad_y = 0;      // padding before the first column / row
  bool x_channels_last = false;  // x's channel stride is 1 (NHWC)
  bool y_channels_last = false;  // y's channel stride is 1 (NHWC)
  bool y_banks_outer = false;    // broadcast-input y laid out (B, N, Cout, ...), not (N, B*Cout, ...)
  // The caller runs the lanes family for this Cout_g: the model compiler for
  // any, the runtime's AOT kernels where lanes_kernel_fits().
  bool lanes_allowed = false;
  bool extents_known = false;  // every extent is a compile-time constant (the model compiler)
  int threads = 0;             // the cores the call runs on (0: unknown)
};

struct ConvChoice {
  ConvSchedule schedule;  // defaults filled in for the target
  std::string reason;     // one line: why this family (for --explain and reports)
};

ConvChoice choose_conv_schedule(const ConvProblem& p, const TargetFacts& target);

// The columns of the tiles fitted to the row (schedule field ch_fit_rows)
// that point `s` (defaults filled in for `target`) runs problem `p` with in
// the channels family, or 0 where it runs its other tiles: 14 or 11 (unit
// stride) or 7 columns of two channel vectors, the first that divides the
// row, on a reduction of 128 taps or more whose tasks are whole rows the
// point's own tile does not divide, where the target has the registers.
// The same rule as the generator's run-time conditions
// (conv_schedule_cpu_channels.h, channels_paths), on known extents: the
// runtime runs its *_channels_fitted kernels only where this is non-zero.
int fitted_row_columns(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& target);

// The output channels per parallel task (schedule field ch_task_channels)
// for problem `p` run with point `s` (defaults filled in for `target`) on
// p.threads cores, and why: 0 (a group's channels in each task) where the
// point's row tasks already give every thread at least 4 tasks, else the
// widest chunk of whole tiles that makes that many (a 7 x 7 map of 512
// channels at batch 1 is one row task: 8 chunks of 64 channels), never
// under one tile. 0 on one thread or where the threads are unknown.
struct TaskChannels {
  int channels = 0;
  std::string reason;
};
TaskChannels choose_task_channels(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& target);

// The input channels per reduction block (schedule field ch_ci_block) for
// problem `p` run with point `s` (defaults and task channels filled in),
// and why: a vector's worth where one register tile's weights (Cin_g x taps
// x the tile's channels) pass a quarter of L2, so that each task reads them
// from memory once and keeps each block in L1 for all its rows, and where
// the task's accumulators of one channel tile fit half of L1 (7 x 7 and
// smaller maps of 256 and more channels: a 512 -> 512 3x3 at 7 x 7 read
// each tile's 590 KB of weights once per row without it); else 0.
struct ReductionBlocks {
  int channels = 0;
  std::string reason;
};
ReductionBlocks choose_reduction_blocks(const ConvProblem& p, const ConvSchedule& s, const TargetFacts& target);

// The depthwise form of the lanes family (conv_schedule_cpu_depthwise.h):
// a 2-D conv of Cin_g = Cout_g = 1 with at least a vector of groups, every
// extent known (the model compiler). Its register tile is one vector of
// channels x `columns` columns of a row (the widest divisor of the row up
// to 4, or its smallest from 5 to 8 where only 1 or 2 divide it: a tile
// overlapping the row's end recomputes columns); a task is
// `task_rows` rows of `task_vectors` channel vectors of one image, sized so
// that every thread gets at least 4 tasks where the shape has them (a 7 x 7
// map at batch 1 splits its channels). `columns` is 0 where the form does
// not apply.
struct DepthwiseTiles {
  int columns = 0, task_rows = 1, task_vectors = 1;
  std::string reason;
};
DepthwiseTiles choose_depthwise_tiles(const ConvProblem& p, const TargetFacts& target);

// The Cout_g values the AOT lanes kernels have their own code for: the
// divisors of the vector below it (1, 2, 4, 8 on AVX-512). Other Cout_g run
// the general case, whose lane -> (c, g) split gathers.
std::vector<int> lanes_specialized_cout_g(const TargetFacts& target);
bool lanes_kernel_fits(int64_t cout_g, const TargetFacts& target);

// The op's kernel name ("grouped_conv", "batched_weight_conv", "broadcast_input_conv").
const char* conv_op_name(ConvOp op);

// The shape of a conv call as the tuning database keys it: everything that
// decides which kernel is fastest and nothing else (not bias or ReLU), e.g.
// "b=1 n=8 groups=1 cin_g=64 cout_g=64 in=56x56 kernel=3x3 out=56x56
// stride=1x1 dilation=1x1 pad=1x1 x=nchw y=nchw" (spatial pairs are HxW).
// The runtime, the tuner and the model compiler all key calls with it.
std::string tuning_shape_key(const ConvProblem& p);

// A shape key back into a problem, over `base` (items it does not give keep
// base's values; the op is not in the key). Items are separated by spaces or
// commas and written name=value or name:value ("b:1,n:8,in:56x56", how a
// generator's command line takes it). Throws std::invalid_argument naming a
// malformed item.
ConvProblem parse_tuning_shape_key(const std::string& key, ConvProblem base = {});

// Facts of the x86 variants the runtime's multi-target libraries hold,
// from the name of the one Halide picked (cache sizes read from this machine).
TargetFacts facts_of_variant(const std::string& target_name);

}  // namespace batchconv_gen

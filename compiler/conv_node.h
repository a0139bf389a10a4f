// A Conv or batchconv.BatchedWeightConv node as the conv lowering
// (ops_conv.cpp) sees it: its geometry read and checked, its baked weights
// packed as the register tiles read them, and the squeeze-excite input it
// may fold into per-image weights.
#pragma once

#include <string>

#include "lowering_context.h"

namespace batchconv::compiler {

struct ConvShape {
  bool batched = false;  // BatchedWeightConv: a leading B dim on x, w, bias
  int spatial = 0;       // 1 or 2
  int64_t B = 1, N = 0, C = 0, G = 1, cin_g = 0, cout = 0, cout_g = 0;
  int64_t in_w = 1, in_h = 1, k_w = 1, k_h = 1;
  int64_t s_w = 1, s_h = 1, d_w = 1, d_h = 1, p_w = 0, p_h = 0;  // pad_* = before
  int64_t out_w = 1, out_h = 1;
};

// Reads and checks the geometry; every failure names the node.
ConvShape conv_shape(const LoweringContext& cx, const ir::Node& n, bool batched);

// A baked weight as the channels family reads it, (co, ci, kx, ky, g, b)
// dense, the output channel innermost; or as the lanes family does,
// (co, g, ci, kx, ky, b), the (channel, group) lane innermost.
// `pad_co`: dim 0 (co) twice as long, zeros after the weights, for tasks
// of channel chunks that do not divide Cout_g (the last one shifted
// inwards): Halide 14 bounds that shifted chunk's tiles loosely and checks
// a baked buffer against up to 2 Cout_g - 1 (never read there).
Halide::Buffer<float> packed_weights(const ir::Tensor& w, const ConvShape& s, bool lanes, bool pad_co, int block,
                                     const std::string& name);

// Squeeze-excite's channel scale: a 1x1 conv (one group, stride 1, no
// padding, baked weights) reading Mul(a, scale), a stored (N, C, H, W) a
// times a (N or 1, C, 1, 1) scale, is computed as a conv of a itself with
// the scale folded into per-image weights, W[co, ci] * scale[n, ci]: the
// conv reads a in place, and no pass writes a * scale first. Exact up to
// rounding. Taken where the weights are smaller than the activation they
// would scale (Cout < H x W): at 7 x 7 a 1152 -> 320 conv's weights are
// seven times the activation. N > 1 becomes a batched-weight conv of one
// image per task (B = N; with --dynamic-batch, B is the run-time batch).
struct ChannelScale {
  const LTensor* a = nullptr;      // the scaled activation, (N, C, H, W)
  const LTensor* scale = nullptr;  // (N or 1, C, 1, 1)
};

// The fold for node n of shape s, or {} where it does not apply.
ChannelScale channel_scale(const LoweringContext& cx, const ir::Node& n, const ConvShape& s);

}  // namespace batchconv::compiler

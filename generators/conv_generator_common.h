// Helpers the conv generators share: the geometry from their scalar inputs,
// the buffer constraints of a schedule family, and the one choice of
// schedule (autoscheduler estimates, the gpu family on CUDA and OpenCL
// targets, then the CPU family of the generator's schedule point).
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "conv_schedule_cpu.h"
#include "conv_schedule_cpu_channels.h"
#include "conv_schedule_cpu_lanes.h"
#include "conv_schedule_gpu.h"
#include "conv_schedule_params.h"

namespace batchconv_gen {

// Geometry from the generator's scalar inputs and the input/weight buffers
// (x: (w, h, ci, ...), w: (kw, kh, ci, ...)).
template <typename BufX, typename BufW, typename Int>
ConvGeometry conv_geometry(const BufX& x, const BufW& w, const Int& stride_x, const Int& stride_y,
                           const Int& dilation_x, const Int& dilation_y, const Int& pad_x,
                           const Int& pad_y) {
  ConvGeometry g;
  g.stride_x = stride_x;
  g.stride_y = stride_y;
  g.dilation_x = dilation_x;
  g.dilation_y = dilation_y;
  g.pad_x = pad_x;
  g.pad_y = pad_y;
  g.in_w = x.dim(0).extent();
  g.in_h = x.dim(1).extent();
  g.kernel_w = w.dim(0).extent();
  g.kernel_h = w.dim(1).extent();
  g.cin_g = w.dim(2).extent();
  g.cout_g = w.dim(3).extent();
  return g;
}

// The channels family reads x and writes y through any strides and needs
// weights with the output channel innermost (w dims (kx, ky, ci, co, ...));
// the rows family keeps Halide's default (unit innermost stride).
// The lanes family the same, with the groups' output channels contiguous
// too (w's (co, g) fused innermost: the runtime's packed order) and y's
// Cout_g that of w, so one specialization on Cout_g covers every index.
template <typename BufX, typename BufW, typename BufY>
void constrain_buffers(const ConvSchedule& point, BufX& x, BufW& w, BufY& y) {
  const ConvFamily family = point.family;
  if (family != ConvFamily::Channels && family != ConvFamily::Lanes) return;
  x.dim(0).set_stride(Halide::Expr());
  y.dim(0).set_stride(Halide::Expr());
  w.dim(0).set_stride(Halide::Expr());
  w.dim(3).set_stride(1);
  if (family == ConvFamily::Lanes) {
    w.dim(4).set_stride(w.dim(3).extent());
    y.dim(2).set_bounds(0, w.dim(3).extent());
  }
}

// The channel block of the conv's staged input for point `s` (define_conv's
// input_block): a vector of channels for ch_blocked, else 0 (none).
inline int input_block(const ConvSchedule& s, const Halide::Target& target) {
  if (s.family != ConvFamily::Channels || s.ch_blocked != 1 || target.has_gpu_feature()) return 0;
  return target_facts(target).vector_floats;
}

// Whether define_conv clamps channel indices for the family (the rows
// family rounds channel tiles up; the others never read past Cout_g).
inline bool clamps_channels(ConvFamily family) {
  return family != ConvFamily::Channels && family != ConvFamily::Lanes;
}

// Schedules a conv generator's output Func `out` (dims (x, y, c, g,
// outer...); its buffer `y`) for its target and point; `inner` as in
// schedule_conv_cpu.
template <typename BufX, typename BufW, typename BufY, typename Int>
void schedule_conv_generator(Halide::Func out, const BufY& y, ConvFuncs& f,
                             const std::vector<Halide::Var>& outer, const BufX& x, const BufW& w,
                             const Int& stride_x, const ConvSchedule& point,
                             const Halide::Target& target, const std::vector<Halide::Var>& inner = {}) {
  if (target.has_gpu_feature()) {
    std::vector<Halide::Expr> outer_extents;
    for (size_t i = 0; i < outer.size(); ++i) outer_extents.push_back(y.dim(4 + static_cast<int>(i)).extent());
    schedule_conv_gpu(out, f, outer, y.dim(0).extent(), y.dim(1).extent(), outer_extents, point);
    return;
  }
  const TargetFacts facts = target_facts(target);
  if (point.family == ConvFamily::Lanes) {
    LanesExtents e{y.dim(0).extent(), w.dim(3).extent(), x.dim(3).stride(), y.dim(2).stride(),
                   y.dim(3).stride()};
    schedule_conv_cpu_lanes_aot(out, f, outer, e, point, facts);
    return;
  }
  if (point.family == ConvFamily::Channels) {
    ChannelsExtents e{y.dim(0).extent(), w.dim(3).extent(), x.dim(2).stride() == 1,
                      y.dim(2).stride() == 1};
    schedule_conv_cpu_channels(out, f, outer, e, point, facts, inner);
    return;
  }
  ConvExtents e{y.dim(0).extent(), y.dim(1).extent(), w.dim(2).extent(), w.dim(3).extent(),
                stride_x};
  schedule_conv_cpu(out, f, outer, e, point, facts, inner);
}

}  // namespace batchconv_gen

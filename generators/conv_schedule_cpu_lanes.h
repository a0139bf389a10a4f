// CPU schedule of the "lanes" family (schedule_space.h): for convs with few
// output channels per group (depthwise's 1 or its multiplier, ResNeXt's 4),
// the vector lanes run across groups: output channel c of group g is lane
// g * Cout_g + c of the fused (c, g) dimension. The register tile is one
// vector of lanes x a few columns of one output row; each reduction step
// loads the tile's weight vector (packed with (c, g) innermost: lane l's
// weight is at l) and, per column, the lanes' inputs from the task's padded
// copy, stored with the group innermost (a dense load for depthwise).
//
// Used by the model compiler (compiler/ops_conv.cpp); the AOT kernels do
// not build it. Needs define_conv(..., clamp_channels = false), weights
// packed (co, g, ci, kx, ky) and G * Cout_g >= one vector (the chooser's
// condition).
#pragma once

#include <algorithm>
#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "schedule_space.h"

namespace batchconv_gen {

// The register tile's columns: the largest divisor of out_w up to
// s.lane_columns (a tile that overlaps the row's end ran 2-4x slower).
inline int lane_tile_columns(int out_w, const ConvSchedule& s) {
  for (int c = std::min(s.lane_columns, out_w); c > 1; --c)
    if (out_w % c == 0) return c;
  return 1;
}

// Schedules `out` (computed from f.output, stored in any order) with point
// `s` on `facts`; `outer` are the vars outside the groups (n, b), fused into
// the parallel loop with the row tasks and lane blocks.
inline void schedule_conv_cpu_lanes(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                                    int out_w, const ConvSchedule& s, const TargetFacts& facts) {
  using namespace Halide;
  const ConvVars& v = f.v;
  const int L = facts.vector_floats;
  const int columns = lane_tile_columns(out_w, s);
  Var cg("cg"), cgo("cgo"), cgi("cgi"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), t("t");
  // A task: lane_task_rows rows of one vector of lanes of one image.
  out.fuse(v.c, v.g, cg)
      .split(cg, cgo, cgi, L, TailStrategy::ShiftInwards)
      .split(v.y, yo, yi, s.lane_task_rows, TailStrategy::GuardWithIf)
      .split(v.x, xo, xi, columns, TailStrategy::ShiftInwards)
      .reorder(cgi, xi, xo, yi, cgo, yo);
  out.fuse(cgo, yo, t);
  for (const Var& o : outer) out.fuse(t, o, t);
  out.parallel(t).vectorize(cgi).unroll(xi);
  // The tile's accumulators: lanes x columns, the reduction outside them.
  f.conv.compute_at(out, xo);
  f.conv.fuse(v.c, v.g, cg).vectorize(cg, L).unroll(v.x);
  f.conv.update()
      .fuse(v.c, v.g, cg)
      .reorder(cg, v.x, f.r.x, f.r.y, f.r.z, v.y)
      .vectorize(cg, L)
      .unroll(v.x)
      .unroll(f.r.x);
  // The task's zero-padded input, the group innermost.
  f.padded.compute_at(out, t).reorder_storage(v.g, v.c, v.x, v.y);
  f.padded.vectorize(v.g, L, TailStrategy::GuardWithIf);
}

}  // namespace batchconv_gen

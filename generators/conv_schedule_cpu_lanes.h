// CPU schedule of the "lanes" family (schedule_space.h): for convs with few
// output channels per group (depthwise's 1 or its multiplier, ResNeXt's 4),
// the vector lanes run across groups: output channel c of group g is lane
// g * Cout_g + c of the fused (c, g) dimension. The register tile is one
// vector of lanes x a few columns of one output row; each reduction step
// loads the tile's weight vector (packed with (c, g) innermost: lane l's
// weight is at l) and, per column, the lanes' inputs from the task's padded
// copy, stored with the group innermost (a dense load for depthwise).
//
// Two entry points: the model compiler knows every extent
// (schedule_conv_cpu_lanes); the AOT kernels serve any shape and get one
// specialization per Cout_g that divides a vector, each with the widest
// column tile that divides the row (schedule_conv_cpu_lanes_aot). Both need
// define_conv(..., clamp_channels = false), weights packed (co, g, ci, kx,
// ky) and G * Cout_g >= one vector (the chooser's condition).
#pragma once

#include <algorithm>
#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "conv_chooser.h"
#include "schedule_space.h"

namespace batchconv_gen {

// The register tile's columns: the largest divisor of out_w up to
// s.lane_columns (a tile that overlaps the row's end ran 2-4x slower).
inline int lane_tile_columns(int out_w, const ConvSchedule& s) {
  for (int c = std::min(s.lane_columns, out_w); c > 1; --c)
    if (out_w % c == 0) return c;
  return 1;
}

namespace detail {

// The loops of `out` (or of one of its specializations) for a register
// tile of `columns` columns: a task is lane_task_rows rows of one vector of
// lanes of one image; `outer` (n, b) are fused into the parallel loop.
// `cout_g` > 0 is the stage's exact Cout_g, a divisor of the vector: a tile
// is then vector / Cout_g whole groups (dense weight loads at any group
// count); otherwise it is any vector of the fused (c, g) lanes.
inline void schedule_lanes_loops(Halide::Stage out, const ConvVars& v, const std::vector<Halide::Var>& outer,
                                 int columns, int cout_g, const ConvSchedule& s, int lanes) {
  using namespace Halide;
  Var cg("cg"), cgo("cgo"), cgi("cgi"), cgv("cgv"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), t("t");
  if (cout_g > 0) {
    out.split(v.g, cgo, cg, lanes / cout_g, TailStrategy::ShiftInwards).fuse(v.c, cg, cgi);
  } else {
    out.fuse(v.c, v.g, cg).split(cg, cgo, cgi, lanes, TailStrategy::ShiftInwards);
  }
  // Several vectors per task only where a tile is whole groups. (The
  // general case fails Halide's input bounds check at Cout_g = 3 with
  // either split, reading w and bias past the last group; the runtime does
  // not call it: runtime/src/conv_path.h, lanes_fits.)
  out.split(cgo, cgo, cgv, cout_g > 0 ? s.lane_task_vectors : 1, TailStrategy::GuardWithIf)
      .split(v.y, yo, yi, s.lane_task_rows, TailStrategy::GuardWithIf)
      .split(v.x, xo, xi, columns, TailStrategy::ShiftInwards)
      .reorder(cgi, xi, cgv, xo, yi, cgo, yo);
  out.fuse(cgo, yo, t);
  for (const Var& o : outer) out.fuse(t, o, t);
  out.parallel(t).vectorize(cgi).unroll(xi);
}

// The register tile (computed per vector of lanes, cgv, inside the column
// tile of every specialization of `out`) and where the task's padded input
// is (the callers vectorize its copy along g). The taps of a kernel row are
// unrolled: always where the kernel width is a constant (`unroll_kx`), else
// in specializations for 3 taps.
inline void schedule_lanes_tile(Halide::Func out, ConvFuncs& f, int lanes, bool unroll_kx) {
  using namespace Halide;
  const ConvVars& v = f.v;
  Var cg("cg");
  f.conv.compute_at(out, Var("cgv")).reorder_storage(v.c, v.g, v.x, v.y, v.n, v.b);  // a vector per column
  f.conv.fuse(v.c, v.g, cg).vectorize(cg, lanes).unroll(v.x);
  Stage update = f.conv.update();
  update.fuse(v.c, v.g, cg).reorder(cg, v.x, f.r.x, f.r.y, f.r.z, v.y).vectorize(cg, lanes).unroll(v.x);
  if (unroll_kx) {
    update.unroll(f.r.x);
  } else {
    // Unit stride and dilation make the unrolled taps' and columns' input
    // offsets constants (no address vectors in the inner loop).
    update.specialize(f.geo.kernel_w == 3 && f.geo.kernel_h == 3 && f.geo.stride_x == 1 && f.geo.dilation_x == 1)
        .unroll(f.r.x)
        .unroll(f.r.y);
    update.specialize(f.geo.kernel_w == 3).unroll(f.r.x);
  }
  f.padded.compute_at(out, Var("t")).reorder_storage(v.g, v.c, v.x, v.y);
}

}  // namespace detail

// Schedules `out` (computed from f.output, stored in any order) with point
// `s` on `facts`, for a row of out_w columns.
inline void schedule_conv_cpu_lanes(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                                    int out_w, const ConvSchedule& s, const TargetFacts& facts) {
  const int L = facts.vector_floats;
  detail::schedule_lanes_loops(out, f.v, outer, lane_tile_columns(out_w, s), 0, s, L);
  detail::schedule_lanes_tile(out, f, L, /*unroll_kx=*/true);
  f.padded.vectorize(f.v.g, L, Halide::TailStrategy::GuardWithIf);
}

// The AOT kernels' runtime extents and strides the lanes schedule
// specializes on (strides of the grouped view's c and g axes).
struct LanesExtents {
  Halide::Expr out_w, cout_g;
  Halide::Expr x_g_stride;
  Halide::Expr y_c_stride, y_g_stride;
};

// The AOT form. Each Cout_g of lanes_specialized_cout_g gets its own code
// (the lane -> (c, g) split and the weight and input indices then fold into
// dense loads), with the widest column tile up to lane_columns that divides
// the row, and dense stores where y is channels-last; any other shape runs
// the general case, one column per tile, with gathers. The task's padded
// copy loads whole vectors where x's groups are 1, 2, 4 or 8 floats apart
// (channels-last x with that many channels per group).
inline void schedule_conv_cpu_lanes_aot(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                                        const LanesExtents& e, const ConvSchedule& s, const TargetFacts& facts) {
  using namespace Halide;
  const int L = facts.vector_floats;
  const std::vector<int> c_gs = lanes_specialized_cout_g(facts);
  for (int c_g : c_gs) {
    for (bool y_last : {true, false}) {
      for (int columns = s.lane_columns; columns >= 1; --columns) {
        Expr when = e.cout_g == c_g;
        if (y_last) when = when && e.y_c_stride == 1 && e.y_g_stride == c_g;
        if (columns > 1) when = when && e.out_w % columns == 0;
        detail::schedule_lanes_loops(out.specialize(when), f.v, outer, columns, c_g, s, L);
      }
    }
  }
  detail::schedule_lanes_loops(out, f.v, outer, 1, 0, s, L);
  detail::schedule_lanes_tile(out, f, L, /*unroll_kx=*/false);
  for (int k : c_gs) {
    f.padded.specialize(e.x_g_stride == k).vectorize(f.v.g, std::max(1, L / k), TailStrategy::GuardWithIf);
  }
  f.padded.vectorize(f.v.g, L, TailStrategy::GuardWithIf);
}

}  // namespace batchconv_gen

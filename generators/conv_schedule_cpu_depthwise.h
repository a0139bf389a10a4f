// CPU schedule of the lanes family's depthwise form, for the model compiler
// (every extent known): a 2-D conv with one input and one output channel per
// group (Cin_g = Cout_g = 1), G >= one vector, on data stored channels
// innermost (NHWC) on both sides. A register tile is one vector of channels
// (groups) x `columns` output columns of one row; all KH x KW taps are
// unrolled, so the tile's weights, one vector per tap packed with the group
// innermost, do not change along the row and stay in registers while the
// tile walks it. There is no padded copy of the input: the conv reads it
// through constant_exterior's select, whose in-bounds case is marked likely,
// so Halide's loop partitioning gives the tiles away from the border plain
// dense vector loads and only the border tiles test bounds.
//
// A task is `task_rows` output rows of `task_vectors` channel vectors of one
// image; the chooser (choose_depthwise_tasks) sizes them from the shape and
// the threads.
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "conv_chooser.h"
#include "target_facts.h"

namespace batchconv_gen {

// Schedules `out` (x, y, c, g, n, b) computed from f.output. Needs
// define_conv(..., clamp_channels = false) and weights packed (co, g, ci,
// kx, ky) so that a vector of groups reads one dense weight vector per tap.
inline void schedule_conv_cpu_depthwise(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                                        const DepthwiseTiles& d, const TargetFacts& facts) {
  using namespace Halide;
  const ConvVars& v = f.v;
  const int L = facts.vector_floats;
  Var go("go"), gi("gi"), gt("gt"), xo("xo"), xi("xi"), yo("yo"), yi("yi"), t("t");
  Stage s = out;
  s.split(v.x, xo, xi, d.columns, TailStrategy::ShiftInwards)
      .split(v.g, go, gi, L, TailStrategy::ShiftInwards)
      .split(go, gt, go, d.task_vectors, TailStrategy::GuardWithIf)
      .split(v.y, yo, yi, d.task_rows, TailStrategy::GuardWithIf)
      .reorder(gi, xi, v.c, xo, go, yi, gt, yo);
  s.fuse(gt, yo, t);
  for (const Var& o : outer) s.fuse(t, o, t);
  s.parallel(t).vectorize(gi).unroll(xi);

  // The tile: computed per column tile, a vector of groups per column.
  f.conv.compute_at(out, xo).reorder_storage(v.g, v.x, v.c, v.y, v.n, v.b);
  f.conv.vectorize(v.g, L).unroll(v.x);
  Stage update = f.conv.update();
  update.reorder(v.g, v.x, f.r.x, f.r.y, f.r.z, v.c, v.y).vectorize(v.g, L).unroll(v.x).unroll(f.r.x).unroll(f.r.y);
  f.padded.compute_inline();
}

}  // namespace batchconv_gen

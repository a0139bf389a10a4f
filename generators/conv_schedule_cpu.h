// Hand-written CPU schedule shared by the conv generators (x86 AVX-512 / AVX2
// / SSE, and anything else Halide targets, with widths taken from the target).
//
// The layout is NCHW, so every path vectorises over the output width and
// keeps a register tile of accumulators: tx vectors along x, ty rows along y
// and tc output channels of one group. The reduction over (ci, ky, kx) runs
// inside the tile; each step loads tx*ty input vectors, broadcasts tc weights
// and issues tx*ty*tc FMAs. The zero-padded input of one task (all channels
// of its group, halo included) is copied once into a buffer sized to stay in
// L2, so the inner loop has no boundary selects.
//
// Paths, chosen at run time by specialize() in this order:
//   depthwise  Cin_g == 1 && Cout_g == 1: memory bound, a 2x4-vector tile of
//              one channel, 8 planes per task (one folded plane buffer),
//              3x3 fully unrolled; 3x3 stride-1 pad-1 has its own copy.
//   wide 1-D   H' == 1 (conv1d, e.g. seed 1's 1x1 over 1e6 positions):
//              4 vectors x 1 row x tc channels; a task is a 512 KB column
//              chunk with the channel tiles outermost (long store runs).
//   dense 2-D  Cout_g >= tc: the compute-bound path, 1 vector x 4 rows x tc;
//              a task is whole output rows, up to 16 of them, L2-sized.
//   narrow     Cout_g >= 4 (ResNeXt-style groups): tc = 4.
//   single     one vector, one row, one channel (Cout_g < 4, multipliers).
//   scalar     outputs narrower than one vector.
// Inside each path the reduction is specialised again: 1x1 kernels lose the
// kx/ky loops, 3-tap rows unroll kx (depthwise unrolls 3x3), stride 2 uses
// two loads and a shuffle, other strides gather.
//
// Register budget (why the tiles fit): px pixel vectors x tc channels of
// accumulators, plus px input vectors and one broadcast, must fit the
// register file: px*tc + px + 1 <= 32 on AVX-512 (px = 4, tc = 6: 24
// accumulators, 29 registers), <= 16 on AVX2 (px = 2, tc = 6: 12, 15).
//
// What bounds it (measured figures: README and benchmarks/
// results-seed-workloads.md): 56-column rows are 3.5 vectors, so the dense
// path computes 64 columns for 56 (87.5% useful) and 22-column outputs
// (seed 2's 7x7) 32 for 22; the memory-bound paths store through the cache
// (Halide 14 has no streaming stores), so each output line is also read
// once, about 1.5x the bytes the bandwidth floor counts.
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "schedule_space.h"

namespace batchconv_gen {

// Run-time extents the paths are chosen on.
struct ConvExtents {
  Halide::Expr out_w, out_h, cin_g, cout_g;
  Halide::Expr stride_x;
  // Size a task's chunk; undefined: taken from f.geo.
  Halide::Expr in_w, kernel_w, kernel_h;
};

namespace detail {

struct Tile {
  int vec;         // floats per vector (1: scalar code)
  int tx, ty, tc;  // vectors along x, rows along y, output channels
  int x_chunk;     // register tiles along x per parallel task; 0: sized at run time
                   // so the task's padded input stays near kTaskInputFloats
                   // (kWideTaskInputFloats for one_d)
  int y_chunk;     // register tiles along y per parallel task; 0: sized at run time
                   // so the task's padded input stays near kTaskInputFloats
  int planes;      // groups per task (consecutive planes, for depthwise)
  bool unroll_3x3 = false;      // unroll ky too for 3x3 (short reductions: depthwise)
  bool channels_outer = false;  // sweep x inside each channel tile (1-D: long store runs)
  bool one_d = false;           // the 1-D path (H' == 1): column chunks of its own budget
  int task_floats = 64 * 1024;  // padded input floats a task aims for (task_input_kb or
                                // wide_task_input_kb of the schedule point)
  int max_rows = 16;            // most output rows per task (task_max_rows)
};

// The loops other stages are computed at, passed as values: the loop just
// outside the register tile (where the conv is computed), the parallel task
// and the planes of a task (where the padded input is refilled).
struct TaskLoops {
  Halide::Var tile{"ct"}, task{"t"}, planes{"gp"};
};

// Task budgets (why these defaults: schedule_space.cpp). 16 rows per task
// (seed 3's 30-row images in two tasks) measured 1.4-1.7x faster than 8 and
// 1.2x faster than whole images on seed 3, and 1.2x faster than 64-column x
// 8-row chunks on 64 -> 64 at 56x56. The 1-D path's 512 KB tasks with the
// channel tiles outermost write 6 long runs per tile instead of 64 short
// ones: seed 1 (16 -> 64, 1x1, 1e6 columns) went from 17 ms (512-column
// tasks, channels innermost) to 10.2 ms (4096 columns: 11.3, 32768: 10.3).

// Register tiles along x per task when x_chunk is 0. The 2-D paths take
// whole rows when Cin_g x (ty + KH - 1) rows of them fit the budget (every
// seed shape), else as many columns as fit (wide images with many channels:
// 512 channels at 1024 columns get 16-column chunks, 221 KB, not 12.6 MB).
inline Halide::Expr columns_chunk(const Tile& k, const ConvExtents& e) {
  using namespace Halide;
  Expr floats = k.task_floats;
  Expr rows = k.one_d ? Expr(1) : k.ty + max(0, e.kernel_h - 1);
  return max(1, floats / max(1, e.cin_g * rows) / (k.vec * k.tx));
}

// Register tiles along y per task for a tile of `rows` rows when y_chunk is 0.
inline Halide::Expr rows_chunk(const Tile& k, const ConvExtents& e, const Halide::Expr& x_chunk) {
  using namespace Halide;
  Expr width = min(max(1, e.in_w), x_chunk * (k.vec * k.tx) + max(0, e.kernel_w - 1)) * max(1, e.cin_g);
  Expr rows = clamp(k.task_floats / width, k.ty, std::max(k.ty, k.max_rows));
  return max(1, rows / k.ty);
}

// Loop nest of the output stage for one path. Inner to outer:
//   xi yi ci | ct (channel tiles) | inner... | xm ym |
//   gp (k.planes consecutive groups; the padded input is computed here) |
//   t (parallel; one padded buffer per task) = fuse(xo, yo, g, outer...)
// or, with k.channels_outer, the x tiles inside the channel tiles:
//   xi yi ci | xm | ct | inner... | ym | gp | t
// The loop just outside the register tile, where the conv is computed, is
// loops.tile either way; the task loop is loops.task, the planes loop
// loops.planes (the same Vars in every path, passed in as values).
// Tiles are whole (ShiftInwards: the last one overlaps its neighbour), so
// the path's condition must guarantee W' >= vec*tx, H' >= ty, Cout_g >= tc.
inline void tile_output(Halide::Stage s, const ConvVars& v, const std::vector<Halide::Var>& outer,
                        const std::vector<Halide::Var>& inner, const Tile& k, const ConvExtents& e,
                        const TaskLoops& loops) {
  using namespace Halide;
  const bool co = k.channels_outer;
  // With the channel tiles outside the x tiles, the loop outside the
  // register tile is the x-chunk loop.
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), ci("ci"), ym("ym"), xm_other(co ? "ctile" : "xm");
  const Var &xm = co ? loops.tile : xm_other, &ct = co ? xm_other : loops.tile;
  const Var &t = loops.task, &gp = loops.planes;
  const TailStrategy shift = TailStrategy::ShiftInwards;
  Expr x_chunk = k.x_chunk > 0 ? Expr(k.x_chunk) : columns_chunk(k, e);
  Expr y_chunk = k.y_chunk > 0 ? Expr(k.y_chunk) : rows_chunk(k, e, x_chunk);
  s.split(v.x, xo, xi, k.vec * k.tx, shift)
      .split(v.y, yo, yi, k.ty, shift)
      .split(v.c, ct, ci, k.tc, shift)
      .split(xo, xo, xm, x_chunk, TailStrategy::GuardWithIf)
      .split(yo, yo, ym, y_chunk, TailStrategy::GuardWithIf)
      .split(v.g, v.g, gp, k.planes, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> order{xi, yi, ci};
  if (co) {
    order.push_back(xm);
    order.push_back(ct);
  } else {
    order.push_back(ct);
  }
  for (const Var& o : inner) order.push_back(o);
  if (!co) order.push_back(xm);
  for (const Var& o : {ym, gp, xo, yo, v.g}) order.push_back(o);
  for (const Var& o : outer) order.push_back(o);
  s.reorder(order);
  s.fuse(xo, yo, t).fuse(t, v.g, t);
  for (const Var& o : outer) s.fuse(t, o, t);
  s.parallel(t);
  if (k.vec > 1) s.vectorize(xi, k.vec);
}

// The accumulator tile, computed at the output's channel-tile loop: pure x,
// y, c loops of the tile's constant extent, vectorised over x and fully
// unrolled, the reduction outside them.
inline void tile_accumulators(Halide::Stage s, const ConvVars& v, const Tile& k,
                              const Halide::RDom* r) {
  using namespace Halide;
  Var xo("xo"), yo("yo"), co("co"), xv("xv");
  s.split(v.x, xo, v.x, k.vec * k.tx)
      .split(v.y, yo, v.y, k.ty)
      .split(v.c, co, v.c, k.tc)
      .split(v.x, v.x, xv, k.vec);
  if (r) {
    s.reorder(xv, v.x, v.y, v.c, (*r)[0], (*r)[1], (*r)[2], xo, yo, co);
  } else {
    s.reorder(xv, v.x, v.y, v.c, xo, yo, co);
  }
  if (k.vec > 1) s.vectorize(xv);
  s.unroll(v.x).unroll(v.y).unroll(v.c);
}

inline void schedule_path(ConvFuncs& f, Halide::Stage out, Halide::Stage conv_init,
                          Halide::Stage conv_update, const std::vector<Halide::Var>& outer,
                          const std::vector<Halide::Var>& inner, const Tile& k,
                          const ConvExtents& e, const TaskLoops& loops) {
  tile_output(out, f.v, outer, inner, k, e, loops);
  tile_accumulators(conv_init, f.v, k, nullptr);
  tile_accumulators(conv_update, f.v, k, &f.r);
  if (k.vec > 1) {
    // Unit stride and dilation: dense vector loads at constant offsets.
    // 1x1 kernels drop the kx/ky loops; 3-tap rows unroll kx (unrolling ky
    // too, or putting the channel loop innermost, spilled registers and ran
    // 1.1-1.3x slower on the seed shapes). Stride 2 loads two vectors and
    // shuffles; other strides gather.
    const ConvGeometry& g = f.geo;
    Halide::Expr unit = e.stride_x == 1 && g.dilation_x == 1;
    conv_update.specialize(unit && g.kernel_w == 1 && g.kernel_h == 1);
    if (k.unroll_3x3) {
      conv_update.specialize(unit && g.kernel_w == 3 && g.kernel_h == 3).unroll(f.r[0]).unroll(f.r[1]);
    }
    conv_update.specialize(unit && g.kernel_w == 3).unroll(f.r[0]);
    conv_update.specialize(unit);
    conv_update.specialize(e.stride_x == 2);
  }
}

}  // namespace detail

// Schedules `out` (the pipeline output, pure vars (x, y, c, g, outer...),
// computed from f.output) for a CPU target. `inner` are vars of `outer`
// that should instead run inside each task, next to the channel tiles
// (broadcast_input_conv's bank b: its input tile is then shared by all banks).
inline void schedule_conv_cpu(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                              const ConvExtents& extents, const ConvSchedule& s,
                              const TargetFacts& facts, const std::vector<Halide::Var>& inner = {}) {
  using namespace Halide;
  ConvExtents e = extents;
  if (!e.in_w.defined()) e.in_w = f.geo.in_w;
  if (!e.kernel_w.defined()) e.kernel_w = f.geo.kernel_w;
  if (!e.kernel_h.defined()) e.kernel_h = f.geo.kernel_h;
  using detail::Tile;
  const int vec = facts.vector_floats;
  std::vector<Var> task_outer;
  for (const Var& o : outer) {
    bool is_inner = false;
    for (const Var& i : inner) is_inner = is_inner || i.same_as(o);
    if (!is_inner) task_outer.push_back(o);
  }

  // Paths, most specific first; the last is the unconditional fallback.
  struct Path {
    Expr when;
    Tile tile;
  };
  auto fits = [&](const Tile& k) {
    return e.out_w >= k.vec * k.tx && e.out_h >= k.ty && e.cout_g >= k.tc;
  };
  // The dense tile defaults to 4 rows of one vector with 32 registers
  // (AVX-512), 2 with 16 (AVX2): one vector wide wastes least on the seed
  // widths (22, 30, 42, 56 columns are 2, 2, 3, 4 vectors). Tried 2 x 2 on
  // AVX-512: no clear gain at 56 columns, 18% slower at 42, 3x slower at
  // 22 and 30 (those fall to the narrow path).
  const int task_floats = s.task_input_kb * 256, wide_floats = s.wide_task_input_kb * 256;
  Tile depthwise{vec, s.dw_vectors, s.dw_rows, 1, s.dw_task_cols, s.dw_task_rows, s.dw_planes, true};
  Tile wide{vec, s.wide_vectors, 1, s.wide_channels, 0, 1, 1};
  wide.channels_outer = true;
  wide.one_d = true;
  wide.task_floats = wide_floats;
  Tile dense{vec, s.row_vectors, s.row_rows, s.row_channels, 0, 0, 1};
  Tile narrow{vec, s.row_vectors, s.row_rows, std::min(4, s.row_channels), 0, 0, 1};
  Tile single{vec, 1, 1, 1, 0, 0, 1};
  Tile scalar{1, 1, 1, 1, 0, 0, 1};
  for (Tile* k : {&depthwise, &dense, &narrow, &single, &scalar}) {
    k->task_floats = task_floats;
    k->max_rows = s.task_max_rows;
  }
  // Depthwise is memory bound and short (9 taps): the common 3x3 "same"
  // geometry gets its own copy with the padding known, which lets the
  // simplifier fold the boundary and offset arithmetic (3.5 -> 2.5 ms on
  // W4 depthwise, JIT).
  const ConvGeometry& geo = f.geo;
  Expr depthwise_when = e.cin_g == 1 && e.cout_g == 1 && fits(depthwise);
  Expr same_3x3 = geo.kernel_w == 3 && geo.kernel_h == 3 && e.stride_x == 1 && geo.stride_y == 1 &&
                  geo.dilation_x == 1 && geo.dilation_y == 1 && geo.pad_x == 1 && geo.pad_y == 1;
  std::vector<Path> paths = {
      {depthwise_when && same_3x3, depthwise},
      {depthwise_when, depthwise},
      {e.out_h == 1 && fits(wide), wide},
      {fits(dense), dense},
      {fits(narrow), narrow},
      {fits(single), single},
  };

  // A point may make two paths' conditions the same (row_channels <= 4:
  // dense and narrow); the first one schedules it.
  std::vector<Path> distinct;
  for (const Path& p : paths) {
    bool seen = false;
    for (const Path& q : distinct) seen = seen || Internal::equal(p.when, q.when);
    if (!seen) distinct.push_back(p);
  }
  paths = distinct;

  const detail::TaskLoops loops;
  Stage conv_update = f.conv.update();
  for (const Path& p : paths) {
    detail::schedule_path(f, out.specialize(p.when), f.conv.specialize(p.when),
                          conv_update.specialize(p.when), task_outer, inner, p.tile, e, loops);
  }
  detail::schedule_path(f, out, f.conv, conv_update, task_outer, inner, scalar, e, loops);

  f.conv.compute_at(out, loops.tile);
  // One padded buffer per task, refilled (and folded) for each of its groups.
  f.padded.store_at(out, loops.task).compute_at(out, loops.planes).vectorize(f.v.x, vec);
}

}  // namespace batchconv_gen

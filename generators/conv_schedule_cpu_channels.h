// CPU schedule of the "channels" family: output channels in vectors, the
// form of Halide's apps/conv_layer. The register tile is ch_vectors vectors
// of output channels x ch_columns output columns of one row, so each step of
// the reduction loads ch_vectors packed-weight vectors, broadcasts
// ch_columns input values and issues ch_vectors * ch_columns FMAs; no lane is
// lost on a row's tail, whatever the width, stride or dilation.
//
// Needs the algorithm built with define_conv(..., clamp_channels = false)
// (tiles never run past Cout_g: ShiftInwards) and weights whose output
// channel is innermost (w.dim(3) stride 1: the runtime's PackedWeights, or
// its per-call pack). Reads x and writes y through any strides: NCHW, NHWC
// (PyTorch's channels_last) or any view.
//
// A task is ch_task_rows output rows of one group and image (and batch
// slice), and ch_task_channels of its output channels (0: all), split into column chunks when its padded input would pass
// task_input_kb. Per task: the zero-padded input rows are copied once, stored with
// x innermost (the broadcasts of a register tile then sit at constant
// offsets from one pointer; channels-innermost storage made LLVM compute the
// addresses in vector registers and ran 1.2x slower); each register tile is
// stored straight into y (ch_direct=1, the default): vector stores of
// channels on an NHWC y, each vector scattered over Cout planes on an NCHW
// y, overlapping the next tile's FMAs. With ch_direct=0 the tiles go to a
// block stored channel-innermost, copied to y after them (vectorised over
// channels for an NHWC y, over x for an NCHW y, where y's runtime x stride
// left both the block's reads and y's writes scalar: 1.3x slower on seed 2,
// 1.6x on a seed 3 slice).
//
// Register budget: ch_vectors * ch_columns accumulators + ch_vectors weight
// vectors + 1 broadcast <= registers (validate_conv_schedule): 4 x 6 = 24
// (29 of 32 on AVX-512), 2 x 6 = 12 (15 of 16 on AVX2).
//
// Measured: README's seed table (B = 1 and MAML rows, "channels").
#pragma once

#include <algorithm>
#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "schedule_space.h"

namespace batchconv_gen {

// Run-time facts the channels schedule specialises on.
struct ChannelsExtents {
  Halide::Expr out_w, cout_g;
  Halide::Expr x_channels_innermost;  // x.dim(channel).stride() == 1
  Halide::Expr y_channels_innermost;  // y.dim(channel).stride() == 1
  // Reading an input element costs one load (a stored tensor, not inlined
  // arithmetic): a 1x1 conv may then read it in place (the model compiler).
  bool input_is_a_load = false;
};

namespace detail {

struct ChannelsTile {
  int vec;      // floats per vector (1: scalar code)
  int vectors;  // channel vectors per tile
  int columns;  // output columns per tile
};

// The block of one task (f.output, computed at the task; or the output
// itself, whose rows are `row`), tiled for `k`; with `conv_too`, the conv's
// stages `init` and `update` computed at each tile too.
inline void schedule_channels_tile(ConvFuncs& f, Halide::Stage block, Halide::Stage init,
                                   Halide::Stage update, const ChannelsTile& k, bool unroll_kx,
                                   int ci_block, const Halide::Var& row, const Halide::Var& channel,
                                   bool conv_too = true) {
  using namespace Halide;
  const ConvVars& v = f.v;
  const TailStrategy shift = TailStrategy::ShiftInwards;
  Var co("co"), ci("ci"), xo("xo"), xi("xi");
  block.split(channel, co, ci, k.vec * k.vectors, shift).split(v.x, xo, xi, k.columns, shift);
  // With reduction blocks the conv is computed per channel tile over all of
  // the task's rows, so the rows run inside the channel tiles.
  if (ci_block > 0) block.reorder(ci, xi, xo, row, co);
  else block.reorder(ci, xi, xo, co, row);
  if (k.vec > 1) block.vectorize(ci, k.vec);
  block.unroll(ci).unroll(xi);
  if (!conv_too) return;

  Var cv("cv"), cu("cu");
  if (ci_block > 0) {
    // The accumulators of every tile of the task's channel tile, all its
    // rows and columns (computed at the channel tile, channels innermost);
    // the reduction in blocks of ci_block input channels, each block swept
    // over all of those tiles, so its taps' weights are read from memory
    // once per task and then from L1. Without it a small map of many
    // channels (7 x 7, 512 -> 512) streamed each tile's weights, larger
    // than L2, once per output row.
    init.split(v.c, cu, cv, k.vec).reorder(cv, cu, v.x, v.y);
    if (k.vec > 1) init.vectorize(cv);
    init.unroll(cu);
    Var xo("rxo"), xi("rxi");
    RVar rzo("rzo"), rzi("rzi");
    update.split(v.c, cu, cv, k.vec)
        .split(v.x, xo, xi, k.columns, TailStrategy::RoundUp)
        .split(f.r[2], rzo, rzi, ci_block, TailStrategy::GuardWithIf);
    if (f.input_block > 0 && ci_block > f.input_block) {
      // A staged input (blocks of input_block channels): one block over
      // every tap, then the next, inside each reduction block.
      RVar rzio("rzio"), rzii("rzii");
      update.split(rzi, rzio, rzii, f.input_block)
          .reorder(cv, cu, xi, rzii, f.r[0], f.r[1], rzio, xo, v.y, rzo);
    } else {
      update.reorder(cv, cu, xi, rzi, f.r[0], f.r[1], xo, v.y, rzo);
    }
    if (k.vec > 1) update.vectorize(cv);
    update.unroll(cu).unroll(xi);
    if (unroll_kx) update.specialize(f.geo.kernel_w == 3).unroll(f.r[0]);
    return;
  }
  init.split(v.c, cu, cv, k.vec).reorder(cv, cu, v.x);
  if (k.vec > 1) init.vectorize(cv);
  init.unroll(cu).unroll(v.x);
  if (f.input_block > 0) {
    // Blocked input: one block of channels over every tap, then the next
    // (the block's input rows and its taps' weights stay in L1).
    RVar rzo("rzo"), rzi("rzi");
    update.split(v.c, cu, cv, k.vec)
        .split(f.r[2], rzo, rzi, f.input_block, TailStrategy::GuardWithIf)
        .reorder(cv, cu, v.x, rzi, f.r[0], f.r[1], rzo, v.y);
  } else {
    update.split(v.c, cu, cv, k.vec).reorder(cv, cu, v.x, f.r[2], f.r[0], f.r[1], v.y);
  }
  if (k.vec > 1) update.vectorize(cv);
  update.unroll(cu).unroll(v.x);
  if (unroll_kx) update.specialize(f.geo.kernel_w == 3).unroll(f.r[0]);
}

struct ChannelsPath {
  Halide::Expr when;
  ChannelsTile tile;
};

// The register tiles of point `s`, each with the run-time condition it
// runs under, most specific first:
// - the point's tile on a row it divides, at unit stride (the broadcasts of
//   a tile then sit at constant offsets from one pointer, which a tile of
//   many columns needs to keep its addresses in registers), when the point
//   is not the target's default tile;
// - with ch_fit_rows, on a reduction of 128 taps or more and a row the
//   point's tile does not run on or divide (each task a whole row): two
//   channel vectors x 14 or 11 columns (unit stride) or 7 (any stride) where
//   that divides the row, as the registers allow (4 x 6 computes 60 columns
//   of a 56-wide row, 24 of a 22-wide one, 12 of a 7-wide one);
// - the default tile (4 x 6 on AVX-512), any stride;
// - the point's tile at unit stride (again when not the default);
// - the point's tile at any stride;
// - the full tile 3 columns wide (rows narrower than it);
// - narrower problems keep a tile of many accumulators: two channel vectors
//   (Cout_g of 2 to ch_vectors vectors: 32 channels on AVX-512) get their
//   own wide tile, 7 columns when the row is a multiple of 7 (the 56, 28, 14
//   and 7 wide maps of image networks: no columns computed twice by the
//   shifted last tile), and rows narrower than a tile get 3-column tiles.
//   On the MAML-like 32-channel maps of 14x14, 7x7 and 3x3 this took the
//   forward from 8.1 / 3.4 / 1.0 ms to the figures in the README;
// - one channel vector (Cout_g under 2 * vec); one column.
// The scalar tile is the unspecialized schedule.
inline std::vector<ChannelsPath> channels_paths(const ChannelsExtents& e, const ConvGeometry& geo,
                                                const ConvSchedule& s, const TargetFacts& facts,
                                                const Halide::Expr& task_cols) {
  using Halide::Expr;
  const int vec = facts.vector_floats;
  const int one_vector_columns = std::max(1, std::min(12, facts.registers - 3));
  const int two_vector_columns = std::max(1, std::min(12, (facts.registers - 3) / 2));
  const ConvSchedule d = default_conv_schedule(facts, ConvFamily::Channels);
  const ChannelsTile point{vec, s.ch_vectors, s.ch_columns}, fallback{vec, d.ch_vectors, d.ch_columns};
  const Expr point_fits = e.cout_g >= vec * s.ch_vectors && e.out_w >= s.ch_columns;
  const bool custom = s.ch_vectors != d.ch_vectors || s.ch_columns != d.ch_columns;
  std::vector<ChannelsPath> paths;
  // A Cout_g known at compile time that is an odd number of half vectors
  // (24 and 40 in MobileNet's and EfficientNet's projections, 24 = 3 x 8 on
  // AVX-512) takes a tile of exactly its half vectors: no lane is computed
  // twice, where whole vectors shifted inwards compute 24 channels as 32.
  if (const int64_t* cg = Halide::Internal::as_const_int(e.cout_g); cg && vec >= 8 && *cg % vec != 0 &&
      *cg % (vec / 2) == 0 && *cg < 8 * vec) {
    const int halves = static_cast<int>(*cg / (vec / 2));
    const int columns = std::min(12, (facts.registers - 1 - halves) / halves);
    if (columns >= 2) paths.push_back({e.out_w >= columns, {vec / 2, halves, columns}});
  }
  if (custom) paths.push_back({point_fits && e.out_w % s.ch_columns == 0 && geo.stride_x == 1, point});
  if (s.ch_fit_rows == 1) {
    // Rows the point's tile does not run on or divide, whole in each task:
    // two channel vectors x 14 or 11 columns (unit stride) or 7 (any) where
    // that divides the row (56, 28, 14; 22; 7, 35), no column computed twice.
    // Only on long reductions (128 taps or more): on short ones (8 -> 64
    // channels, 1x1 or 3x3) the wide tiles measured 5-17% slower than the
    // point's tile, whose extra columns cost less than the narrower tile's
    // loads and stores per FMA. fitted_row_columns() (conv_chooser.h) is
    // this rule on known extents; keep the two alike.
    const Expr fit = e.cout_g >= 2 * vec && task_cols == e.out_w &&
                     !(e.cout_g >= vec * s.ch_vectors && e.out_w % s.ch_columns == 0);
    const Expr long_reduction = geo.cin_g * geo.kernel_w * geo.kernel_h >= 128;
    for (int columns : {14, 11, 7}) {
      if (facts.registers < 2 * columns + 3) continue;
      const Expr when = columns > 7 ? long_reduction && geo.stride_x == 1 : long_reduction;
      paths.push_back({fit && when && e.out_w % columns == 0, {vec, 2, columns}});
    }
  }
  if (custom) {
    paths.push_back({e.cout_g >= vec * d.ch_vectors && e.out_w >= d.ch_columns, fallback});
    paths.push_back({point_fits && geo.stride_x == 1, point});
  }
  paths.push_back({point_fits, point});
  paths.push_back({e.cout_g >= vec * s.ch_vectors && e.out_w >= 3, {vec, s.ch_vectors, 3}});
  if (facts.registers >= 2 * 7 + 3)
    paths.push_back({e.cout_g >= 2 * vec && e.out_w % 7 == 0, {vec, 2, 7}});
  paths.push_back({e.cout_g >= 2 * vec && e.out_w >= two_vector_columns, {vec, 2, two_vector_columns}});
  paths.push_back({e.cout_g >= 2 * vec && e.out_w >= 3, {vec, 2, 3}});
  paths.push_back({e.cout_g >= vec && e.out_w >= one_vector_columns, {vec, 1, one_vector_columns}});
  paths.push_back({e.cout_g >= vec && e.out_w >= 3, {vec, 1, 3}});
  paths.push_back({e.cout_g >= vec, {vec, 1, 1}});
  std::vector<ChannelsPath> distinct;  // a point may make two conditions the same
  for (const ChannelsPath& p : paths) {
    bool seen = false;
    for (const ChannelsPath& q : distinct) seen = seen || Halide::Internal::equal(p.when, q.when);
    if (!seen) distinct.push_back(p);
  }
  return distinct;
}

}  // namespace detail

// Schedules `out` (the pipeline output, pure vars (x, y, c, g, outer...),
// computed from f.output) with point `s`. `inner` are vars of `outer` that
// run inside each task instead (broadcast_input_conv's bank b, so that all
// banks share the task's padded input).
inline void schedule_conv_cpu_channels(Halide::Func out, ConvFuncs& f,
                                       const std::vector<Halide::Var>& outer,
                                       const ChannelsExtents& e, const ConvSchedule& s,
                                       const TargetFacts& facts,
                                       const std::vector<Halide::Var>& inner = {}) {
  using namespace Halide;
  const ConvVars& v = f.v;
  const int vec = facts.vector_floats;
  std::vector<Var> task_outer;
  for (const Var& o : outer) {
    bool is_inner = false;
    for (const Var& i : inner) is_inner = is_inner || i.same_as(o);
    if (!is_inner) task_outer.push_back(o);
  }

  // Tasks: ch_task_rows rows, and as many columns as keep the task's padded
  // input near task_input_kb (all columns on the seed shapes; 256-channel,
  // 1024-wide images get chunks), at least one vector and one register
  // tile wide, overlapping at the right edge rather than narrower.
  const ConvGeometry& geo = f.geo;
  const int min_cols = (std::max(vec, s.ch_columns) + s.ch_columns - 1) / s.ch_columns * s.ch_columns;
  Expr budget_cols = (s.task_input_kb * 256) /
                     max(1, geo.cin_g * (s.ch_task_rows * geo.stride_y + geo.kernel_h - 1)) /
                     max(1, geo.stride_x);
  Expr task_cols = min(e.out_w, max(min_cols, budget_cols / s.ch_columns * s.ch_columns));

  // The copy of each task's block to y.
  // Straight into y (ch_direct, or ch_blocked), the last chunk of a row
  // shifts inwards: a guarded chunk would guard every column of its tiles.
  const bool direct = s.ch_blocked == 1 || s.ch_direct == 1;
  Var xt("xt"), yo("yo"), yi("yi"), t("t"), ct("ct");
  out.split(v.x, xt, v.x, task_cols, direct ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf)
      .split(v.y, yo, yi, s.ch_task_rows, TailStrategy::GuardWithIf);
  // Channel chunks (ch_task_channels): tasks of a map too small to give
  // every core rows of its own (7 x 7 at batch 1). A chunk is a whole
  // number of the widest tile (validate_conv_schedule), so every path's
  // tile fits in it; a group narrower than a chunk is one chunk; the last
  // chunk shifts inwards. Each chunk pads its input rows again.
  const bool chunks = s.ch_task_channels > 0;
  // (The channels of a chunk get a var of their own: split again under
  // v.c's name, the tiles' shifted split was bounded by the group's extent,
  // and the baked weights' bounds check failed at Cout_g + Cout_g - 65.)
  const Var c_task = chunks ? Var("c_task") : v.c;
  if (chunks) out.split(v.c, ct, c_task, min(e.cout_g, s.ch_task_channels), TailStrategy::ShiftInwards);
  std::vector<VarOrRVar> order{v.x, c_task, yi};
  for (const Var& i : inner) order.push_back(i);
  order.push_back(xt);
  if (chunks) order.push_back(ct);
  order.push_back(yo);
  order.push_back(v.g);
  for (const Var& o : task_outer) order.push_back(o);
  out.reorder(order);
  // The column chunks run inside a task (fusing them into the parallel loop
  // too left Halide 14 unable to bound g from the fused index, and the bias
  // bounds check then failed on NHWC outputs).
  if (chunks) {
    Var cy("ct_yo");
    out.fuse(ct, yo, cy).fuse(cy, v.g, t);
  } else {
    out.fuse(yo, v.g, t);
  }
  for (const Var& o : task_outer) out.fuse(t, o, t);
  // The chunks of a row run in parallel too (nested): a 1-D conv of one
  // image has one row (seed 1 channels-last: 1 task without this).
  out.parallel(t).parallel(xt);
  const Var block_at = inner.empty() ? xt : inner.front();
  if (vec > 1 && !direct) {
    // NHWC y: channel vectors; NCHW y: row vectors (strided reads of the block).
    out.specialize(e.y_channels_innermost && e.cout_g >= vec)
        .vectorize(c_task, vec, TailStrategy::ShiftInwards);
    out.specialize(e.out_w >= vec).vectorize(v.x, vec, TailStrategy::ShiftInwards);
  }

  // The task's block, channel-innermost, in register tiles. Paths, most
  // specific first: the full tile; the full tile 3 columns wide (rows
  // narrower than it); two channel vectors; one channel vector (Cout_g under
  // 2 * vec); one column; scalar. With ch_direct (or ch_blocked) the tiles are
  // y's own: no block, no copy, and the stores of a tile overlap the next
  // tile's FMAs; vector stores on a channel-innermost y, scattered ones (a
  // vector of channels over as many planes) on others.
  Func block = direct ? out : f.output;
  const Var row = direct ? yi : v.y;
  const Var block_c = direct ? c_task : v.c;
  if (direct) {
    f.output.compute_inline();
  } else {
    block.compute_at(out, block_at).reorder_storage(v.c, v.x, v.y);
  }
  const int ci_block = s.ch_ci_block;
  f.conv.compute_at(block, Var(ci_block > 0 ? "co" : "xo")).reorder_storage(v.c, v.x, v.y);
  Stage update = f.conv.update();
  const bool unroll_kx = s.ch_unroll_kx == 1;
  // The tiles' conditions see the channels of one task (a chunk of them
  // where ch_task_channels splits a group): a tile wider than the chunk
  // would shift below its first channel.
  ChannelsExtents task_e = e;
  if (chunks) task_e.cout_g = min(e.cout_g, s.ch_task_channels);
  const std::vector<detail::ChannelsPath> paths = detail::channels_paths(task_e, geo, s, facts, task_cols);
  if (vec > 1) {
    for (const detail::ChannelsPath& p : paths) {
      Stage conv = f.conv.specialize(p.when), conv_update = update.specialize(p.when);
      if (direct) {
        detail::schedule_channels_tile(f, block.specialize(p.when && e.y_channels_innermost), conv,
                                       conv_update, p.tile, unroll_kx, ci_block, row, block_c, false);
      }
      detail::schedule_channels_tile(f, block.specialize(p.when), conv, conv_update, p.tile, unroll_kx,
                                     ci_block, row, block_c);
    }
  }
  detail::schedule_channels_tile(f, block, f.conv, update, {1, 1, 1}, false, ci_block, row, block_c);

  if (f.input_block > 0) {
    // Per column chunk: the padded input rows in channel blocks. From a
    // channel-innermost x a dense copy, the channel blocks of a pixel
    // together (x read in one sequential stream); from others, vectors
    // along x, each stored across a block's lanes.
    f.padded.compute_inline();
    const Var cii("cii"), cio("cio");
    f.blocked.compute_at(out, xt);
    if (vec > 1 && f.input_block % vec == 0) {
      f.blocked.specialize(e.x_channels_innermost).reorder(cii, cio, v.x, v.y).vectorize(cii, vec);
      f.blocked.reorder(v.x, cii, v.y, cio).vectorize(v.x, vec, TailStrategy::GuardWithIf).unroll(cii);
    }
    return;
  }
  // Per column chunk: the padded input rows (x innermost), vectorised along x for an
  // NCHW x and along channels for an NHWC x.
  // A 1x1 conv without padding on a channels-innermost input (known at
  // compile time: the model compiler) that is a stored tensor reads it in
  // place; a copy would only move it (a MobileNet block's 144 -> 24
  // projection spent a third of its time copying). An input of inlined
  // arithmetic (EfficientNet's squeeze-excite Mul and its sigmoid) is
  // still computed once into the task's copy, not once per channel tile.
  const auto is_value = [](const Expr& x, int64_t v) {
    const int64_t* c = Halide::Internal::as_const_int(x);
    return c && *c == v;
  };
  if (e.input_is_a_load && Halide::Internal::is_const_one(e.x_channels_innermost) && is_value(geo.kernel_w, 1) &&
      is_value(geo.kernel_h, 1) && is_value(geo.pad_x, 0) && is_value(geo.pad_y, 0)) {
    f.padded.compute_inline();
    return;
  }
  f.padded.compute_at(out, xt);
  if (vec > 1) {
    f.padded.specialize(e.x_channels_innermost).vectorize(v.c, vec, TailStrategy::GuardWithIf);
    f.padded.vectorize(v.x, vec, TailStrategy::GuardWithIf);
  }
}

}  // namespace batchconv_gen

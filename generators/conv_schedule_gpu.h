// The gpu schedule family (schedule_space.h) of the conv generators and the
// model compiler's convs: one schedule for the CUDA and the OpenCL target.
//
// Measured once, on an NVIDIA H200 (2026-12-04,
// benchmarks/results-gpu-h200-2026-12-04.md), in the guarded form alone:
// correct, and 16-100x slower than cuDNN. Halide finds no constant size for
// one thread's accumulator tile there (guarded tails; a block index fusing
// the channel tile with the group and outer dimensions), so it lifts the
// tiles of the whole grid into a global buffer, read and written at every
// reduction step. Bounding the tile with bound_extent put it in registers
// (6-7x faster) but made CUDA kernels trap: Halide checks the bound inside
// the kernel against a loosely bounded region. The shifted form below keeps
// the tile in registers with no bound, no check and no lifted buffer (the
// generated PTX has no trap and no local memory); it is the default, and
// its speed is not measured yet.
//
// The form (after Halide's apps/conv_layer GPU schedule, adapted to NCHW):
//   block    gpu_threads_x x gpu_threads_y threads over a tile of
//            (gpu_threads_x * gpu_pixels_x) columns x (gpu_threads_y *
//            gpu_pixels_y) rows of gpu_channels output channels of one
//            (group, image, slice). Guarded form: blocks (channel tile,
//            group, image, slice) fused as blockIdx.x (2^31 of them),
//            column tiles as y, row tiles as z. Shifted form: (group,
//            image) as x, column tiles as y, (row tile, slice) as z, and
//            the channel tiles a loop inside each thread.
//   thread   gpu_pixels_x adjacent columns x gpu_pixels_y rows x
//            gpu_channels output channels, accumulated in registers (the
//            conv Func computed per thread, every loop over it unrolled),
//            the reduction (kernel rows, columns, input channels in steps of
//            gpu_reduction) inside. With gpu_pixels_x = 1 (the default) a
//            warp's input loads and output stores are consecutive floats of
//            an NCHW row; a weight is the same address for the whole block
//            (one broadcast load).
//   shared   gpu_shared = 1 stages the block's weights (gpu_channels x Cin_g
//            x KH x KW floats, sized at launch) in shared memory; off by
//            default: a launch whose weights exceed the device's shared
//            memory fails with the driver's error.
//   1-D      H' = 1 runs its own copy with all threads along x.
//   shift    gpu_shift = 1: on outputs of at least one block tile in x and
//            y (and a thread's channels in c), the edge tiles are shifted
//            inward (recomputing a few outputs) instead of guarded, so
//            every thread's tile has a constant size and Halide keeps it
//            in registers; smaller outputs run the guarded form, whose
//            accumulators are lifted to a global buffer (above). The
//            default; its speed is not measured on a GPU yet.
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "schedule_space.h"

namespace batchconv_gen {

// Schedules `out` (dims (x, y, c, g, outer...), the conv's output or its
// ReLU) and the conv Funcs `f` on a GPU target. `out_w` and `out_h` are the
// output's columns and rows (one row: 1-D convs), `outer_extents` those of
// the `outer` dims.
inline void schedule_conv_gpu(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                              const Halide::Expr& out_w, const Halide::Expr& out_h,
                              const std::vector<Halide::Expr>& outer_extents, const ConvSchedule& s) {
  using namespace Halide;
  const Expr one_row = out_h == 1;
  const ConvVars& v = f.v;
  Var xb("xb"), xi("xi"), xp("xp"), xt("xt"), yb("yb"), yi("yi"), yp("yp"), yt("yt");
  Var cb("cb"), cp("cp"), t("t"), xo("xo"), yo("yo"), co("co");
  RVar rzo("rzo"), rzi("rzi");
  const int ch = s.gpu_channels;

  // Threads (tx, ty) with px x py pixels each over blocks of (cb, g, outer).
  auto tile_out = [&](Stage st, int tx, int ty, int px, int py, TailStrategy tail) {
    st.split(v.x, xb, xi, tx * px, tail)
        .split(xi, xt, xp, px)
        .split(v.y, yb, yi, ty * py, tail)
        .split(yi, yt, yp, py)
        .split(v.c, cb, cp, ch, tail);
    std::vector<VarOrRVar> order{xp, yp, cp, xt, yt, cb, v.g};
    for (const Var& o : outer) order.push_back(o);
    order.push_back(xb);
    order.push_back(yb);
    st.reorder(order);
    st.fuse(cb, v.g, t);
    for (const Var& o : outer) st.fuse(t, o, t);
    st.unroll(xp).unroll(yp).unroll(cp).gpu_threads(xt, yt).gpu_blocks(t, xb, yb);
  };
  // The shifted form: no tails (ShiftInwards; outputs of at least one tile)
  // and the channel tiles a serial loop inside each thread, so no block
  // index mixes the channel tile with the group and outer dimensions (whose
  // decomposition Halide bounds loosely once the channel split has a
  // shifted edge). That loop is named xt, the level the conv tile is
  // computed at in every form; the thread loop along x is xthr.
  Var xthr("xthr");
  auto tile_out_shifted = [&](Stage st, int tx, int ty, int px, int py) {
    st.split(v.x, xb, xi, tx * px, TailStrategy::ShiftInwards)
        .split(xi, xthr, xp, px)
        .split(v.y, yb, yi, ty * py, TailStrategy::ShiftInwards)
        .split(yi, yt, yp, py)
        .split(v.c, xt, cp, ch, TailStrategy::ShiftInwards);
    // Blocks: (g, first outer) along x, column tiles along y, (row tiles,
    // further outer dims) along z: each fused pair is one division and one
    // remainder, which Halide bounds exactly (a remainder of a remainder it
    // does not). The specialization's condition keeps y and z in range.
    std::vector<VarOrRVar> order{xp, yp, cp, xt, xthr, yt, v.g};
    if (!outer.empty()) order.push_back(outer[0]);
    order.push_back(xb);
    order.push_back(yb);
    for (size_t i = 1; i < outer.size(); ++i) order.push_back(outer[i]);
    st.reorder(order);
    if (outer.empty()) {
      st.rename(v.g, t);
    } else {
      st.fuse(v.g, outer[0], t);
    }
    Var yz("yz");
    st.rename(yb, yz);
    for (size_t i = 1; i < outer.size(); ++i) st.fuse(yz, outer[i], yz);
    st.unroll(xp).unroll(yp).unroll(cp).gpu_threads(xthr, yt).gpu_blocks(t, xb, yz);
  };
  // One thread's px x py x ch accumulators: whole tiles (RoundUp; the
  // padded input and the clamped weight index make it safe), every loop
  // over them unrolled so they live in registers.
  auto tile_conv = [&](Stage init, Stage update, int px, int py) {
    for (Stage st : {init, update}) {
      st.split(v.x, xo, xp, px, TailStrategy::RoundUp)
          .split(v.y, yo, yp, py, TailStrategy::RoundUp)
          .split(v.c, co, cp, ch, TailStrategy::RoundUp);
    }
    init.reorder(xp, yp, cp, xo, yo, co).unroll(xp).unroll(yp).unroll(cp);
    update.split(f.r.z, rzo, rzi, s.gpu_reduction, TailStrategy::GuardWithIf)
        .reorder(xp, yp, cp, rzi, f.r.x, f.r.y, rzo, xo, yo, co)
        .unroll(xp)
        .unroll(yp)
        .unroll(cp);
  };

  const int tx = s.gpu_threads_x, ty = s.gpu_threads_y, px = s.gpu_pixels_x, py = s.gpu_pixels_y;
  const Expr whole_channels = f.geo.cout_g >= ch;
  // The shifted form's grid: column tiles along y, row tiles times the
  // outer dims after the first along z, each at most 65535 blocks.
  auto fits_grid = [&](int tile_w, int tile_h) {
    Expr z = cast<int64_t>((out_h + tile_h - 1) / tile_h);
    for (size_t i = 1; i < outer_extents.size(); ++i) z *= cast<int64_t>(outer_extents[i]);
    return (out_w + tile_w - 1) / tile_w <= 65535 && z <= 65535;
  };
  // 1-D: all threads along x, one row each.
  if (s.gpu_shift == 1) {
    tile_out_shifted(out.specialize(one_row && out_w >= tx * ty * px && whole_channels && fits_grid(tx * ty * px, 1)),
                     tx * ty, 1, px, 1);
  }
  tile_out(out.specialize(one_row), tx * ty, 1, px, 1, TailStrategy::GuardWithIf);
  tile_conv(f.conv.specialize(one_row), f.conv.update().specialize(one_row), px, 1);
  if (s.gpu_shift == 1) {
    tile_out_shifted(
        out.specialize(out_w >= tx * px && out_h >= ty * py && whole_channels && fits_grid(tx * px, ty * py)), tx,
        ty, px, py);
  }
  tile_out(out, tx, ty, px, py, TailStrategy::GuardWithIf);
  tile_conv(f.conv, f.conv.update(), px, py);
  f.conv.compute_at(out, xt);

  if (s.gpu_shared == 1) {
    Func staged = f.weight.in(f.conv);
    const std::vector<Var> a = staged.args();  // (kx, ky, ci, co, g, b)
    staged.compute_at(out, t).store_in(MemoryType::GPUShared).gpu_threads(a[2]);
  }
}

}  // namespace batchconv_gen

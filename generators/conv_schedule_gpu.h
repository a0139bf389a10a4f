// The gpu schedule family (schedule_space.h) of the conv generators and the
// model compiler's convs: one schedule for the CUDA and the OpenCL target.
//
// Correct on an NVIDIA H200 (tests/gpu, 2026-12-04) and through OpenCL on
// PoCL (CI), but 16-100x slower than cuDNN there: Halide finds no constant
// size for one thread's accumulator tile (guarded tails, the fused block
// index) and lifts it into a global buffer over the grid, read and written
// at every reduction step. Bounding the tile (bound_extent) puts it in
// registers (6-7x faster) but makes CUDA kernels trap in x-tail threads;
// see benchmarks/results-gpu-h200-2026-12-04.md.
//
// The form (after Halide's apps/conv_layer GPU schedule, adapted to NCHW):
//   block    gpu_threads_x x gpu_threads_y threads over a tile of
//            (gpu_threads_x * gpu_pixels_x) columns x (gpu_threads_y *
//            gpu_pixels_y) rows of gpu_channels output channels of one
//            (group, image, slice). Blocks: (channel tile, group, image,
//            slice) fused as blockIdx.x (2^31 of them), column tiles as y,
//            row tiles as z.
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
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "schedule_space.h"

namespace batchconv_gen {

// Schedules `out` (dims (x, y, c, g, outer...), the conv's output or its
// ReLU) and the conv Funcs `f` on a GPU target. `one_row` is true when the
// output has a single row (1-D convs).
inline void schedule_conv_gpu(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                              const Halide::Expr& one_row, const ConvSchedule& s) {
  using namespace Halide;
  const ConvVars& v = f.v;
  Var xb("xb"), xi("xi"), xp("xp"), xt("xt"), yb("yb"), yi("yi"), yp("yp"), yt("yt");
  Var cb("cb"), cp("cp"), t("t"), xo("xo"), yo("yo"), co("co");
  RVar rzo("rzo"), rzi("rzi");
  const int ch = s.gpu_channels;

  // Threads (tx, ty) with px x py pixels each over blocks of (cb, g, outer).
  auto tile_out = [&](Stage st, int tx, int ty, int px, int py) {
    st.split(v.x, xb, xi, tx * px, TailStrategy::GuardWithIf)
        .split(xi, xt, xp, px)
        .split(v.y, yb, yi, ty * py, TailStrategy::GuardWithIf)
        .split(yi, yt, yp, py)
        .split(v.c, cb, cp, ch, TailStrategy::GuardWithIf);
    std::vector<VarOrRVar> order{xp, yp, cp, xt, yt, cb, v.g};
    for (const Var& o : outer) order.push_back(o);
    order.push_back(xb);
    order.push_back(yb);
    st.reorder(order);
    st.fuse(cb, v.g, t);
    for (const Var& o : outer) st.fuse(t, o, t);
    st.unroll(xp).unroll(yp).unroll(cp).gpu_threads(xt, yt).gpu_blocks(t, xb, yb);
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
  // 1-D: all threads along x, one row each.
  tile_out(out.specialize(one_row), tx * ty, 1, px, 1);
  tile_conv(f.conv.specialize(one_row), f.conv.update().specialize(one_row), px, 1);
  tile_out(out, tx, ty, px, py);
  tile_conv(f.conv, f.conv.update(), px, py);
  f.conv.compute_at(out, xt);

  if (s.gpu_shared == 1) {
    Func staged = f.weight.in(f.conv);
    const std::vector<Var> a = staged.args();  // (kx, ky, ci, co, g, b)
    staged.compute_at(out, t).store_in(MemoryType::GPUShared).gpu_threads(a[2]);
  }
}

}  // namespace batchconv_gen

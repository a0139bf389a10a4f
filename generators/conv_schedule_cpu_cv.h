// CPU schedule for the channels-in-vector form (define_conv_cv): the
// register tile is tcv vectors of output channels x px output columns of one
// row, so each reduction step loads tcv packed-weight vectors, broadcasts px
// input values and issues px*tcv FMAs; no lane is wasted on a row's tail.
// A task (whole rows, kCvRows at a time, of one group and image) accumulates
// into `block`, stored channel-innermost, and the output stage reads it back
// transposed (a strided load per output vector), which costs O(output): the
// runtime picks this form only where rows fill vectors poorly and the
// reduction is long (seed 2: 22 columns, 3x7x7 taps; see runtime/src/
// conv_path.h), and requires W' >= vec and Cout_g >= vec * tcv.
//
// Register budget: px*tcv + tcv + 1 <= registers: AVX-512 px = 6, tcv = 4
// (64 channels, 29 registers); AVX2 and SSE px = 6, tcv = 2 (15 of 16).
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "conv_schedule_cpu.h"

namespace batchconv_gen {

// Output rows per task (a 22 x 8 x 64 block is 45 KB, in L2 with its input).
constexpr int kCvRows = 8;
// Output columns per register tile.
constexpr int kCvColumns = 6;

inline void schedule_conv_cpu_cv(Halide::Func out, ConvFuncs& f, const std::vector<Halide::Var>& outer,
                                 const Halide::Target& target) {
  using namespace Halide;
  const CpuRegisters regs = cpu_registers(target);
  const int vec = regs.vec;
  const int tcv = regs.count >= 32 ? 4 : 2;
  const int px = kCvColumns;
  const ConvVars& v = f.v;
  const TailStrategy shift = TailStrategy::ShiftInwards;

  // Output: tasks of kCvRows rows of one group and image (and slice b);
  // inside, x vectors reading the block transposed.
  Var yo("yo"), yi("yi"), t("t"), xo("xo"), xi("xi");
  out.split(v.y, yo, yi, kCvRows, TailStrategy::GuardWithIf)
      .split(v.x, xo, xi, vec, shift)
      .reorder(xi, xo, yi, v.c, yo, v.g);
  out.fuse(yo, v.g, t);
  for (const Var& o : outer) out.fuse(t, o, t);
  out.parallel(t).vectorize(xi);

  // The block: register tiles of tcv channel vectors x px columns.
  Var co("co"), cu("cu"), cv("cv"), bx("bx"), bxi("bxi");
  f.block.compute_at(out, t)
      .split(v.c, co, v.c, vec * tcv, shift)
      .split(v.x, bx, bxi, px, shift)
      .split(v.c, cu, cv, vec)
      .reorder(cv, cu, bxi, bx, co, v.y)
      .vectorize(cv)
      .unroll(cu)
      .unroll(bxi);
  f.conv.compute_at(f.block, bx).split(v.c, cu, cv, vec).vectorize(cv).unroll(cu).unroll(v.x);
  Stage u = f.conv.update();
  u.split(v.c, cu, cv, vec)
      .reorder(cv, cu, v.x, f.r[0], f.r[1], f.r[2], v.y)
      .vectorize(cv)
      .unroll(cu)
      .unroll(v.x);
  u.specialize(f.geo.kernel_w == 3).unroll(f.r[0]);

  // Per task: its rows of padded input, and its group's weights repacked
  // with the output channel innermost.
  f.padded.compute_at(out, t).vectorize(v.x, vec);
  f.weight_packed.compute_at(out, t).vectorize(v.c, vec, TailStrategy::GuardWithIf);
}

}  // namespace batchconv_gen

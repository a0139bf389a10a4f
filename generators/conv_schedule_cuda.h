// CUDA schedule shared by the conv generators: one thread per output pixel
// and channel, 16x16 pixel blocks, the reduction in registers.
// Not yet measured: this project builds and tests the CPU kernels only; the
// schedule exists so that a CUDA target compiles to something correct.
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"

namespace batchconv_gen {

inline void schedule_conv_cuda(Halide::Func out, ConvFuncs& f,
                               const std::vector<Halide::Var>& outer) {
  using namespace Halide;
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), t("t");
  out.gpu_tile(f.v.x, f.v.y, xo, yo, xi, yi, 16, 16, TailStrategy::GuardWithIf);
  out.fuse(f.v.c, f.v.g, t);
  for (const Var& o : outer) out.fuse(t, o, t);
  out.gpu_blocks(t);
  f.conv.compute_at(out, xi);
  f.conv.update().reorder(f.r[0], f.r[1], f.r[2]);
}

}  // namespace batchconv_gen

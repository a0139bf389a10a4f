// The register-tiled CPU schedule of a linear layer, shared by the
// batched_linear generator and the model compiler's MatMul and Gemm:
//   acc(m, n, outer...) = init(m, n, outer...) + sum_r x(r, n, ...) * w(m, r, ...)
//   out(m, n, outer...) = f(acc)   (or out = acc)
// m is the output column (innermost, contiguous in w and out), n the row.
//
// Register tile: tm vectors of m x tn rows of n, the r loop inside; each
// step loads tm weight vectors and broadcasts tn inputs. Row tiles and the
// outer vars run in parallel. M >= 2 vectors uses tm = 2, M >= 1 vector
// tm = 1 (whole tiles, shifted inwards at the edge); narrower M runs scalar.
// Registers: tm*tn accumulators + tm weight vectors + 1 broadcast <= the
// register file (AVX-512: 2 x 12 = 24 + 3; AVX2: 2 x 6 = 12 + 3).
// The row tiles of acc round up past N: reads of x's row must be clamped
// (the caller's algorithm does it).
//
// Achieved by the generator (AVX-512, 1 thread, thread CPU time on a loaded
// Zen 5; peak 218.5 GFLOP/s per thread): B = 32, N = K = M = 256: 126 GFLOP/s
// (58%), 143 (66%) with a shared x; seed 3's B = 100, N = 10, 50 -> 75: 79
// (36%), too small to amortise the tile edges (75 = 4.7 vectors).
#pragma once

#include <algorithm>
#include <vector>

#include "Halide.h"
#include "schedule_space.h"

namespace batchconv_gen {

inline void schedule_linear_cpu(Halide::Func out, Halide::Func acc, const Halide::Var& m, const Halide::Var& n,
                                const std::vector<Halide::Var>& outer, const Halide::RVar& r,
                                const Halide::Expr& m_extent, const TargetFacts& facts) {
  using namespace Halide;
  const int vec = facts.vector_floats;
  const int tn = std::min(12, std::max(1, (facts.registers - 3) / 2));
  Var mo("mo"), mi("mi"), no("no"), ni("ni"), t("t"), mv("mv");
  // vectors = 0: one output column per tile, scalar code.
  auto tile = [&](Stage o, Stage init, Stage update, int vectors) {
    const int width = vectors > 0 ? vec * vectors : 1;
    o.split(m, mo, mi, width, TailStrategy::ShiftInwards)
        .split(n, no, ni, tn, TailStrategy::GuardWithIf)
        .reorder(mi, ni, mo, no);
    Var task = no;
    for (const Var& v : outer) {
      Var fused(task.name() + "_" + v.name());
      o.fuse(task, v, fused);
      task = fused;
    }
    o.parallel(task);
    if (vectors == 0) return;
    o.vectorize(mi, vec);
    for (Stage s : {init, update}) s.split(n, no, n, tn, TailStrategy::RoundUp).split(m, m, mv, vec);
    init.reorder(mv, m, n, no).vectorize(mv).unroll(m).unroll(n);
    update.reorder(mv, m, n, r, no).vectorize(mv).unroll(m).unroll(n);
  };
  Stage update = acc.update();
  for (int vectors : {2, 1}) {
    Expr fits = m_extent >= vec * vectors;
    tile(out.specialize(fits), acc.specialize(fits), update.specialize(fits), vectors);
  }
  tile(out, acc, update, 0);
  acc.compute_at(out, mo);
}

}  // namespace batchconv_gen

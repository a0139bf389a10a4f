// The register-tiled CPU schedule of a linear layer, shared by the
// batched_linear generator and the model compiler's MatMul and Gemm:
//   acc(m, n, outer...) = init(m, n, outer...) + sum_r x(r, n, ...) * w(m, r, ...)
//   out(m, n, outer...) = f(acc)   (or out = acc)
// m is the output column (innermost, contiguous in w and out), n the row.
//
// Register tile: tm vectors of m x tn rows of n, the r loop inside; each
// step loads tm weight vectors and broadcasts tn inputs. M >= 2 vectors uses
// tm = 2, M >= 1 vector tm = 1 (whole tiles, shifted inwards at the edge);
// narrower M runs scalar. Registers: tm*tn accumulators + tm weight vectors
// + 1 broadcast <= the register file (AVX-512: 2 x 12 = 24 + 3; AVX2:
// 2 x 6 = 12 + 3; linear_row_tile). The row tiles of acc round up past N:
// reads of x's row must be clamped (the caller's algorithm does it). The
// tile's accumulators live on the stack (constant size).
//
// Tasks (one parallel loop): kLinearRowTiles row tiles (more for a short
// K, fewer for a short N) x up to kLinearColumnTiles column tiles x one
// slice of the outer vars. Panels,
// where the caller passes the operands and the chooser (linear_chooser.h)
// finds they pay:
// - weights: each column tile of w, all of K, copied into a dense panel
//   before the task's row tiles read it (else each step reads tm vectors a
//   row of w apart, and scalar tiles one float M apart);
// - rows: the task's rows of x, all of K, copied once per task with the row
//   index innermost, so a tile's tn broadcasts per step sit at fixed offsets
//   from one pointer (else tn row pointers, which spill on x86, and tn rows
//   K floats apart, which share L1 sets when K is a multiple of 512).
// Measured (JIT, AMD EPYC Zen 4, 2 threads, same run as the in-place form):
// 256 x 1024 x 1024, both panels: 2.0x; 1000 x 2048 x 10 (scalar tiles),
// weight panel: 12x.
#pragma once

#include <algorithm>
#include <vector>

#include "Halide.h"
#include "linear_chooser.h"
#include "schedule_space.h"

namespace batchconv_gen {

// Enough row tiles that each copied weight vector serves 8 x tn vector
// FMAs; enough column tiles that each copied row element serves 16 of them.
constexpr int kLinearRowTiles = 8;
constexpr int kLinearColumnTiles = 16;

// The operands as the accumulator's update reads them, for the panel copies
// (each undefined: read in place).
//   rows(k, n, outer...): x with its row index already clamped (the row
//     tiles of acc round up past N), so the tile reads rows(r, n + i);
//   weights: w, whose argument column_arg is the output column m.
struct LinearOperands {
  Halide::Func rows;
  Halide::Func weights;
  int column_arg = 0;
};

inline void schedule_linear_cpu(Halide::Func out, Halide::Func acc, const Halide::Var& m, const Halide::Var& n,
                                const std::vector<Halide::Var>& outer, const Halide::RVar& r,
                                const Halide::Expr& m_extent, const Halide::Expr& n_extent,
                                const TargetFacts& facts, const LinearOperands& operands = {}) {
  using namespace Halide;
  const int vec = facts.vector_floats;
  const int tn = linear_row_tile(facts);
  // Row tiles per task: kLinearRowTiles, more for a short K (up to 64 row
  // tiles, ~4K multiply-adds per row and column of a task), fewer where N
  // would otherwise make fewer than 8 blocks of rows.
  // (Seed 1's 4 x 16 -> 16 layers on a shared x of 1e6 rows: 44 ms with
  // 8 row tiles a task, 27 ms with 64.)
  Expr row_blocks_min = (n_extent + 8 * tn - 1) / (8 * tn);
  Expr row_tiles = clamp(min(max(4096 / max(r.extent(), 1), kLinearRowTiles), row_blocks_min), 1, 64);
  Var mo("mo"), mi("mi"), mg("mg"), mt("mt"), no("no"), ni("ni"), nb("nb"), nt("nt"), mv("mv");
  // Every specialisation names its loops the same, so that the panels can
  // be computed at them.
  Var task("mg_nb");
  for (const Var& v : outer) task = Var(task.name() + "_" + v.name());
  // vectors = 0: one output column per tile, scalar code.
  auto tile = [&](Stage o, Stage init, Stage update, int vectors) {
    const int width = vectors > 0 ? vec * vectors : 1;
    o.split(m, mo, mi, width, TailStrategy::ShiftInwards)
        .split(mo, mg, mt, kLinearColumnTiles, TailStrategy::GuardWithIf)
        .split(n, no, ni, tn, TailStrategy::GuardWithIf)
        .split(no, nb, nt, row_tiles, TailStrategy::GuardWithIf)
        .reorder(mi, ni, nt, mt, mg, nb);
    Var fused("mg_nb");
    o.fuse(mg, nb, fused);
    for (const Var& v : outer) {
      Var next(fused.name() + "_" + v.name());
      o.fuse(fused, v, next);
      fused = next;
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
  acc.compute_at(out, nt).store_in(MemoryType::Stack);
  // The task's rows, all of K, stored row index innermost: a tile's tn
  // broadcasts per step are at fixed offsets from one pointer.
  if (operands.rows.defined()) {
    Func rows = operands.rows;
    std::vector<Var> args = rows.args();
    std::vector<Var> order{args.at(1), args.at(0)};
    order.insert(order.end(), args.begin() + 2, args.end());
    rows.compute_at(out, task).reorder_storage(order);
  }
  // The column tile's weights, all of K: a dense panel read in order.
  if (operands.weights.defined()) {
    Func source = operands.weights;
    Func panel = source.in(acc);
    std::vector<Var> args = panel.args();
    const Var col = args.at(operands.column_arg);
    if (operands.column_arg != 0) {
      std::vector<Var> order{col};
      for (const Var& a : args)
        if (a.name() != col.name()) order.push_back(a);
      panel.reorder_storage(order).reorder(std::vector<VarOrRVar>(order.begin(), order.end()));
    }
    panel.compute_at(out, mt).vectorize(col, vec, TailStrategy::GuardWithIf);
  }
}

}  // namespace batchconv_gen

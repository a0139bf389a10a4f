// Which panel copies a batched-linear call's CPU tiles read through
// (linear_schedule_cpu.h): the runtime picks one of the three AOT variants of
// batched_linear with it, the model compiler schedules each MatMul and Gemm
// with it, on the facts of the target that runs them. No Halide dependency.
#pragma once

#include <cstdint>

#include "schedule_space.h"

namespace batchconv_gen {

enum class LinearPanels {
  None,     // x and w read in place
  Weights,  // each task copies its column tiles of w, all of K, into dense panels
  All,      // also its rows of x, transposed (row index innermost)
};

// Rows of one register tile (linear_schedule_cpu.h): the accumulators and
// two weight vectors fill the register file.
inline int linear_row_tile(const TargetFacts& t) {
  const int rows = (t.registers - 3) / 2;
  return rows < 1 ? 1 : (rows > 12 ? 12 : rows);
}

// For y (N, M) = x (N, K) @ w (K, M), per slice. Measured on an AMD EPYC
// (Zen 4, AVX-512, 2 threads; JIT sweep of N 10-1000, K 16-2048, M 10-512,
// every variant interleaved in one run):
// - fewer columns than a vector (scalar tiles, which read a column of w
//   M floats apart on every step): the weight panel, 6-14x faster;
// - x's transposed copy costs about one cycle an element, which only pays
//   where a task's x rows serve many column tiles (M >= 16 tiles of two
//   vectors, 512 floats on AVX-512) and K is long (>= 512; rows of 2 KB or
//   more, whose lines share L1 sets across a tile's rows): 0.71-0.87x the
//   time of in-place reads, 0.5x on a 256 x 1024 x 1024 layer; with fewer
//   column tiles it cost 1.1-1.8x;
// - otherwise in place (the weight panel alone measured 1.0-1.4x slower).
inline LinearPanels choose_linear_panels(int64_t n, int64_t k, int64_t m, const TargetFacts& t) {
  const int64_t vec = t.vector_floats > 0 ? t.vector_floats : 1;
  if (m < vec) return LinearPanels::Weights;
  if (n > linear_row_tile(t) && k >= 512 && m >= 16 * 2 * vec) return LinearPanels::All;
  return LinearPanels::None;
}

inline const char* linear_panels_name(LinearPanels p) {
  switch (p) {
    case LinearPanels::Weights: return "weights";
    case LinearPanels::All: return "all";
    default: return "none";
  }
}

}  // namespace batchconv_gen

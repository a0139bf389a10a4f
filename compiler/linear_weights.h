// The B (K x N) of a MatMul or Gemm stored the way the CPU schedule's
// register tiles read it (linear_schedule_cpu.h): a tile covers W consecutive
// output columns (two vectors, or one when N is under two) and all of K, so B
// is stored as panels P(t, k, j) = B(k, t * W + j), each tile's weights one
// dense run read in order. Baked weights are packed at compile time, a B
// known only at run time by a stage of the pipeline once per call; no task
// then copies a panel, and no two tasks copy the same one.
#pragma once

#include <cstdint>
#include <optional>

#include "lowering_context.h"
#include "schedule_space.h"

namespace batchconv::compiler {

struct LinearWeights {
  LTensor tensor;  // the panels (N / width, K, width), or B as (K, N)
  int width = 0;   // W; 0: not packed
  // B(k, col): col is the output column, k the reduction index.
  Halide::Expr at(const Halide::Expr& k, const Halide::Expr& col) const;
};

// The panel width the CPU tiles use for N output columns, or 0 when B is
// better left as it is: scalar tiles (N under one vector, which copy their
// own panels), or N not a multiple of the width (the last tile is shifted
// inwards and would straddle two panels).
int linear_panel_width(int64_t n, const batchconv_gen::TargetFacts& facts);

// B (K, N), or (N, K) when `transposed` (PyTorch's Linear exports Gemm
// transB = 1), baked in: packed into panels when linear_panel_width allows,
// else stored (K, N), so that the panels the tiles copy are dense rows of B
// rather than transposing gathers.
LinearWeights baked_linear_weights(LoweringContext& cx, const ir::Node& n, const ir::Tensor& b, bool transposed,
                                   const batchconv_gen::TargetFacts& facts);

// B (K, N), or (N, K) when `transposed`, known only at run time (a runtime
// weight, or a tensor the model computes): packed into the same panels once
// per call by a stage of the pipeline, where the tiles would otherwise copy
// their panels in every row block (the chooser picks panels,
// linear_chooser.h, and `rows` spans more than one block); else nullopt
// (the tiles read or copy B as it is).
std::optional<LinearWeights> runtime_linear_weights(LoweringContext& cx, const ir::Node& n, const LTensor& b,
                                                    bool transposed, int64_t rows,
                                                    const batchconv_gen::TargetFacts& facts);

// How a 2-D B of `rows` result rows in all is stored on this CPU target:
// baked_linear_weights for baked float data, runtime_linear_weights for a B
// known at run time; nullopt on a GPU, for another rank, or where B stays as
// it is (the tiles read or copy it).
std::optional<LinearWeights> linear_weights(LoweringContext& cx, const ir::Node& n, const LTensor& b, bool transposed,
                                            int64_t rows);

}  // namespace batchconv::compiler

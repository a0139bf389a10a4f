// The fusion plan: which nodes of a model run inside another node's stage,
// decided in one place before any op is lowered.
//
// A conv (Conv or batchconv.BatchedWeightConv), Gemm or MatMul takes an
// epilogue (epilogue.h): the chain of elementwise nodes (elementwise.h) after it, each the only reader of the
// value before it (or the pair x * act(x), SiLU as PyTorch exports it:
// Sigmoid and the Mul, the two readers of x), none of those values a graph output: activations (Relu,
// LeakyRelu, Clip, Sigmoid, Tanh, ...), an inference BatchNormalization
// with runtime statistics, and arithmetic with another tensor (a residual
// Add, a per-channel Mul). Their arithmetic is applied as the producer's
// register tiles are stored, so its storage holds the chain's last value,
// which a graph output is then computed straight into, and which a reader
// reads as a plain load (a Gemm's input is then not copied first); no pass
// over the producer's result is left. A node joins only where every other
// input it reads is ready before the producer runs (a graph input, a
// constant or the result of an earlier node); the producer's lowering drops
// the rest of the chain at the first node whose other operand would
// broadcast the result to a larger shape (fitted_epilogue), and a MatMul
// with a 1-D operand drops all of it. A producer evaluated at compile time
// gives its epilogue back (LoweringContext::unfuse_epilogue).
//
// A BatchNormalization after a conv with constant weights and parameters is
// already part of the conv's weights and bias (the rewrite
// fold_batch_norm_into_conv, run before lowering).
#pragma once

#include "lowering_context.h"

namespace batchconv::compiler {

// Marks every epilogue in cx (LoweringContext::epilogue / is_fused).
void plan_fusions(LoweringContext& cx);

}  // namespace batchconv::compiler

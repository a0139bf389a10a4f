// The fusion plan: which nodes of a model run inside another node's stage,
// decided in one place before any op is lowered.
//
// Today: a Relu whose input is a Conv or batchconv.BatchedWeightConv result
// read by nothing else (and not a graph output) runs inside the conv (the
// algorithm's fused activation), so the conv's storage holds the Relu's
// value and a Conv -> Relu graph output is still written in place. A conv
// that is evaluated at compile time (constant inputs) gives its Relu back
// (LoweringContext::unfuse_activation). An inference BatchNormalization
// after a conv with constant weights and parameters is already part of the
// conv's weights and bias (the rewrite fold_batch_norm_into_conv, run before
// lowering); one with runtime parameters is inlined into its readers.
#pragma once

#include "lowering_context.h"

namespace batchconv::compiler {

// Marks every fused node in cx (LoweringContext::fused_activation /
// is_fused).
void plan_fusions(LoweringContext& cx);

}  // namespace batchconv::compiler

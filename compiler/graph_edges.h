// The pipeline's edges: each graph input an ImageParam with the model's
// static shape (or channels-last, --edge-layout), each graph output one of
// the pipeline's outputs, written straight from the stage that computes it
// where nothing else reads that stage.
#pragma once

#include <vector>

#include "lowering_context.h"

namespace batchconv::compiler {

// Defines v (a graph input with a known shape) as a dense ImageParam
// argument; appends it to cx.inputs.
void lower_input(LoweringContext& cx, const ir::Value* v);
// Appends the graph outputs, in order, to cx.outputs.
void lower_outputs(LoweringContext& cx, const std::vector<ir::Value*>& outputs);

}  // namespace batchconv::compiler

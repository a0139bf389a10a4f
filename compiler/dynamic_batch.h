// A batch chosen at run time (batchconv-compile --dynamic-batch).
//
// The model is lowered with its inputs bound at batch 1, and every value
// computed from a graph input keeps the batch as its leading dim: the
// pipeline reads that extent from the first input and the schedules, chosen
// for batch 1 (the shape with the fewest parallel tasks), loop over it. What
// keeps the batch leading is checked, not assumed: the model is also bound
// at batch 2 and lowered for its shapes, and each such value must have shape
// (1, d...) at batch 1 and (2, d...) at batch 2; ops that mix images (an
// axis 0 reduction or softmax, a batched weight, a concat with a constant)
// are refused naming the node.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::compiler {

class LoweringContext;
struct LTensor;

// The --shape bindings with every non-constant graph input's dim 0 set to
// `batch` (its other dims from `shapes` or the model). Throws naming an
// input of rank 0.
std::map<std::string, std::vector<int64_t>> shapes_at_batch(const ir::Model& model, const std::string& origin,
                                                            const std::map<std::string, std::vector<int64_t>>& shapes,
                                                            int64_t batch);

// The values of g computed from a non-constant graph input.
std::set<const ir::Value*> batch_dependent_values(const ir::Graph& g);

// Called as a batch-dependent value is defined: marks t batched, or throws
// naming the producer where the batch is not its leading dim.
void check_batched(const LoweringContext& cx, const ir::Value* v, LTensor& t);

// Before node n is lowered: refuses ops that would mix the images of a
// batched input (see above).
void check_batch_node(const LoweringContext& cx, const ir::Node& n);

}  // namespace batchconv::compiler

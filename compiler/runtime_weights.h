// Runtime weights (--weights=runtime) by the ORIGINAL model's names.
//
// The compiled library takes the float initializers of the model file, by
// their names and shapes, in file order: what an app holds (a PyTorch
// state_dict). The rewrites, though, replace weights with new initializers
// (concatenated for combine_parallel_convs, regrouped for
// fold_repeat_into_conv, reshaped for the batched-weight ops). Those new
// tensors are rebuilt inside the pipeline from the weights the caller passes.
//
// How: the rewrites run twice on copies whose weights hold element codes
// (the element's position among all weights, split over the two runs so
// that every code is an exact float); every weight the rewritten model
// holds is then decoded, element by element, into "weight w, element e" or
// zero. A tensor that decodes as neither (a computed value) is refused with
// a message naming it. The rewrites never look at weight values, so both
// runs give the same graph (checked).
//
// Scalar attribute inputs (Clip's min and max) stay compile-time constants.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::compiler {

struct OriginalWeight {
  std::string name;
  std::vector<int64_t> shape;  // ONNX order
  int64_t offset = 0;          // first code of its elements
};

// A weight of the rewritten model rebuilt from the originals: element k is
// original weight sources[k] at element index[k], or 0 when sources[k] < 0.
struct DerivedWeight {
  std::vector<int32_t> sources;
  std::vector<int64_t> index;
};

struct RuntimeWeightPlan {
  std::vector<OriginalWeight> originals;          // in file order: the library's weight arguments
  std::map<std::string, int> unchanged;           // rewritten-model initializer -> original (same data)
  std::map<std::string, DerivedWeight> derived;   // rewritten-model initializer -> how to rebuild it
};

// True for an input slot that takes a scalar attribute (Clip's min/max),
// which stays baked in.
bool is_scalar_attribute_slot(const ir::Node& n, size_t input);

// Runs the rewrites (when `run_rewrites`) on `model` for runtime weights and
// returns the plan; `model` becomes the rewritten graph to lower. `fired`
// gets "pass: count" for the passes that fired. Throws Error naming a weight
// the rewrites computed rather than rearranged.
RuntimeWeightPlan plan_runtime_weights(std::unique_ptr<ir::Model>& model, const std::string& origin,
                                       bool run_rewrites, std::vector<std::string>* fired);

}  // namespace batchconv::compiler

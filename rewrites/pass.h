// The interface every rewrite pass implements, and the ordered pipeline.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::rewrites {

// A candidate that matched structurally but did not fire, and why.
struct Skip {
  std::string node;    // node name (or op_type#index when unnamed)
  std::string reason;  // e.g. "repeat count 3 != groups 4"
};

struct PassResult {
  int fired = 0;                 // rewrites applied
  int nodes_removed = 0;         // net nodes removed (negative if added)
  int64_t bytes_saved = 0;       // bytes of intermediate tensors no longer allocated
  std::vector<Skip> skips;       // what --explain prints
};

struct PassOptions {
  bool emit_batchconv_ops = false;  // emit the project's own ops (domain "batchconv") where a pass can
  // Passes may compute new weight values (fold_batch_norm_into_conv). Off when the weights are a
  // compiled model's runtime arguments, which the rewrites may only rearrange.
  bool compute_weight_values = true;
};

struct Pass {
  std::string name;         // = file name = command-line flag, e.g. "fold_repeat_into_conv"
  std::string description;  // one line, for --list-passes
  std::function<PassResult(ir::Model&, const PassOptions&)> run;
};

// All passes in the default pipeline order (clean-up first).
const std::vector<Pass>& default_pipeline();

}  // namespace batchconv::rewrites

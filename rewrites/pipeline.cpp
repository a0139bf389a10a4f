// The default pipeline: an explicit ordered list. Clean-up first, then the
// seed rewrites, then dead-node removal.
#include "pass.h"

#include "combine_parallel_convs.h"
#include "eliminate_dead_nodes.h"
#include "eliminate_identity.h"
#include "eliminate_nop_expand.h"
#include "eliminate_nop_reshape.h"
#include "fold_batch_norm_into_conv.h"
#include "fold_constants.h"
#include "fold_repeat_into_conv.h"
#include "fuse_batch_slices_into_batched_conv.h"
#include "raise_transposed_grouped_conv_to_batched_conv.h"

namespace batchconv::rewrites {

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> passes = {
      // clean-up passes, before the seed rewrites:
      {"fold_constants", "nodes with constant inputs (shape arithmetic, Constant) -> initializers", fold_constants},
      {"eliminate_identity", "Identity(x) -> x", eliminate_identity},
      {"eliminate_nop_expand", "Expand to the input's own shape -> its input", eliminate_nop_expand},
      {"eliminate_nop_reshape", "Reshape to the input's own shape -> its input", eliminate_nop_reshape},
      {"fold_batch_norm_into_conv", "inference BatchNormalization after a Conv -> the Conv's weights and bias",
       fold_batch_norm_into_conv},
      // seed rewrites, in this order:
      {"fold_repeat_into_conv", "repeat/tile of a tensor + grouped Conv -> Conv on the original tensor",
       fold_repeat_into_conv},
      {"fuse_batch_slices_into_batched_conv",
       "batch slices each through its own Conv, concatenated back -> one batched-weight conv",
       fuse_batch_slices_into_batched_conv},
      {"raise_transposed_grouped_conv_to_batched_conv",
       "transpose + grouped Conv + inverse transpose (seed 3) -> batchconv.BatchedWeightConv (with --emit-batchconv-ops)",
       raise_transposed_grouped_conv_to_batched_conv},
      {"combine_parallel_convs", "Convs with one input and one geometry -> one Conv (+ Split)",
       combine_parallel_convs},
      // dead-node removal goes last:
      {"eliminate_dead_nodes", "nodes that reach no graph output -> removed", eliminate_dead_nodes},
  };
  return passes;
}

}  // namespace batchconv::rewrites

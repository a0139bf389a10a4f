// The default pipeline: an explicit ordered list. Clean-up first, then the
// seed rewrites, then dead-node removal.
#include "pass.h"

#include "combine_parallel_convs.h"
#include "fold_repeat_into_conv.h"
#include "fuse_batch_slices_into_batched_conv.h"

namespace batchconv::rewrites {

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> passes = {
      // clean-up passes (IR owner) go here, before the seed rewrites
      // seed rewrites (pass helper), in this order:
      {"fold_repeat_into_conv", "repeat/tile of a tensor + grouped Conv -> Conv on the original tensor",
       fold_repeat_into_conv},
      {"fuse_batch_slices_into_batched_conv",
       "batch slices each through its own Conv, concatenated back -> one batched-weight conv",
       fuse_batch_slices_into_batched_conv},
      {"combine_parallel_convs", "Convs with one input and one geometry -> one Conv (+ Split)",
       combine_parallel_convs},
      // dead-node removal (IR owner) goes last
  };
  return passes;
}

}  // namespace batchconv::rewrites

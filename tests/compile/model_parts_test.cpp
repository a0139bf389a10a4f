// Models cut into parts (--part-nodes): the compiled libraries of modes p2
// (parts of about 2 nodes, so cuts fall between values no conv or pool
// stores too) and the default (12) run as several Halide pipelines, and
// p0 as one. That each matches PyTorch's stored outputs and the reference
// interpreter on fresh random inputs is the CompiledModels suite's check,
// which runs every mode.
#include <gtest/gtest.h>

#include <string>

#include "compiled_model_checks.h"
#include "compiled_models_registry.h"

namespace batchconv::testing {
namespace {

const CompiledModel& compiled(const std::string& stem, const std::string& mode) {
  for (const CompiledModel& m : kCompiledModels)
    if (stem == m.stem && mode == m.mode) return m;
  throw std::runtime_error("no compiled model " + stem + "_" + mode);
}

TEST(ModelParts, SmallPartsRunAsSeveralPipelines) {
  int cut = 0, total = 0;
  for (const CompiledModel& m : kCompiledModels) {
    if (std::string(m.mode) != "p2") continue;
    ++cut;
    EXPECT_GE(m.num_pipelines, 2) << m.stem << "_p2";
    total += m.num_pipelines;
  }
  EXPECT_EQ(cut, 5);
  EXPECT_GE(total, 14);
}

TEST(ModelParts, DefaultCutsLargerModelsOnlyAndZeroKeepsOnePipeline) {
  EXPECT_GE(compiled("mobile_blocks_opset17", "r").num_pipelines, 2);
  EXPECT_EQ(compiled("mobile_blocks_opset17", "p0").num_pipelines, 1);
  EXPECT_EQ(compiled("seed1_opset17", "r").num_pipelines, 1);  // a few nodes: one pipeline
  // Cut with a run-time batch too (DynamicBatch checks batches 1, 2, 3 and 5).
  EXPECT_GE(compiled("mobile_blocks_dynbatch_opset17", "db").num_pipelines, 2);
  // Not cut: runtime weights, whatever their size.
  EXPECT_EQ(compiled("mobile_blocks_opset17", "rw").num_pipelines, 1);
  EXPECT_EQ(compiled("mobile_blocks_dynbatch_opset17", "dbrw").num_pipelines, 1);
}

}  // namespace
}  // namespace batchconv::testing

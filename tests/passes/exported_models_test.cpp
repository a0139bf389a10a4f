// The PyTorch-exported models in tests/models (regenerate with tests/models/export_models.py):
// the default pipeline must fire the expected rewrite on what the exporter really writes, and the
// original and rewritten models must both reproduce PyTorch's stored outputs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <sstream>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "pass_test_support.h"

namespace batchconv::testing {
namespace {

const std::string kDir = BATCHCONV_MODELS_DIR;

bool read_tensor(const std::string& path, ir::Tensor* out, std::string* name) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) return false;
  *name = t.name();
  *out = io::tensor_from_proto(t, path);
  return true;
}

struct Stored {
  interp::TensorMap inputs, outputs;
};

Stored load_stored(const std::string& stem) {
  Stored s;
  for (const char* kind : {"input", "output"})
    for (int i = 0;; ++i) {
      ir::Tensor t;
      std::string name;
      if (!read_tensor(kDir + "/" + stem + "." + kind + "_" + std::to_string(i) + ".pb", &t, &name)) break;
      (std::string(kind) == "input" ? s.inputs : s.outputs)[name] = t;
    }
  return s;
}

void expect_matches_pytorch(const ir::Model& m, const Stored& s, const std::string& what) {
  interp::TensorMap got;
  try {
    got = interp::run(m, s.inputs);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  for (const auto& [name, want] : s.outputs) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << what << ": no output " << name;
    EXPECT_LE(interp::max_relative_difference(it->second, want), 1e-4) << what << ": output " << name;
  }
}

int convs_with_group(const ir::Model& m, int64_t group) {
  int n = 0;
  for (const auto& node : m.graph.nodes())
    if (!node->dead && node->op_type == "Conv" && node->attr_int("group", 1) == group) ++n;
  return n;
}

class ExportedModel : public ::testing::TestWithParam<int> {};

TEST_P(ExportedModel, PipelineFiresAndKeepsPyTorchsOutputs) {
  for (const char* name : {"seed1", "repeat_tile", "repeat_expand", "repeat_tile_g8", "seed2", "seed2_g4", "seed3",
                           "parallel_concat", "parallel_concat_g2", "parallel_separate", "repeat_tile_dynbatch", "repeat_interleave_expand", "seed2_relu",
                           "seed2_dynbatch"}) {
    const std::string base = name, stem = base + "_opset" + std::to_string(GetParam());
    SCOPED_TRACE(stem);
    std::unique_ptr<ir::Model> before;
    try {
      before = io::load_model(kDir + "/" + stem + ".onnx");
    } catch (const std::exception& e) {
      FAIL() << e.what();
    }
    const Stored stored = load_stored(stem);
    ASSERT_FALSE(stored.inputs.empty());
    ASSERT_FALSE(stored.outputs.empty());
    expect_matches_pytorch(*before, stored, "original");
    auto after = clone(*before);
    auto results = run_pipeline(*after);
    expect_matches_pytorch(*after, stored, "rewritten");
    expect_sound_rewrite(*before, *after, 1e-4);
    const int convs = count_ops(*after, "Conv");
    if (base == "seed1" || base == "repeat_tile" || base == "repeat_expand" || base == "repeat_tile_dynbatch") {
      EXPECT_EQ(count_ops(*after, "Tile") + count_ops(*after, "Expand"), 0);
      EXPECT_EQ(convs, 1);
      EXPECT_EQ(convs_with_group(*after, 1), 1);
    } else if (base == "repeat_interleave_expand") {  // each group reads 4 x channels 4 times each
      EXPECT_EQ(count_ops(*after, "Expand"), 0);
      EXPECT_EQ(convs_with_group(*after, 4), 1);
    } else if (base == "repeat_tile_g8") {  // R=2, G=8: group 4 on x plus a channel shuffle
      EXPECT_EQ(count_ops(*after, "Tile"), 0);
      EXPECT_EQ(convs_with_group(*after, 4), 1);
    } else if (base == "seed2_relu") {  // one batched conv, then one Relu for all groups
      EXPECT_EQ(count_ops(*after, "Slice"), 0);
      EXPECT_EQ(convs_with_group(*after, 3), 1);
      EXPECT_EQ(count_ops(*after, "Relu"), 1);
    } else if (base == "seed2" || base == "seed2_g4") {
      EXPECT_EQ(count_ops(*after, "Slice"), 0);
      EXPECT_EQ(convs_with_group(*after, base == "seed2" ? 2 : 4), 1);
      EXPECT_EQ(convs, 1);
    } else if (base == "seed2_dynbatch") {  // slice bounds come from Shape at run time: left alone
      EXPECT_EQ(convs, 2);
      bool explained = false;
      for (const auto& r : results)
        for (const auto& sk : r.skips) explained |= sk.reason.find("not static") != std::string::npos;
      EXPECT_TRUE(explained) << "no --explain reason for the dynamic batch";
    } else if (base == "parallel_concat") {
      EXPECT_EQ(convs, 1);
      EXPECT_EQ(count_ops(*after, "Concat"), 0);
    } else if (base == "parallel_concat_g2" || base == "parallel_separate") {
      EXPECT_EQ(convs, 1);
      EXPECT_EQ(count_ops(*after, "Split"), 1);
    }
  }
}

TEST_P(ExportedModel, Seed2AsTheProjectsOwnOp) {
  const std::string stem = "seed2_g4_opset" + std::to_string(GetParam());
  auto before = io::load_model(kDir + "/" + stem + ".onnx");
  auto after = clone(*before);
  rewrites::PassOptions o;
  o.emit_batchconv_ops = true;
  run_pipeline(*after, o);
  EXPECT_EQ(count_ops(*after, "Conv"), 0);
  EXPECT_EQ(count_ops(*after, "BatchedWeightConv", "batchconv"), 1);
  expect_matches_pytorch(*after, load_stored(stem), "rewritten");
}

TEST_P(ExportedModel, Seed3AsTheProjectsOwnOp) {
  const std::string stem = "seed3_opset" + std::to_string(GetParam());
  auto before = io::load_model(kDir + "/" + stem + ".onnx");
  auto after = clone(*before);
  rewrites::PassOptions o;
  o.emit_batchconv_ops = true;
  run_pipeline(*after, o);
  EXPECT_EQ(count_ops(*after, "Conv") + count_ops(*after, "Transpose") + count_ops(*after, "Add"), 0);
  EXPECT_EQ(count_ops(*after, "BatchedWeightConv", "batchconv"), 1);
  expect_matches_pytorch(*after, load_stored(stem), "rewritten");
}

INSTANTIATE_TEST_SUITE_P(Opsets, ExportedModel, ::testing::Values(13, 17));

}  // namespace
}  // namespace batchconv::testing

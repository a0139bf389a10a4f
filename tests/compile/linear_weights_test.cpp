// Baked MatMul and Gemm weights stored as the CPU tiles read them
// (compiler/linear_weights.h): column counts that pack into panels of two
// vectors and of one, and those that do not (under a vector, not a multiple
// of the tile); B transposed (PyTorch's Linear) or not; MatMul with batch
// dims; with epilogues; short and long K, one row and many (the path where
// the tasks also copy their rows); on the AVX-512 and AVX2 targets' facts
// (16 and 8 floats a vector). Each against the reference interpreter (1e-4
// relative) on fresh random weights and inputs, and each B stored as the
// rule says (the lowering's line for it).
#include <gtest/gtest.h>

#include <sstream>

#include "compile_test_support.h"
#include "linear_weights.h"
#include "linear_chooser.h"
#include "linear_schedule_cpu.h"
#include "target_facts.h"

namespace batchconv::testing {
namespace {

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

struct LinearCase {
  bool matmul;    // MatMul of a 3-D A (batch 2); else Gemm
  bool trans_b;   // Gemm transB = 1: B baked (cols, k)
  int64_t rows, k, cols;
  const char* epilogue;  // "" or an op applied to the result ("Relu", "Add" of a graph input)
  bool runtime = false;  // B a graph input (known at run time), not baked in
};

std::string model_text(const LinearCase& c) {
  std::ostringstream t;
  const std::string b = c.runtime ? "" : c.trans_b ? baked("w", c.cols, c.k) : baked("w", c.k, c.cols);
  const std::string wdecl = c.trans_b ? "float[" + std::to_string(c.cols) + ", " + std::to_string(c.k) + "] w"
                                      : "float[" + std::to_string(c.k) + ", " + std::to_string(c.cols) + "] w";
  const std::string a = c.matmul ? "float[2, " + std::to_string(c.rows) + ", " + std::to_string(c.k) + "] a"
                                 : "float[" + std::to_string(c.rows) + ", " + std::to_string(c.k) + "] a";
  const std::string y = c.matmul ? "float[2, " + std::to_string(c.rows) + ", " + std::to_string(c.cols) + "] y"
                                 : "float[" + std::to_string(c.rows) + ", " + std::to_string(c.cols) + "] y";
  const std::string add = std::string(c.epilogue) == "Add" ? ", float[" + std::to_string(c.cols) + "] s" : "";
  t << kHeader << "g (" << a << add << (c.runtime ? ", " + wdecl : "") << ") => (" << y << ")"
    << (c.runtime ? "" : " <" + b + ">") << " {\n";
  const std::string op = c.matmul ? "MatMul" : c.trans_b ? "Gemm<transB = 1>" : "Gemm<alpha = 0.5>";
  const std::string out = std::string(c.epilogue).empty() ? "y" : "p";
  t << "  " << out << " = " << op << "(a, w)\n";
  if (std::string(c.epilogue) == "Relu") t << "  y = Relu(p)\n";
  if (std::string(c.epilogue) == "Add") t << "  y = Add(p, s)\n";
  t << "}\n";
  return t.str();
}

// The panel width the rule gives: the tile's columns (two vectors, or one
// below two), when the column count is a multiple of it.
int64_t expected_width(int64_t cols, int vec) {
  const int64_t width = cols >= 2 * vec ? 2 * vec : vec;
  return cols >= vec && cols % width == 0 ? width : 0;
}

const char* const kTargets[] = {"x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41",
                                "x86-64-linux-avx-avx2-f16c-fma-sse41"};

// A case's model, lowered for `target`.
struct LoweredCase {
  std::unique_ptr<ir::Model> model;
  compiler::LoweredModel low;
};
LoweredCase lower_case(const LinearCase& c, const Halide::Target& target) {
  LoweredCase l;
  l.model = parse(model_text(c));
  compiler::LowerOptions lo;
  lo.target = target;
  l.low = compiler::lower_model(*l.model, "test.onnxtxt", lo);
  return l;
}

// Its result on fresh random inputs against the reference interpreter.
void expect_matches_interpreter(LoweredCase& l, const std::string& what) {
  interp::TensorMap in = interp::random_inputs(*l.model, std::random_device{}());
  interp::TensorMap want = run_reference(*l.model, in);
  interp::TensorMap got = run_jit(l.low, *l.model, in);
  EXPECT_LE(interp::max_relative_difference(got.at("y"), want.at("y")), 1e-4) << what;
}

// B known only at run time: packed once per call by a stage of the pipeline
// where the tiles would copy their panels in more than one row block (the
// chooser picks panels: K >= 512 and 16 two-vector column tiles), else read
// or copied by the tiles as before.
TEST(LinearWeights, RuntimeWeightsMatchTheInterpreter) {
  const std::vector<LinearCase> cases = {
      {false, false, 100, 512, 512, "Relu", true},  // packed on both targets
      {false, true, 100, 512, 512, "", true},       // transposed: packed on both
      {false, false, 30, 512, 512, "", true},       // one row block: not packed
      {true, false, 60, 512, 256, "Add", true},     // 2 x 60 rows; 256 columns: panels on AVX2 only
      {false, false, 100, 64, 512, "", true},       // short K: no panels, not packed
  };
  for (const std::string ts : kTargets) {
    const Halide::Target target(ts);
    const batchconv_gen::TargetFacts facts = batchconv_gen::target_facts(target);
    for (const LinearCase& c : cases) {
      LoweredCase l = lower_case(c, target);
      const compiler::LoweredModel& low = l.low;
      const int64_t rows = c.matmul ? 2 * c.rows : c.rows;
      const int64_t block = batchconv_gen::kLinearRowTiles * batchconv_gen::linear_row_tile(facts);
      const bool packed = expected_width(c.cols, facts.vector_floats) > 0 && rows > block &&
                          batchconv_gen::choose_linear_panels(rows, c.k, c.cols, facts) != batchconv_gen::LinearPanels::None;
      const std::string what = ts + ": " + std::to_string(rows) + " x " + std::to_string(c.k) + " x " +
                               std::to_string(c.cols) + (c.trans_b ? " transB" : "");
      if (packed) {
        ASSERT_EQ(low.linear_weights.size(), 1u) << what;
        EXPECT_NE(low.linear_weights[0].find("known at run time, packed once per call"), std::string::npos)
            << what << ": " << low.linear_weights[0];
      } else {
        EXPECT_TRUE(low.linear_weights.empty()) << what << ": " << low.linear_weights[0];
      }
      expect_matches_interpreter(l, what);
    }
  }
}

TEST(LinearWeights, PanelWidthRule) {
  batchconv_gen::TargetFacts avx512, avx2, gpu;
  avx512.vector_floats = 16, avx2.vector_floats = 8, gpu.gpu = true;
  for (int64_t cols : {1, 7, 8, 15, 16, 24, 32, 40, 48, 64, 1000, 1024}) {
    EXPECT_EQ(compiler::linear_panel_width(cols, avx512), expected_width(cols, 16)) << cols;
    EXPECT_EQ(compiler::linear_panel_width(cols, avx2), expected_width(cols, 8)) << cols;
    EXPECT_EQ(compiler::linear_panel_width(cols, gpu), 0) << cols;
  }
  EXPECT_EQ(compiler::linear_panel_width(1024, avx512), 32);
  EXPECT_EQ(compiler::linear_panel_width(48, avx512), 0);
  EXPECT_EQ(compiler::linear_panel_width(48, avx2), 16);
}

TEST(LinearWeights, BakedWeightsMatchTheInterpreter) {
  const std::vector<LinearCase> cases = {
      {false, false, 29, 37, 64, "Relu"},   // two-vector panels (AVX-512 32, AVX2 16)
      {false, true, 17, 23, 48, ""},        // AVX-512: not a multiple of 32; AVX2: 3 panels of 16
      {false, true, 5, 9, 16, "Add"},       // one-vector panels on AVX-512
      {false, false, 3, 11, 7, ""},         // under a vector: scalar tiles, not packed
      {false, true, 13, 19, 24, "Relu"},    // not a multiple of the tile on either target
      {true, false, 13, 40, 96, "Add"},     // MatMul over a batch dim
      {true, false, 1, 1, 32, ""},          // one row, K = 1
      {false, true, 30, 512, 512, "Relu"},  // long K, many column tiles: the tasks copy their rows too
  };
  for (const std::string ts : kTargets) {
    const Halide::Target target(ts);
    const int vec = batchconv_gen::target_facts(target).vector_floats;
    for (const LinearCase& c : cases) {
      LoweredCase l = lower_case(c, target);
      const compiler::LoweredModel& low = l.low;
      const std::string what = ts + ": " + (c.matmul ? "MatMul " : c.trans_b ? "Gemm transB " : "Gemm ") +
                               std::to_string(c.rows) + " x " + std::to_string(c.k) + " x " + std::to_string(c.cols);
      ASSERT_EQ(low.linear_weights.size(), 1u) << what;
      const std::string& line = low.linear_weights[0];
      const int64_t w = expected_width(c.cols, vec);
      if (w > 0)
        EXPECT_NE(line.find(" of " + std::to_string(c.k) + " x " + std::to_string(w) + ", one per column tile"), std::string::npos)
            << what << ": " << line;
      else
        EXPECT_NE(line.find("not packed"), std::string::npos) << what << ": " << line;
      expect_matches_interpreter(l, what);
    }
  }
}

}  // namespace
}  // namespace batchconv::testing

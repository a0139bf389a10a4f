// Tiles fitted to the row (schedule field ch_fit_rows): the model compiler's
// channels convs take them, and on rows that 14, 11 or 7 columns divide (and
// the point's tile does not) two channel vectors that wide compute each
// row, where the target has the registers (AVX-512; AVX2's 16 registers
// hold none of them). Convs of 128 taps or more with such rows, on the
// blocked point and the default one, grouped and batched-weight, at stride
// 1 and 2, under every layout policy, against the reference interpreter
// (1e-4).
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

struct RowCase {
  const char* what;
  int64_t b;  // 0: Conv; else BatchedWeightConv with B = b
  int64_t n, groups, cin_g, cout_g, h, w, k, stride, pad;
};

std::string list(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

std::string model_text(const RowCase& c) {
  const int64_t C = c.groups * c.cin_g, M = c.groups * c.cout_g;
  const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  std::vector<int64_t> x = {c.n, C, c.h, c.w}, w = {M, c.cin_g, c.k, c.k}, bias = {M}, y = {c.n, M, oh, ow};
  if (c.b) x.insert(x.begin(), c.b), w.insert(w.begin(), c.b), bias.insert(bias.begin(), c.b), y.insert(y.begin(), c.b);
  std::ostringstream t;
  t << "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n"
    << "g (float[" << list(x) << "] x, float[" << list(w) << "] w, float[" << list(bias) << "] b) => (float["
    << list(y) << "] y) {\n  c = " << (c.b ? "batchconv.BatchedWeightConv" : "Conv") << "<group = " << c.groups
    << ", strides = [" << c.stride << ", " << c.stride << "], pads = [" << c.pad << ", " << c.pad << ", " << c.pad
    << ", " << c.pad << "]>(x, w, b)\n  y = Relu(c)\n}\n";
  return t.str();
}

TEST(FittedRows, CompiledConvsMatchTheReference) {
  const RowCase cases[] = {
      // Tiles on AVX-512: the blocked point's own is 2 x 14, the default 4 x 6.
      {"16 -> 32, 3x3, 22 columns (blocked point; 2 x 11)", 0, 2, 1, 16, 32, 5, 22, 3, 1, 1},
      {"3 -> 64, 7x7, 22 columns (default point; 2 x 11)", 0, 2, 1, 3, 64, 28, 28, 7, 1, 0},
      {"128 -> 32, 1x1, 14 columns (2 x 14)", 0, 1, 1, 128, 32, 5, 14, 1, 1, 0},
      {"16 -> 32, 3x3, stride 2, 7 columns (2 x 7)", 0, 1, 1, 16, 32, 9, 14, 3, 2, 1},
      {"2 groups of 16 -> 32, 3x3, 28 columns (the point's 2 x 14 divides them)", 0, 1, 2, 16, 32, 6, 28, 3, 1, 1},
      {"batched weights, 2 x (16 -> 32), 3x3, 22 columns (2 x 11)", 2, 2, 1, 16, 32, 5, 24, 3, 1, 0},
  };
  std::mt19937 rng(std::random_device{}());
  for (const RowCase& c : cases) {
    const std::string text = model_text(c);
    std::unique_ptr<ir::Model> m = parse(text);
    for (compiler::LayoutPolicy p :
         {compiler::LayoutPolicy::Auto, compiler::LayoutPolicy::Nchw, compiler::LayoutPolicy::ChannelsLast}) {
      compiler::LowerOptions o;
      o.layouts = p;
      compiler::LoweredModel low = compiler::lower_model(*m, "rows.onnxtxt", o);
      ASSERT_EQ(low.conv_schedules.size(), 1u) << c.what;
      EXPECT_NE(low.conv_schedules[0].find("family=channels"), std::string::npos) << low.conv_schedules[0];
      EXPECT_NE(low.conv_schedules[0].find("ch_fit_rows=1"), std::string::npos) << low.conv_schedules[0];
      const uint64_t seed = rng();
      interp::TensorMap in = interp::random_inputs(*m, seed);
      interp::TensorMap want = run_reference(*m, in);
      interp::TensorMap got = run_jit(low, *m, in);
      EXPECT_LE(interp::max_relative_difference(got.at("y"), want.at("y")), 1e-4)
          << c.what << ", seed " << seed << ", layouts " << compiler::layout_policy_name(p);
    }
  }
}

}  // namespace
}  // namespace batchconv::testing

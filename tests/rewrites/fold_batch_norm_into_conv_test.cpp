// fold_batch_norm_into_conv on larger convs than the lit cases (3x3 with groups, 1-D, strides,
// dilation, with and without bias, random parameters, var near zero): the folded model computes
// what the original does; and the cases it must leave alone.
#include <random>
#include <sstream>

#include "fold_batch_norm_into_conv.h"
#include "pass_test_util.h"

using namespace batchconv;
using namespace batchconv::testing;
using Ops = std::vector<std::string>;

namespace {

std::string values(int n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::ostringstream s;
  for (int k = 0; k < n; ++k) s << (k ? ", " : "") << u(rng);
  return s.str();
}

struct Case {
  const char* x;      // input type
  const char* y;      // output type
  const char* w;      // weight shape
  int w_count, m;     // weight elements, output channels
  const char* attrs;  // the Conv's attributes
  bool bias;
};

std::string model(const Case& c, uint32_t seed, const std::string& bn_attrs = "", const std::string& after = "") {
  std::mt19937 rng(seed);
  std::ostringstream t;
  t << "<ir_version: 8, opset_import: [\"\" : 15]>\ng (" << c.x << " x) => (" << c.y << " y)\n<float[" << c.w
    << "] w = {" << values(c.w_count, rng, -1, 1) << "}";
  if (c.bias) t << ", float[" << c.m << "] b = {" << values(c.m, rng, -1, 1) << "}";
  t << ", float[" << c.m << "] s = {" << values(c.m, rng, -2, 2) << "}, float[" << c.m << "] beta = {"
    << values(c.m, rng, -1, 1) << "}, float[" << c.m << "] mean = {" << values(c.m, rng, -1, 1) << "}, float["
    << c.m << "] var = {" << values(c.m, rng, 0, 0.01f) << "}>\n{\n  c = Conv" << c.attrs << "(x, w"
    << (c.bias ? ", b" : "") << ")\n  " << (after.empty() ? "y" : "n") << " = BatchNormalization" << bn_attrs
    << "(c, s, beta, mean, var)\n" << after << "}\n";
  return t.str();
}

const Case kCases[] = {
    {"float[2,6,9,8]", "float[2,4,9,8]", "4,3,3,3", 108, 4, "<group = 2, pads = [1, 1, 1, 1]>", true},
    {"float[1,3,11,10]", "float[1,8,5,2]", "8,3,3,3", 216, 8, "<strides = [2, 3], dilations = [1, 2]>", false},
    {"float[3,4,17]", "float[3,6,15]", "6,4,3", 72, 6, "", true},
    {"float[1,5,4,4]", "float[1,10,4,4]", "10,1,1,1", 10, 10, "<group = 5>", false},
};

}  // namespace

TEST(FoldBatchNormIntoConv, FoldedModelComputesTheSameFunction) {
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    for (const char* eps : {"", "<epsilon = 0.1>"}) {
      SCOPED_TRACE(std::string(c.w) + " " + c.attrs + " " + eps);
      auto r = run_passes(model(c, seed++, eps, "  y = Relu(n)\n"), {"fold_batch_norm_into_conv"});
      EXPECT_EQ(r.result.fired, 1);
      EXPECT_EQ(ops(*r.after), (Ops{"Conv", "Relu"}));
      expect_same_function(*r.before, *r.after);
      auto out = run_passes(model(c, seed++, eps), {"fold_batch_norm_into_conv"});  // BN is the graph output
      EXPECT_EQ(ops(*out.after), (Ops{"Conv"}));
      ASSERT_NE(out.after->graph.find_value("y"), nullptr);
      EXPECT_TRUE(out.after->graph.find_value("y")->is_graph_output);
      expect_same_function(*out.before, *out.after);
    }
  }
}

TEST(FoldBatchNormIntoConv, SharedWeightStaysForItsOtherReader) {
  auto r = run_passes(R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,2,5,5] x) => (float[1,3,5,5] y, float[1,3,5,5] z)
<float[3,2,1,1] w = {1, -2, 0.5, 3, -1, 2}, float[3] s = {2, 1, -1}, float[3] beta = {0, 1, 2},
 float[3] mean = {1, 0, -1}, float[3] var = {1, 3, 0.25}>
{
  c = Conv(x, w)
  y = BatchNormalization(c, s, beta, mean, var)
  z = Conv(x, w)
})",
                      {"fold_batch_norm_into_conv"});
  EXPECT_EQ(r.result.fired, 1);
  EXPECT_EQ(ops(*r.after), (Ops{"Conv", "Conv"}));
  EXPECT_NE(r.after->graph.find_value("w"), nullptr);
  expect_same_function(*r.before, *r.after);
}

TEST(FoldBatchNormIntoConv, DoesNotFoldTrainingModeOrRuntimeWeights) {
  const Case& c = kCases[0];
  std::string training = model(c, 40, "<training_mode = 1>");
  training.replace(training.find("  y = BatchNormalization"), 24, "  y, rm, rv = BatchNormalization");
  auto r = run_passes(training, {"fold_batch_norm_into_conv"});
  EXPECT_EQ(r.result.fired, 0);
  EXPECT_TRUE(has_skip(r.result, "training_mode=1")) << (r.result.skips.empty() ? "" : r.result.skips[0].reason);

  std::unique_ptr<ir::Model> m = io::parse_model(model(c, 41), "<test>");
  rewrites::PassOptions runtime;
  runtime.compute_weight_values = false;
  rewrites::PassResult res = rewrites::fold_batch_norm_into_conv(*m, runtime);
  EXPECT_EQ(res.fired, 0);
  EXPECT_TRUE(has_skip(res, "runtime arguments"));
  EXPECT_EQ(ops(*m), (Ops{"Conv", "BatchNormalization"}));
}

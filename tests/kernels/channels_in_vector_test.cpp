// The channels-in-vector kernels (generators/conv_schedule_cpu_cv.h), which
// the runtime picks for rows that fill vectors poorly with long reductions
// (runtime/src/conv_path.h): shapes on both sides of that rule, through the
// public API, against the double-precision reference. The rule itself is
// checked on the planned calls, so a case meant for this kernel cannot
// silently run the other one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conv_check.h"
#include "conv_path.h"
#include "conv_plan.h"

namespace batchconv::test {
namespace {

ConvCase make(std::string name, int64_t B, int64_t N, int64_t cin_g, int64_t cout_g, int64_t groups,
              int64_t H, int64_t W, int64_t K, int stride, int dilation, int pad_begin, int pad_end,
              bool bias, bool relu) {
  ConvCase c;
  c.name = std::move(name);
  c.B = B;
  c.N = N;
  c.cin_g = cin_g;
  c.cout_g = cout_g;
  c.H = H;
  c.W = W;
  c.KH = K;
  c.KW = K;
  c.d.groups = groups;
  c.d.stride = {stride, stride};
  c.d.dilation = {dilation, dilation};
  c.d.pad_begin = {pad_begin, pad_begin};
  c.d.pad_end = {pad_end, pad_end};
  c.d.activation = relu ? Activation::ReLU : Activation::None;
  c.bias = bias;
  return c;
}

// Cases that take the channels-in-vector kernel: >= 64 output channels per
// group, 16+ output columns using under 80% of their vectors, >= 64 taps.
std::vector<ConvCase> cv_cases() {
  return {
      make("seed2_small", 1, 2, 3, 64, 1, 28, 28, 7, 1, 1, 0, 0, false, false),
      make("seed2_bias_relu", 1, 3, 3, 64, 1, 28, 28, 7, 1, 1, 0, 0, true, true),
      make("odd_width_pad", 1, 2, 8, 64, 1, 9, 19, 3, 1, 1, 1, 1, true, false),
      make("asymmetric_pad", 1, 1, 8, 72, 1, 7, 18, 3, 1, 1, 2, 0, false, true),
      make("stride2", 1, 2, 8, 64, 1, 15, 41, 3, 2, 1, 1, 1, true, false),
      make("dilation2", 1, 2, 8, 64, 1, 12, 24, 3, 1, 2, 2, 2, false, false),
      make("two_groups", 1, 2, 8, 64, 2, 9, 19, 3, 1, 1, 0, 0, true, false),
      make("wide_33", 1, 1, 16, 80, 1, 5, 35, 3, 1, 1, 0, 0, false, false),
      make("batched_B3", 3, 2, 3, 64, 1, 14, 24, 5, 1, 1, 1, 1, true, true),
      make("batched_groups", 2, 2, 8, 64, 2, 10, 19, 3, 1, 1, 0, 0, false, false),
  };
}

detail::ConvPlan plan_of(const ConvCase& c, bool batched) {
  std::vector<int64_t> lead;
  if (batched) lead.push_back(c.B);
  lead.push_back(c.N);
  std::vector<int64_t> xs = c.spatial_shape(lead, c.cin(), c.H, c.W);
  std::vector<int64_t> ws;
  if (batched) ws.push_back(c.B);
  ws.push_back(c.cout());
  ws.push_back(c.cin_g);
  ws.push_back(c.KH);
  ws.push_back(c.KW);
  std::vector<float> dummy(1);
  TensorView x(dummy.data(), xs), w(dummy.data(), ws);
  return detail::plan_conv("test", x, batched ? 1 : 0, w, batched ? 1 : 0, c.d);
}

class ChannelsInVector : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ChannelsInVector, GroupedMatchesReference) {
  ConvCase c = GetParam();
  c.B = 1;
  ASSERT_TRUE(detail::use_channels_in_vector(plan_of(c, false))) << c.describe();
  check_conv_case(ConvOp::Grouped, c);
}

TEST_P(ChannelsInVector, BatchedWeightMatchesReference) {
  const ConvCase& c = GetParam();
  ASSERT_TRUE(detail::use_channels_in_vector(plan_of(c, true))) << c.describe();
  check_conv_case(ConvOp::BatchedWeight, c);
}

INSTANTIATE_TEST_SUITE_P(Cases, ChannelsInVector, ::testing::ValuesIn(cv_cases()),
                         [](const auto& info) { return info.param.name; });

// The rule's other side: these keep the row-vectorised kernel.
TEST(ChannelsInVectorRule, KeepsRowKernelElsewhere) {
  const ConvCase keep[] = {
      make("seed3", 1, 2, 3, 64, 1, 32, 32, 3, 1, 1, 0, 0, false, false),       // 27 taps
      make("rows_56", 1, 2, 64, 64, 1, 56, 56, 3, 1, 1, 1, 1, false, false),    // 87.5% filled
      make("few_channels", 1, 2, 8, 32, 1, 28, 28, 7, 1, 1, 0, 0, false, false),  // 32 < 64
      make("narrow", 1, 2, 8, 64, 1, 12, 12, 3, 1, 1, 0, 0, false, false),      // 10 columns
  };
  for (const ConvCase& c : keep) EXPECT_FALSE(detail::use_channels_in_vector(plan_of(c, false))) << c.name;
}

}  // namespace
}  // namespace batchconv::test

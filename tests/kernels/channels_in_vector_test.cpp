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

detail::ConvPlan plan_of(const ConvCase& c, bool batched) {
  std::vector<int64_t> lead;
  if (batched) lead.push_back(c.B);
  lead.push_back(c.N);
  std::vector<int64_t> xs = c.spatial_shape(lead, c.cin(), c.H, c.W);
  std::vector<int64_t> ws;
  if (batched) ws.push_back(c.B);
  ws.push_back(c.cout());
  ws.push_back(c.cin_g);
  if (c.dims == 2) ws.push_back(c.KH);
  ws.push_back(c.KW);
  std::vector<float> dummy(1);
  TensorView x(dummy.data(), xs), w(dummy.data(), ws);
  return detail::plan_conv("test", x, batched ? 1 : 0, w, batched ? 1 : 0, c.d);
}

class GroupedChannelsInVector : public ::testing::TestWithParam<ConvCase> {};
TEST_P(GroupedChannelsInVector, MatchesReference) {
  const ConvCase& c = GetParam();
  ASSERT_TRUE(detail::use_channels_in_vector(plan_of(c, false))) << c.describe();
  check_conv_case(ConvOp::Grouped, c);
}
INSTANTIATE_TEST_SUITE_P(Cases, GroupedChannelsInVector,
                         ::testing::ValuesIn(channels_in_vector_cases(ConvOp::Grouped)),
                         [](const auto& info) { return info.param.name; });

class BatchedChannelsInVector : public ::testing::TestWithParam<ConvCase> {};
TEST_P(BatchedChannelsInVector, MatchesReference) {
  const ConvCase& c = GetParam();
  ASSERT_TRUE(detail::use_channels_in_vector(plan_of(c, true))) << c.describe();
  check_conv_case(ConvOp::BatchedWeight, c);
}
INSTANTIATE_TEST_SUITE_P(Cases, BatchedChannelsInVector,
                         ::testing::ValuesIn(channels_in_vector_cases(ConvOp::BatchedWeight)),
                         [](const auto& info) { return info.param.name; });

// The rule's other side: these keep the row-vectorised kernel.
TEST(ChannelsInVectorRule, KeepsRowKernelElsewhere) {
  struct Keep {
    const char* why;
    int64_t cin_g, cout_g, hw, k, pad;
  };
  const Keep keep[] = {
      {"seed 3: 27 taps", 3, 64, 32, 3, 0},
      {"56 columns fill 87.5%", 64, 64, 56, 3, 1},
      {"32 < 64 output channels", 8, 32, 28, 7, 0},
      {"10 columns, under one vector", 8, 64, 12, 3, 0},
  };
  for (const Keep& k : keep) {
    ConvCase c;
    c.N = 2, c.cin_g = k.cin_g, c.cout_g = k.cout_g, c.H = c.W = k.hw, c.KH = c.KW = k.k;
    c.d = ConvDesc::with_padding(static_cast<int>(k.pad));
    EXPECT_FALSE(detail::use_channels_in_vector(plan_of(c, false))) << k.why;
  }
}

}  // namespace
}  // namespace batchconv::test

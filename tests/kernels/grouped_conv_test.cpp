// grouped_conv: the swept parameter combinations of conv_cases.cpp against the
// double-precision reference, on fresh random data (see test_support.h).
#include <gtest/gtest.h>

#include "conv_check.h"

namespace batchconv::test {
namespace {

class GroupedConvSweep : public ::testing::TestWithParam<ConvCase> {};

TEST_P(GroupedConvSweep, MatchesReference) { check_conv_case(ConvOp::Grouped, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sweep, GroupedConvSweep, ::testing::ValuesIn(conv_cases(ConvOp::Grouped)),
                         [](const ::testing::TestParamInfo<ConvCase>& i) { return i.param.name; });

}  // namespace
}  // namespace batchconv::test

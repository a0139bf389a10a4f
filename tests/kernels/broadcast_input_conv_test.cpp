// broadcast_input_conv: the swept parameter combinations of conv_cases.cpp against the
// double-precision reference, on fresh random data (see test_support.h).
#include <gtest/gtest.h>

#include "conv_check.h"

namespace batchconv::test {
namespace {

class BroadcastInputConvSweep : public ::testing::TestWithParam<ConvCase> {};

TEST_P(BroadcastInputConvSweep, MatchesReference) { check_conv_case(ConvOp::BroadcastInput, GetParam()); }

INSTANTIATE_TEST_SUITE_P(Sweep, BroadcastInputConvSweep, ::testing::ValuesIn(conv_cases(ConvOp::BroadcastInput)),
                         [](const ::testing::TestParamInfo<ConvCase>& i) { return i.param.name; });

}  // namespace
}  // namespace batchconv::test

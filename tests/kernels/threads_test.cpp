// The thread-count control: set/get, a bad count rejected, and the same
// (correct) numbers whatever the count, since each count splits the work
// differently across the parallel loops.
#include <gtest/gtest.h>

#include "bad_input_support.h"
#include "conv_check.h"

namespace batchconv::test {
namespace {

class Threads : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(0); }
};

TEST_F(Threads, SetAndGet) {
  for (int n : {1, 2, 3, 7}) {
    set_num_threads(n);
    EXPECT_EQ(num_threads(), n);
  }
  set_num_threads(0);
  EXPECT_GE(num_threads(), 1) << "0 means one thread per core";
}

TEST_F(Threads, NegativeCountIsRejected) {
  set_num_threads(2);
  expect_error([] { set_num_threads(-1); }, {"set_num_threads", "-1"}, {});
  EXPECT_EQ(num_threads(), 2) << "a rejected call must not change the count";
}

TEST_F(Threads, EveryCountGivesTheReferenceNumbers) {
  // The medium and large cases (the last ones of each sweep) have enough work to split.
  for (int n : {1, 2, 3, 5}) {
    set_num_threads(n);
    SCOPED_TRACE("threads=" + std::to_string(n));
    for (ConvOp op : {ConvOp::Grouped, ConvOp::BatchedWeight, ConvOp::BroadcastInput}) {
      const auto cases = conv_cases(op);
      for (size_t i = cases.size() - 8; i < cases.size(); ++i) check_conv_case(op, cases[i]);
    }
  }
}

TEST(SelectedTarget, NamesAnX86Target) {
  const std::string t = selected_target();
  EXPECT_EQ(t.rfind("x86-64", 0), 0u) << t;
}

}  // namespace
}  // namespace batchconv::test

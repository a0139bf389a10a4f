// Apps call the runtime from several threads at once (one model per thread,
// a server). Whatever the runtime reuses between calls (workspaces, packed
// weights, plans) must not leak between concurrent calls: four threads run
// different swept cases of every op at the same time and each result must
// match the reference.
#include <gtest/gtest.h>

#include <thread>

#include "conv_check.h"

namespace batchconv::test {
namespace {

TEST(Concurrency, ConcurrentCallsOfEveryOpMatchTheReference) {
  const std::vector<ConvOp> ops{ConvOp::Grouped, ConvOp::BatchedWeight, ConvOp::BroadcastInput};
  std::vector<std::vector<ConvCase>> cases;
  for (ConvOp op : ops) cases.push_back(conv_cases(op));
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Thread t takes every kThreads-th case from offset t, cycling through
      // the ops, so the threads run different shapes of the same kernels.
      for (size_t k = 0; k < 3; ++k) {
        const size_t o = (t + k) % ops.size();
        const auto& list = cases[o];
        for (size_t i = t; i < list.size(); i += 3 * kThreads) {
          const ConvCase& c = list[i];
          if (c.x_layout == Layout::InnerStrided || c.w_layout == Layout::InnerStrided ||
              c.y_layout == Layout::InnerStrided)
            continue;  // tested by the sweeps
          check_conv_case(ops[o], c);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace batchconv::test

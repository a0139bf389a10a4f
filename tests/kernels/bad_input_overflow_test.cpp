// Sizes beyond 32-bit indexing (what Halide's buffers use): validation must
// reject them with batchconv::Error naming the tensor before touching memory.
// The huge tensors point at a small dummy array: any access past it would
// crash this test binary (it is kept apart from the others for that reason).
#include <gtest/gtest.h>

#include <array>

#include "bad_input_support.h"

namespace batchconv::test {
namespace {

const std::string kTooLarge = "overflow|too large|too big|exceed|2\\^31|32-bit|int32|2147483647|limit";

// A dummy 'huge' tensor: a view of `shape` over 8 floats whose values must stay put.
struct Dummy {
  std::array<float, 8> data{};
  Dummy() { data.fill(kSentinel); }
  TensorView view(std::vector<int64_t> shape) { return TensorView(data.data(), std::move(shape)); }
  bool untouched() const {
    for (float v : data)
      if (v != kSentinel) return false;
    return true;
  }
};

TEST(OverflowBadInput, GroupedXElementCount) {  // 70000^2 = 4.9e9 elements
  Dummy x, y;
  Tensor w = T({1, 1, 3, 3});
  expect_error([&] {
    grouped_conv(x.view({1, 1, 70000, 70000}), w.view(), nullptr, y.view({1, 1, 69998, 69998}),
                 ConvDesc{});
  }, {"grouped_conv", word("x"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, GroupedWElementCount) {
  Dummy w;
  Tensor x = T({1, 70000, 1, 1}), y = Y({1, 70000, 1, 1});
  expect_error([&] {
    grouped_conv(x.view(), w.view({70000, 70000, 1, 1}), nullptr, y.view(), ConvDesc{});
  }, {"grouped_conv", word("w"), kTooLarge}, {&y});
}

TEST(OverflowBadInput, GroupedOnlyYElementCount) {  // x and w small, y = 60000 x 40000
  Dummy y;
  Tensor x = T({1, 1, 1, 40000}), w = T({60000, 1, 1, 1});
  expect_error([&] {
    grouped_conv(x.view(), w.view(), nullptr, y.view({1, 60000, 1, 40000}), ConvDesc{});
  }, {"grouped_conv", word("y"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, GroupedSingleDimBeyondInt32) {
  Dummy x, y;
  Tensor w = T({1, 1, 1});
  expect_error([&] {
    grouped_conv(x.view({1, 1, 3000000000LL}), w.view(), nullptr, y.view({1, 1, 3000000000LL}),
                 ConvDesc{});
  }, {"grouped_conv", word("x"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, GroupedElementCountOverflowsInt64) {  // 2^31 in 3 dims: 2^93 elements
  Dummy x, y;
  const int64_t big = int64_t{1} << 31;
  Tensor w = T({1, 1, 1, 1});
  expect_error([&] {
    grouped_conv(x.view({big, 1, big, big}), w.view(), nullptr, y.view({big, 1, big, big}),
                 ConvDesc{});
  }, {"grouped_conv", word("x"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, GroupedStrideBeyond32Bit) {  // small shape, but x[1] lies 3e9 elements away
  Dummy x;
  Tensor w = T({6, 2, 3, 3}), y = Y({2, 6, 5, 5});
  ConvDesc d;
  d.groups = 2;
  TensorView xv(x.data.data(), {2, 4, 7, 7}, {3000000000LL, 49, 7, 1});
  expect_error([&] { grouped_conv(xv, w.view(), nullptr, y.view(), d); },
               {"grouped_conv", word("x"), kTooLarge + "|stride"}, {&y});
}

TEST(OverflowBadInput, BatchedWeightXElementCount) {  // B = N = 70000
  Dummy x, y;
  Tensor w = T({70000, 1, 1, 1, 1});
  expect_error([&] {
    batched_weight_conv(x.view({70000, 70000, 1, 1, 1}), w.view(), nullptr,
                        y.view({70000, 70000, 1, 1, 1}), ConvDesc{});
  }, {"batched_weight_conv", word("x"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, BroadcastOnlyYElementCount) {  // the repeat-free output is the huge one
  Dummy y;
  Tensor x = T({1, 1, 1, 50000}), w = T({50000, 1, 1, 1, 1});
  expect_error([&] {
    broadcast_input_conv(x.view(), w.view(), nullptr, y.view({1, 50000, 1, 50000}), ConvDesc{},
                         BroadcastLayout::Concatenated);
  }, {"broadcast_input_conv", word("y"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

TEST(OverflowBadInput, LinearOnlyYElementCount) {
  Dummy y;
  Tensor x = T({1, 50000, 1}), w = T({1, 1, 50000});
  expect_error([&] { batched_linear(x.view(), w.view(), nullptr, y.view({1, 50000, 50000})); },
               {"batched_linear", word("y"), kTooLarge}, {});
  EXPECT_TRUE(y.untouched());
}

}  // namespace
}  // namespace batchconv::test

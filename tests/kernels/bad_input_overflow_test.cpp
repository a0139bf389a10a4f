// Sizes beyond 32-bit indexing (what Halide's buffers use): validation must
// reject them with batchconv::Error naming the tensor before touching memory.
// The huge tensors point at a small dummy array: any access past it would
// crash this test binary (it is kept apart from the others for that reason).
#include <gtest/gtest.h>

#include <array>
#include <iostream>

#include "reference.h"

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

// Geometry whose index arithmetic leaves int32 although every tensor is
// small: output row 2 reads input row 2 * 1.5e9 - 1.5e9. The result must be
// the reference's (all padding but row 1) or a clear error; never a crash.
void expect_reference_or_error(const ConvDesc& d, const std::string& what) {
  SCOPED_TRACE(what);
  auto rng = case_rng(what);
  Tensor x({1, 2, 4, 4}, Layout::Contiguous), w({3, 2, 1, 1}, Layout::Contiguous),
      b({3}, Layout::Contiguous), y({1, 3, 3, 3}, Layout::Contiguous);
  x.fill_random(rng, 0), w.fill_random(rng, 0), b.fill_random(rng, 0);
  poison_output(y);
  std::vector<int64_t> shape;
  const auto ref = ref::grouped_conv(x.view(), w.view(), b.view_ptr(), d, &shape);
  ASSERT_EQ(shape_str(shape), shape_str({1, 3, 3, 3}));
  try {
    grouped_conv(x.view(), w.view(), b.view_ptr(), y.view(), d);
  } catch (const Error& e) {
    std::cout << "  error message: " << e.what() << "\n";
    EXPECT_NE(std::string(e.what()).find("grouped_conv"), std::string::npos);
    const auto v = y.to_contiguous();
    for (float f : v) EXPECT_TRUE(f != f) << "y was partly written before the error";
    return;  // a clear error is acceptable
  }
  expect_matches(y, ref, shape, what);
}

TEST(OverflowBadInput, HugeStrideAndPaddingGiveReferenceNumbersOrAClearError) {
  const int big = 1500000000;  // fits int32; twice it does not
  ConvDesc d;
  d.stride = {big, big};
  d.pad_begin = {big, big};
  d.pad_end = {big, big};
  expect_reference_or_error(d, "huge_stride_and_pad");
}

TEST(OverflowBadInput, HugeDilationGivesReferenceNumbersOrAClearError) {
  auto rng = case_rng("huge_dilation");
  Tensor x({1, 1, 1, 5}, Layout::Contiguous), w({1, 1, 1, 2}, Layout::Contiguous),
      y({1, 1, 1, 5}, Layout::Contiguous);
  x.fill_random(rng, 0), w.fill_random(rng, 0);
  poison_output(y);
  ConvDesc d;  // tap 1 sits 2e9 columns right, in the padding: y[i] = w[0] * x[i]
  d.dilation = {1, 2000000000};
  d.pad_end = {0, 2000000000};
  std::vector<int64_t> shape;
  const auto ref = ref::grouped_conv(x.view(), w.view(), nullptr, d, &shape);
  ASSERT_EQ(shape_str(shape), shape_str({1, 1, 1, 5}));
  try {
    grouped_conv(x.view(), w.view(), nullptr, y.view(), d);
  } catch (const Error& e) {
    std::cout << "  error message: " << e.what() << "\n";
    EXPECT_NE(std::string(e.what()).find("grouped_conv"), std::string::npos);
    EXPECT_TRUE(y.untouched_outside_view(kSentinel));
    const auto v = y.to_contiguous();
    for (float f : v) EXPECT_TRUE(f != f) << "y was partly written before the error";
    return;
  }
  expect_matches(y, ref, shape, "huge_dilation");
}

}  // namespace
}  // namespace batchconv::test

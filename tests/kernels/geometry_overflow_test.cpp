// Geometry whose index arithmetic leaves int32 although every tensor is small
// (huge stride, padding or dilation): the kernels must give the reference's
// numbers or a clear batchconv::Error with y unwritten, never crash. Kept in
// its own binary so that a crash here does not hide the other overflow tests.
#include <gtest/gtest.h>

#include <iostream>

#include "reference.h"
#include "test_support.h"

namespace batchconv::test {
namespace {

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

TEST(GeometryOverflow, HugeDilationGivesReferenceNumbersOrAClearError) {
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

TEST(GeometryOverflow, HugeStrideAndPaddingGiveReferenceNumbersOrAClearError) {
  const int big = 1500000000;  // fits int32; twice it does not
  ConvDesc d;
  d.stride = {big, big};
  d.pad_begin = {big, big};
  d.pad_end = {big, big};
  expect_reference_or_error(d, "huge_stride_and_pad");
}

}  // namespace
}  // namespace batchconv::test

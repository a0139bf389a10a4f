// Unusual but meaningful strides: a zero stride on an input is a broadcast
// (one image for the whole batch, one filter bank for every task) and must
// give the reference numbers; a negative stride (a flipped view) must give the
// reference numbers or a clear error; a zero stride on the output would make
// several results land on one element, so it must be rejected.
#include <gtest/gtest.h>

#include <limits>

#include "bad_input_support.h"
#include "reference.h"

namespace batchconv::test {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(Views, ZeroBatchStrideInputIsABroadcast) {
  auto rng = case_rng("zero-stride-x");
  Tensor img({1, 6, 9, 11}, Layout::Contiguous), w({8, 3, 3, 3}, Layout::Contiguous),
      y({4, 8, 9, 11}, Layout::Contiguous);
  img.fill_random(rng, kNaN), w.fill_random(rng, kNaN);
  poison_output(y);
  TensorView x(img.storage().data(), {4, 6, 9, 11}, {0, 99, 11, 1});  // x[n] = img[0] for all n
  ConvDesc d = ConvDesc::with_padding(1);
  d.groups = 2;
  try {
    grouped_conv(x, w.view(), nullptr, y.view(), d);
  } catch (const std::exception& e) {
    FAIL() << "threw on a valid broadcast view: " << e.what();
  }
  std::vector<int64_t> shape;
  expect_matches(y, ref::grouped_conv(x, w.view(), nullptr, d, &shape), shape, "zero-stride-x");
}

TEST(Views, ZeroBankStrideWeightsAreShared) {  // batched-weight conv with one bank for all B
  auto rng = case_rng("zero-stride-w");
  Tensor x({3, 2, 4, 8, 8}, Layout::Contiguous), bank({1, 5, 4, 3, 3}, Layout::Contiguous),
      y({3, 2, 5, 6, 6}, Layout::Contiguous);
  x.fill_random(rng, kNaN), bank.fill_random(rng, kNaN);
  poison_output(y);
  TensorView w(bank.storage().data(), {3, 5, 4, 3, 3}, {0, 36, 9, 3, 1});
  try {
    batched_weight_conv(x.view(), w, nullptr, y.view(), ConvDesc{});
  } catch (const std::exception& e) {
    FAIL() << "threw on a valid broadcast view: " << e.what();
  }
  std::vector<int64_t> shape;
  expect_matches(y, ref::batched_weight_conv(x.view(), w, nullptr, ConvDesc{}, &shape), shape,
                 "zero-stride-w");
}

TEST(Views, NegativeRowStrideGivesReferenceNumbersOrAClearError) {  // x flipped vertically
  auto rng = case_rng("negative-stride");
  const int64_t H = 7, W = 9;
  Tensor store({2, 3, H, W}, Layout::Contiguous), w({4, 3, 3, 3}, Layout::Contiguous),
      y({2, 4, H, W}, Layout::Contiguous);
  store.fill_random(rng, kNaN), w.fill_random(rng, kNaN);
  poison_output(y);
  TensorView x(store.storage().data() + (H - 1) * W, {2, 3, H, W}, {3 * H * W, H * W, -W, 1});
  const ConvDesc d = ConvDesc::with_padding(1);
  try {
    grouped_conv(x, w.view(), nullptr, y.view(), d);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x"), std::string::npos) << e.what();
    EXPECT_TRUE(y.untouched_outside_view(kSentinel));
    return;  // rejected clearly: acceptable
  }
  std::vector<int64_t> shape;
  expect_matches(y, ref::grouped_conv(x, w.view(), nullptr, d, &shape), shape, "negative-stride");
}

TEST(Views, OverlappingOutputIsRejected) {  // y[0] and y[1] would be the same memory
  Problem p = grouped_problem();
  TensorView y(p.y.storage().data(), {2, 6, 5, 5}, {0, 25, 5, 1});
  expect_error([&] { grouped_conv(p.x.view(), p.w.view(), p.bias.view_ptr(), y, p.d); },
               {"grouped_conv", word("y"), "overlap|alias|stride"}, {&p.y});
}

TEST(Views, OverlappingLinearOutputIsRejected) {
  Problem p = linear_problem();
  TensorView y(p.y.storage().data(), {3, 5, 6}, {30, 1, 1});  // rows overlap
  expect_error([&] { batched_linear(p.x.view(), p.w.view(), p.bias.view_ptr(), y); },
               {"batched_linear", word("y"), "overlap|alias|stride"}, {&p.y});
}

}  // namespace
}  // namespace batchconv::test

// batched_weight_conv and broadcast_input_conv on bad input: each test breaks
// one thing of a valid problem and expects batchconv::Error naming the argument
// (and the expected shape where it is determined), with y left untouched.
#include <gtest/gtest.h>

#include "bad_input_support.h"

namespace batchconv::test {
namespace {

// How a message says what was expected.
const std::string kExpected = "expected|must be|needs";

void expect_batched_error(Tensor& x, Tensor& w, Tensor* bias, Tensor& y, const ConvDesc& d,
                          std::vector<std::string> patterns) {
  patterns.push_back("batched_weight_conv");
  expect_error(
      [&] { batched_weight_conv(x.view(), w.view(), bias ? bias->view_ptr() : nullptr, y.view(), d); },
      patterns, {&y});
}

void expect_broadcast_error(Tensor& x, Tensor& w, Tensor* bias, Tensor& y, const ConvDesc& d,
                            BroadcastLayout layout, std::vector<std::string> patterns) {
  patterns.push_back("broadcast_input_conv");
  expect_error([&] {
    broadcast_input_conv(x.view(), w.view(), bias ? bias->view_ptr() : nullptr, y.view(), d, layout);
  }, patterns, {&y});
}

// ---- batched_weight_conv: x (3, 2, 4, 7, 7), w (3, 6, 2, 3, 3), groups 2 -> y (3, 2, 6, 5, 5)

TEST(BatchedWeightConvBadInput, ValidProblemPasses) {
  Problem p = batched_problem();
  EXPECT_NO_THROW(batched_weight_conv(p.x.view(), p.w.view(), p.bias.view_ptr(), p.y.view(), p.d));
}

TEST(BatchedWeightConvBadInput, BOfXAndWDiffer) {
  Problem p = batched_problem();
  Tensor w = T({2, 6, 2, 3, 3});
  expect_batched_error(p.x, w, nullptr, p.y, p.d,
                       {word("w"), lit("(2, 6, 2, 3, 3)"), kExpected, lit("(3, 6, 2")});
}

TEST(BatchedWeightConvBadInput, XOfRank6) {
  Problem p = batched_problem();
  Tensor x = T({3, 2, 4, 7, 7, 1});
  expect_batched_error(x, p.w, &p.bias, p.y, p.d, {word("x"), lit("(3, 2, 4, 7, 7, 1)"), kExpected});
}

TEST(BatchedWeightConvBadInput, XWithoutBatchAxis) {  // a grouped-conv x passed by mistake
  Problem p = batched_problem();
  Tensor x = T({2, 4, 7, 7});
  expect_batched_error(x, p.w, &p.bias, p.y, p.d, {word("x|w"), kExpected});
}

TEST(BatchedWeightConvBadInput, WInputChannelsMismatch) {
  Problem p = batched_problem();
  Tensor w = T({3, 6, 4, 3, 3});
  expect_batched_error(p.x, w, &p.bias, p.y, p.d, {word("w"), lit("(3, 6, 4, 3, 3)"), kExpected});
}

TEST(BatchedWeightConvBadInput, GroupsDoNotDivideChannels) {
  Problem p = batched_problem();
  p.d.groups = 3;
  expect_batched_error(p.x, p.w, &p.bias, p.y, p.d, {word("groups"), "3", "4"});
}

TEST(BatchedWeightConvBadInput, GroupsNegative) {
  Problem p = batched_problem();
  p.d.groups = -1;
  expect_batched_error(p.x, p.w, &p.bias, p.y, p.d, {word("groups"), "-1"});
}

TEST(BatchedWeightConvBadInput, BiasWithoutBatchAxis) {
  Problem p = batched_problem();
  Tensor b = T({6});
  expect_batched_error(p.x, p.w, &b, p.y, p.d, {word("bias"), lit("(6)"), kExpected, lit("(3, 6)") + "|" + lit("(B, Cout)")});
}

TEST(BatchedWeightConvBadInput, BiasWrongB) {
  Problem p = batched_problem();
  Tensor b = T({2, 6});
  expect_batched_error(p.x, p.w, &b, p.y, p.d, {word("bias"), lit("(2, 6)"), kExpected, lit("(3, 6)")});
}

TEST(BatchedWeightConvBadInput, YWrongWidth) {
  Problem p = batched_problem();
  Tensor y = Y({3, 2, 6, 5, 4});
  expect_batched_error(p.x, p.w, &p.bias, y, p.d, {word("y"), kExpected, lit("(3, 2, 6, 5, 5)")});
}

TEST(BatchedWeightConvBadInput, YWithBAndNSwapped) {
  Problem p = batched_problem();
  Tensor y = Y({2, 3, 6, 5, 5});
  expect_batched_error(p.x, p.w, &p.bias, y, p.d, {word("y"), kExpected, lit("(3, 2, 6, 5, 5)")});
}

TEST(BatchedWeightConvBadInput, ZeroB) {
  Problem p = batched_problem();
  Tensor x = T({0, 2, 4, 7, 7}), w = T({0, 6, 2, 3, 3}), y = Y({0, 2, 6, 5, 5});
  expect_batched_error(x, w, nullptr, y, p.d, {word("x|w"), "0"});
}

TEST(BatchedWeightConvBadInput, ZeroN) {
  Problem p = batched_problem();
  Tensor x = T({3, 0, 4, 7, 7}), y = Y({3, 0, 6, 5, 5});
  expect_batched_error(x, p.w, &p.bias, y, p.d, {word("x"), lit("(3, 0, 4, 7, 7)")});
}

TEST(BatchedWeightConvBadInput, KernelLargerThanPaddedInput) {
  Problem p = batched_problem();
  Tensor w = T({3, 6, 2, 9, 9}), y = Y({3, 2, 6, 1, 1});
  p.d.pad_begin = {1, 0};
  expect_batched_error(p.x, w, &p.bias, y, p.d, {"kernel|" + word("w"), "9"});
}

TEST(BatchedWeightConvBadInput, NullX) {
  Problem p = batched_problem();
  TensorView x = p.x.view();
  x.data = nullptr;
  expect_error([&] { batched_weight_conv(x, p.w.view(), nullptr, p.y.view(), p.d); },
               {"batched_weight_conv", word("x"), "null"}, {&p.y});
}

TEST(BatchedWeightConvBadInput, StrideZero) {
  Problem p = batched_problem();
  p.d.stride = {0, 0};
  expect_batched_error(p.x, p.w, &p.bias, p.y, p.d, {"stride", "0"});
}

TEST(BatchedWeightConvBadInput, NegativePadding) {
  Problem p = batched_problem();
  p.d.pad_end = {0, -1};
  expect_batched_error(p.x, p.w, &p.bias, p.y, p.d, {"pad", "-1"});
}

// ---- broadcast_input_conv: x (2, 4, 7, 7), w (3, 6, 4, 3, 3) -> y (2, 18, 5, 5) / (3, 2, 6, 5, 5)

TEST(BroadcastInputConvBadInput, ValidProblemPasses) {
  Problem p = broadcast_problem();
  EXPECT_NO_THROW(broadcast_input_conv(p.x.view(), p.w.view(), p.bias.view_ptr(), p.y.view(), p.d,
                                       BroadcastLayout::Concatenated));
}

TEST(BroadcastInputConvBadInput, XChannelsMismatch) {
  Problem p = broadcast_problem();
  Tensor x = T({2, 5, 7, 7});
  expect_broadcast_error(x, p.w, &p.bias, p.y, p.d, BroadcastLayout::Concatenated,
                         {word("x|w"), kExpected, "5"});
}

TEST(BroadcastInputConvBadInput, WWithoutBankAxis) {  // a grouped-conv weight passed by mistake
  Problem p = broadcast_problem();
  Tensor w = T({18, 4, 3, 3});
  expect_broadcast_error(p.x, w, &p.bias, p.y, p.d, BroadcastLayout::Concatenated,
                         {word("w"), lit("(18, 4, 3, 3)"), kExpected});
}

TEST(BroadcastInputConvBadInput, YInBatchedShapeForConcatenatedLayout) {
  Problem p = broadcast_problem();
  Tensor y = Y({3, 2, 6, 5, 5});
  expect_broadcast_error(p.x, p.w, &p.bias, y, p.d, BroadcastLayout::Concatenated,
                         {word("y"), kExpected, lit("(2, 18, 5, 5)")});
}

TEST(BroadcastInputConvBadInput, YInConcatenatedShapeForBatchedLayout) {
  Problem p = broadcast_problem();
  expect_broadcast_error(p.x, p.w, &p.bias, p.y, p.d, BroadcastLayout::Batched,
                         {word("y"), kExpected, lit("(3, 2, 6, 5, 5)")});
}

TEST(BroadcastInputConvBadInput, BiasOfConcatenatedLength) {
  Problem p = broadcast_problem();
  Tensor b = T({18});
  expect_broadcast_error(p.x, p.w, &b, p.y, p.d, BroadcastLayout::Concatenated,
                         {word("bias"), lit("(18)"), kExpected, lit("(3, 6)") + "|" + lit("(B, Cout)")});
}

TEST(BroadcastInputConvBadInput, GroupsDoNotDivideChannels) {
  Problem p = broadcast_problem();
  p.d.groups = 3;
  expect_broadcast_error(p.x, p.w, &p.bias, p.y, p.d, BroadcastLayout::Concatenated,
                         {word("groups"), "3", "4"});
}

TEST(BroadcastInputConvBadInput, ZeroBanks) {
  Problem p = broadcast_problem();
  Tensor w = T({0, 6, 4, 3, 3}), y = Y({2, 0, 5, 5});
  expect_broadcast_error(p.x, w, nullptr, y, p.d, BroadcastLayout::Concatenated,
                         {word("w"), lit("(0, 6, 4, 3, 3)")});
}

TEST(BroadcastInputConvBadInput, KernelLargerThanInput1D) {
  Tensor x = T({2, 4, 3}), w = T({3, 6, 4, 5}), y = Y({2, 18, 1});
  expect_broadcast_error(x, w, nullptr, y, ConvDesc{}, BroadcastLayout::Concatenated,
                         {"kernel|" + word("w"), "5"});
}

TEST(BroadcastInputConvBadInput, NullW) {
  Problem p = broadcast_problem();
  TensorView w = p.w.view();
  w.data = nullptr;
  expect_error([&] {
    broadcast_input_conv(p.x.view(), w, nullptr, p.y.view(), p.d, BroadcastLayout::Concatenated);
  }, {"broadcast_input_conv", word("w"), "null"}, {&p.y});
}

TEST(BroadcastInputConvBadInput, DilationZero) {
  Problem p = broadcast_problem();
  p.d.dilation = {0, 1};
  expect_broadcast_error(p.x, p.w, &p.bias, p.y, p.d, BroadcastLayout::Concatenated,
                         {"dilation", "0"});
}

}  // namespace
}  // namespace batchconv::test

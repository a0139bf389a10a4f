// grouped_conv on bad input: each test breaks one thing of a valid problem and
// expects batchconv::Error naming the argument (and the expected shape where
// it is determined), with y left untouched.
#include <gtest/gtest.h>

#include "bad_input_support.h"

namespace batchconv::test {
namespace {

// How a message says what was expected.
const std::string kExpected = "expected|must be|needs";

const std::string kOp = "grouped_conv";

// Calls grouped_conv(x, w, bias?, y, d) and checks the error.
void expect_grouped_error(Tensor& x, Tensor& w, Tensor* bias, Tensor& y, const ConvDesc& d,
                          std::vector<std::string> patterns) {
  patterns.push_back(kOp);
  expect_error([&] { grouped_conv(x.view(), w.view(), bias ? bias->view_ptr() : nullptr, y.view(), d); },
               patterns, {&y});
}

TEST(GroupedConvBadInput, ValidProblemPasses) {  // the base problem of every test below is valid
  Problem p = grouped_problem();
  EXPECT_NO_THROW(grouped_conv(p.x.view(), p.w.view(), p.bias.view_ptr(), p.y.view(), p.d));
}

TEST(GroupedConvBadInput, XOfRank5) {
  Problem p = grouped_problem();
  Tensor x = T({2, 4, 7, 7, 1});
  expect_grouped_error(x, p.w, &p.bias, p.y, p.d, {word("x"), lit("(2, 4, 7, 7, 1)"), kExpected});
}

TEST(GroupedConvBadInput, XOfRank2) {
  Problem p = grouped_problem();
  Tensor x = T({2, 4});
  expect_grouped_error(x, p.w, &p.bias, p.y, p.d, {word("x"), lit("(2, 4)"), kExpected});
}

TEST(GroupedConvBadInput, WRankDiffersFromX) {
  Problem p = grouped_problem();
  Tensor w = T({6, 2, 3});
  expect_grouped_error(p.x, w, &p.bias, p.y, p.d, {word("w"), lit("(6, 2, 3)"), kExpected});
}

TEST(GroupedConvBadInput, WInputChannelsMismatch) {  // Cin/groups = 2, w says 3
  Problem p = grouped_problem();
  Tensor w = T({6, 3, 3, 3});
  expect_grouped_error(p.x, w, &p.bias, p.y, p.d,
                       {word("w"), lit("(6, 3, 3, 3)"), kExpected, lit("(6, 2") + "|Cin/groups = 2"});
}

TEST(GroupedConvBadInput, WInputChannelsMismatch1D) {
  Problem p = grouped_problem(1);
  Tensor w = T({6, 4, 3});
  expect_grouped_error(p.x, w, &p.bias, p.y, p.d,
                       {word("w"), lit("(6, 4, 3)"), kExpected, lit("(6, 2") + "|Cin/groups = 2"});
}

TEST(GroupedConvBadInput, GroupsDoNotDivideInputChannels) {
  Problem p = grouped_problem();
  Tensor x = T({2, 6, 7, 7}), w = T({8, 2, 3, 3}), y = Y({2, 8, 5, 5});
  p.d.groups = 4;
  expect_grouped_error(x, w, nullptr, y, p.d, {word("groups"), "4", "6"});
}

TEST(GroupedConvBadInput, GroupsDoNotDivideOutputChannels) {
  Problem p = grouped_problem();
  Tensor w = T({5, 2, 3, 3}), y = Y({2, 5, 5, 5});
  expect_grouped_error(p.x, w, nullptr, y, p.d, {word("groups"), "5"});
}

TEST(GroupedConvBadInput, GroupsZero) {
  Problem p = grouped_problem();
  p.d.groups = 0;
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {word("groups"), "0"});
}

TEST(GroupedConvBadInput, GroupsNegative) {
  Problem p = grouped_problem();
  p.d.groups = -2;
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {word("groups"), "-2"});
}

TEST(GroupedConvBadInput, ZeroBatch) {
  Problem p = grouped_problem();
  Tensor x = T({0, 4, 7, 7}), y = Y({0, 6, 5, 5});
  expect_grouped_error(x, p.w, &p.bias, y, p.d, {word("x"), lit("(0, 4, 7, 7)")});
}

TEST(GroupedConvBadInput, ZeroChannels) {
  Problem p = grouped_problem();
  Tensor x = T({2, 0, 7, 7}), w = T({6, 0, 3, 3});
  p.d.groups = 1;
  expect_grouped_error(x, w, &p.bias, p.y, p.d, {word("x|w"), "0"});
}

TEST(GroupedConvBadInput, ZeroWidth) {
  Problem p = grouped_problem();
  Tensor x = T({2, 4, 7, 0});
  expect_grouped_error(x, p.w, &p.bias, p.y, p.d, {word("x"), lit("(2, 4, 7, 0)")});
}

TEST(GroupedConvBadInput, ZeroKernelWidth) {
  Problem p = grouped_problem();
  Tensor w = T({6, 2, 3, 0});
  expect_grouped_error(p.x, w, &p.bias, p.y, p.d, {word("w"), lit("(6, 2, 3, 0)")});
}

TEST(GroupedConvBadInput, ZeroOutputChannels) {
  Problem p = grouped_problem();
  Tensor w = T({0, 2, 3, 3}), y = Y({2, 0, 5, 5});
  expect_grouped_error(p.x, w, nullptr, y, p.d, {word("w"), lit("(0, 2, 3, 3)")});
}

TEST(GroupedConvBadInput, KernelLargerThanPaddedInput) {  // 4 + 1 + 1 < 7
  Problem p = grouped_problem();
  Tensor x = T({2, 4, 4, 4}), w = T({6, 2, 7, 7}), y = Y({2, 6, 1, 1});
  ConvDesc d = ConvDesc::with_padding(1);
  d.groups = 2;
  expect_grouped_error(x, w, nullptr, y, d, {"kernel|" + word("w"), "7", "6"});
}

TEST(GroupedConvBadInput, DilatedKernelLargerThanInput) {  // 3 taps, dilation 4: 9 > 7
  Problem p = grouped_problem();
  p.d.dilation = {4, 4};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"kernel|" + word("w"), "dilat", "9|7"});
}

TEST(GroupedConvBadInput, KernelLargerThanInput1D) {
  Problem p = grouped_problem(1);
  Tensor x = T({2, 4, 3}), w = T({6, 2, 5}), y = Y({2, 6, 1});
  expect_grouped_error(x, w, nullptr, y, p.d, {"kernel|" + word("w"), "5", "3"});
}

TEST(GroupedConvBadInput, BiasWrongLength) {
  Problem p = grouped_problem();
  Tensor b = T({5});
  expect_grouped_error(p.x, p.w, &b, p.y, p.d, {word("bias"), lit("(5)"), kExpected, lit("(6)")});
}

TEST(GroupedConvBadInput, BiasWrongRank) {
  Problem p = grouped_problem();
  Tensor b = T({1, 6});
  expect_grouped_error(p.x, p.w, &b, p.y, p.d, {word("bias"), lit("(1, 6)"), kExpected, lit("(6)") + "|" + lit("(Cout)")});
}

TEST(GroupedConvBadInput, YWrongWidth) {
  Problem p = grouped_problem();
  Tensor y = Y({2, 6, 5, 4});
  expect_grouped_error(p.x, p.w, &p.bias, y, p.d,
                       {word("y"), lit("(2, 6, 5, 4)"), kExpected, lit("(2, 6, 5, 5)")});
}

TEST(GroupedConvBadInput, YWrongChannels) {
  Problem p = grouped_problem();
  Tensor y = Y({2, 5, 5, 5});
  expect_grouped_error(p.x, p.w, &p.bias, y, p.d, {word("y"), kExpected, lit("(2, 6, 5, 5)")});
}

TEST(GroupedConvBadInput, YWrongRank) {
  Problem p = grouped_problem();
  Tensor y = Y({2, 6, 25});
  expect_grouped_error(p.x, p.w, &p.bias, y, p.d, {word("y"), kExpected, lit("(2, 6, 5, 5)")});
}

TEST(GroupedConvBadInput, YWrongShape1D) {
  Problem p = grouped_problem(1);
  Tensor y = Y({2, 6, 7});
  expect_grouped_error(p.x, p.w, &p.bias, y, p.d, {word("y"), kExpected, lit("(2, 6, 5)")});
}

// Null data: the view's shape is right but its pointer is null.
void expect_null_error(const char* which) {
  Problem p = grouped_problem();
  TensorView x = p.x.view(), w = p.w.view(), b = p.bias.view(), y = p.y.view();
  TensorView* v = std::string(which) == "x" ? &x : std::string(which) == "w" ? &w
                : std::string(which) == "bias" ? &b : &y;
  v->data = nullptr;
  expect_error([&] { grouped_conv(x, w, &b, y, p.d); }, {kOp, word(which), "null"}, {&p.y});
}
TEST(GroupedConvBadInput, NullX) { expect_null_error("x"); }
TEST(GroupedConvBadInput, NullW) { expect_null_error("w"); }
TEST(GroupedConvBadInput, NullBias) { expect_null_error("bias"); }
TEST(GroupedConvBadInput, NullY) { expect_null_error("y"); }

TEST(GroupedConvBadInput, StrideZero) {
  Problem p = grouped_problem();
  p.d.stride = {1, 0};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"stride", "0"});
}

TEST(GroupedConvBadInput, StrideNegative1D) {
  Problem p = grouped_problem(1);
  p.d.stride = {-1, 1};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"stride", "-1"});
}

TEST(GroupedConvBadInput, DilationZero) {
  Problem p = grouped_problem();
  p.d.dilation = {0, 1};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"dilation", "0"});
}

TEST(GroupedConvBadInput, DilationNegative) {
  Problem p = grouped_problem();
  p.d.dilation = {1, -3};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"dilation", "-3"});
}

TEST(GroupedConvBadInput, NegativePadBegin) {
  Problem p = grouped_problem();
  p.d.pad_begin = {-1, 0};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"pad", "-1"});
}

TEST(GroupedConvBadInput, NegativePadEnd1D) {
  Problem p = grouped_problem(1);
  p.d.pad_end = {-2, 0};
  expect_grouped_error(p.x, p.w, &p.bias, p.y, p.d, {"pad", "-2"});
}

TEST(ConvOutputSize, KernelLargerThanPaddedInputNamesWhat) {
  EXPECT_EQ(conv_output_size(7, 3, 2, 1, 1, 0, "h"), 3);  // (7 + 1 - 3) / 2 + 1, from the definition
  expect_error([] { conv_output_size(4, 7, 1, 1, 1, 1, "my_axis"); }, {word("my_axis")}, {});
  expect_error([] { conv_output_size(7, 3, 0, 1, 0, 0, "my_axis"); }, {"stride"}, {});
}

}  // namespace
}  // namespace batchconv::test

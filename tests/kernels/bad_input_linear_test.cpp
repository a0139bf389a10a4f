// batched_linear on bad input: x (3, 5, 4), w (3, 4, 6), bias (3, 6) ->
// y (3, 5, 6) broken one way per test; each must throw batchconv::Error naming
// the argument (and the expected shape where determined), y untouched.
#include <gtest/gtest.h>

#include "bad_input_support.h"

namespace batchconv::test {
namespace {

// How a message says what was expected.
const std::string kExpected = "expected|must be|needs";

void expect_linear_error(Tensor& x, Tensor& w, Tensor* bias, Tensor& y,
                         std::vector<std::string> patterns) {
  patterns.push_back("batched_linear");
  expect_error([&] { batched_linear(x.view(), w.view(), bias ? bias->view_ptr() : nullptr, y.view()); },
               patterns, {&y});
}

TEST(BatchedLinearBadInput, ValidProblemPasses) {
  Problem p = linear_problem();
  EXPECT_NO_THROW(batched_linear(p.x.view(), p.w.view(), p.bias.view_ptr(), p.y.view()));
}

TEST(BatchedLinearBadInput, BOfXAndWDiffer) {
  Problem p = linear_problem();
  Tensor x = T({2, 5, 4});
  expect_linear_error(x, p.w, &p.bias, p.y, {word("x|w"), kExpected, "2", "3"});
}

TEST(BatchedLinearBadInput, KMismatch) {
  Problem p = linear_problem();
  Tensor w = T({3, 5, 6});
  expect_linear_error(p.x, w, &p.bias, p.y, {word("w"), lit("(3, 5, 6)"), kExpected, lit("(3, 4")});
}

TEST(BatchedLinearBadInput, SharedXWrongK) {
  Problem p = linear_problem();
  Tensor x = T({5, 7});
  expect_linear_error(x, p.w, &p.bias, p.y, {word("x|w"), kExpected, "7"});
}

TEST(BatchedLinearBadInput, XOfRank4) {
  Problem p = linear_problem();
  Tensor x = T({3, 5, 4, 1});
  expect_linear_error(x, p.w, &p.bias, p.y, {word("x"), lit("(3, 5, 4, 1)"), kExpected});
}

TEST(BatchedLinearBadInput, XOfRank1) {
  Problem p = linear_problem();
  Tensor x = T({4});
  expect_linear_error(x, p.w, &p.bias, p.y, {word("x"), lit("(4)"), kExpected});
}

TEST(BatchedLinearBadInput, WOfRank2) {
  Problem p = linear_problem();
  Tensor w = T({4, 6});
  expect_linear_error(p.x, w, &p.bias, p.y, {word("w"), lit("(4, 6)"), kExpected});
}

TEST(BatchedLinearBadInput, BiasWithoutBatchAxis) {
  Problem p = linear_problem();
  Tensor b = T({6});
  expect_linear_error(p.x, p.w, &b, p.y, {word("bias"), lit("(6)"), kExpected, lit("(3, 6)") + "|" + lit("(B, M)")});
}

TEST(BatchedLinearBadInput, BiasWrongM) {
  Problem p = linear_problem();
  Tensor b = T({3, 5});
  expect_linear_error(p.x, p.w, &b, p.y, {word("bias"), lit("(3, 5)"), kExpected, lit("(3, 6)")});
}

TEST(BatchedLinearBadInput, YTransposed) {
  Problem p = linear_problem();
  Tensor y = Y({3, 6, 5});
  expect_linear_error(p.x, p.w, &p.bias, y, {word("y"), lit("(3, 6, 5)"), kExpected, lit("(3, 5, 6)")});
}

TEST(BatchedLinearBadInput, YWithoutBatchAxisForSharedX) {
  Problem p = linear_problem();
  Tensor x = T({5, 4}), y = Y({5, 6});
  expect_linear_error(x, p.w, &p.bias, y, {word("y"), kExpected, lit("(3, 5, 6)")});
}

TEST(BatchedLinearBadInput, ZeroN) {
  Problem p = linear_problem();
  Tensor x = T({3, 0, 4}), y = Y({3, 0, 6});
  expect_linear_error(x, p.w, &p.bias, y, {word("x"), lit("(3, 0, 4)")});
}

TEST(BatchedLinearBadInput, ZeroK) {
  Problem p = linear_problem();
  Tensor x = T({3, 5, 0}), w = T({3, 0, 6});
  expect_linear_error(x, w, &p.bias, p.y, {word("x|w"), "0"});
}

TEST(BatchedLinearBadInput, ZeroM) {
  Problem p = linear_problem();
  Tensor w = T({3, 4, 0}), y = Y({3, 5, 0});
  expect_linear_error(p.x, w, nullptr, y, {word("w"), lit("(3, 4, 0)")});
}

void expect_null_error(const char* which) {
  Problem p = linear_problem();
  TensorView x = p.x.view(), w = p.w.view(), b = p.bias.view(), y = p.y.view();
  const std::string s(which);
  (s == "x" ? x : s == "w" ? w : s == "bias" ? b : y).data = nullptr;
  expect_error([&] { batched_linear(x, w, &b, y); }, {"batched_linear", word(which), "null"}, {&p.y});
}
TEST(BatchedLinearBadInput, NullX) { expect_null_error("x"); }
TEST(BatchedLinearBadInput, NullW) { expect_null_error("w"); }
TEST(BatchedLinearBadInput, NullBias) { expect_null_error("bias"); }
TEST(BatchedLinearBadInput, NullY) { expect_null_error("y"); }

}  // namespace
}  // namespace batchconv::test

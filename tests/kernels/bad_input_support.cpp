#include "bad_input_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <regex>

namespace batchconv::test {
namespace {

Problem make(std::vector<int64_t> x, std::vector<int64_t> w, std::vector<int64_t> bias,
             std::vector<int64_t> y, int groups) {
  Problem p{Tensor(x, Layout::Contiguous), Tensor(w, Layout::Contiguous),
            Tensor(bias, Layout::Contiguous), Tensor(y, Layout::Contiguous), ConvDesc{}};
  auto rng = case_rng("bad-input");
  p.x.fill_random(rng, 0), p.w.fill_random(rng, 0), p.bias.fill_random(rng, 0);
  p.y.fill(kSentinel, kSentinel);
  p.d.groups = groups;
  return p;
}

}  // namespace

Tensor T(std::vector<int64_t> shape) {
  Tensor t(std::move(shape), Layout::Contiguous);
  auto rng = case_rng("bad-input-tensor");
  t.fill_random(rng, 0);
  return t;
}

Tensor Y(std::vector<int64_t> shape) {
  Tensor t(std::move(shape), Layout::Contiguous);
  t.fill(kSentinel, kSentinel);
  return t;
}

Problem grouped_problem(int dims) {
  if (dims == 1) return make({2, 4, 7}, {6, 2, 3}, {6}, {2, 6, 5}, 2);
  return make({2, 4, 7, 7}, {6, 2, 3, 3}, {6}, {2, 6, 5, 5}, 2);
}
Problem batched_problem() {
  return make({3, 2, 4, 7, 7}, {3, 6, 2, 3, 3}, {3, 6}, {3, 2, 6, 5, 5}, 2);
}
Problem broadcast_problem() {
  return make({2, 4, 7, 7}, {3, 6, 4, 3, 3}, {3, 6}, {2, 18, 5, 5}, 1);
}
Problem linear_problem() { return make({3, 5, 4}, {3, 4, 6}, {3, 6}, {3, 5, 6}, 1); }

std::string word(const std::string& name) {
  return "(^|[^A-Za-z0-9_])(" + name + ")($|[^A-Za-z0-9_])";
}

std::string lit(const std::string& s) {
  static const std::regex special(R"([.^$|()\[\]{}*+?\\])");
  return std::regex_replace(s, special, R"(\$&)");
}

std::string expect_error(const std::function<void()>& call, const std::vector<std::string>& patterns,
                         const std::vector<Tensor*>& outputs) {
  std::vector<std::vector<float>> before;
  for (Tensor* t : outputs) before.push_back(t->storage());
  std::string message;
  try {
    call();
    ADD_FAILURE() << "no batchconv::Error thrown (expected one matching "
                  << ::testing::PrintToString(patterns) << ")";
  } catch (const Error& e) {
    message = e.what();
    std::cout << "  error message: " << message << "\n";
    for (const std::string& p : patterns)
      EXPECT_TRUE(std::regex_search(message, std::regex(p, std::regex::icase)))
          << "message \"" << message << "\" does not match /" << p << "/";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a std::exception that is not batchconv::Error: " << e.what();
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& now = outputs[i]->storage();
    EXPECT_TRUE(now.size() == before[i].size() &&
                std::memcmp(now.data(), before[i].data(), now.size() * sizeof(float)) == 0)
        << "the output was written although validation failed";
  }
  return message;
}

}  // namespace batchconv::test

// Tests of the measuring machinery itself: the allocation counter sees what
// is allocated, and sampled checks cut sub-problems whose reference output is
// exactly the matching box of the full reference output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "alloc_counter.h"
#include "check.h"
#include "problem.h"

namespace bcbench {
namespace {

TEST(AllocCounter, CountsMallocFamilyAndPeak) {
  ASSERT_TRUE(mem::counting_active());
  const int64_t live0 = mem::live_bytes();
  mem::reset_peak();
  const size_t mb = size_t(1) << 20;
  void* a = std::malloc(8 * mb);
  void* b = nullptr;
  ASSERT_EQ(posix_memalign(&b, 64, 4 * mb), 0);
  float* c = new float[mb];  // 4 MiB through operator new
  std::memset(a, 1, 8 * mb);
  std::memset(c, 0, 4 * mb);
  volatile float sink = c[mb - 1] + static_cast<char*>(a)[3];  // keep the allocations observable
  (void)sink;
  EXPECT_GE(mem::live_bytes() - live0, int64_t(16 * mb));
  std::free(a);
  std::free(b);
  delete[] c;
  EXPECT_LT(mem::live_bytes() - live0, int64_t(mb));
  EXPECT_GE(mem::peak_bytes() - live0, int64_t(16 * mb));
  void* r = std::malloc(mb);
  r = std::realloc(r, 6 * mb);
  EXPECT_GE(mem::live_bytes() - live0, int64_t(6 * mb));
  std::free(r);
  EXPECT_LT(mem::live_bytes() - live0, int64_t(mb));
}

std::vector<double> gather_d(const std::vector<double>& full, const std::vector<int64_t>& shape, const Box& b) {
  std::vector<float> idx(full.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<float>(i);  // exact up to 2^24
  std::vector<float> picked = gather_box(idx.data(), shape, b);
  std::vector<double> out;
  for (float f : picked) out.push_back(full[static_cast<size_t>(f)]);
  return out;
}

void expect_samples_match_full(const ProblemSpec& spec) {
  SCOPED_TRACE(std::string(op_name(spec.op)) + " x=" + shape_str(spec.x_shape) + " w=" + shape_str(spec.w_shape));
  auto p = make_problem(spec, 3);
  const CheckPlan full = plan_check(*p, CheckMode::Full);
  ASSERT_EQ(full.samples.size(), 1u);
  const CheckPlan sampled = plan_check(*p, CheckMode::Sample, /*sample_flops=*/1);
  ASSERT_FALSE(sampled.samples.empty());
  for (const auto& s : sampled.samples) {
    const std::vector<double> want = gather_d(full.samples[0].ref, p->y_shape, s.ybox);
    ASSERT_EQ(want.size(), s.ref.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(want[i], s.ref[i], 1e-9 * (1 + std::abs(want[i])));
  }
}

ProblemSpec spec(Op op, std::vector<int64_t> x, std::vector<int64_t> w, int pad, int groups, bool bias) {
  ProblemSpec s;
  s.op = op;
  s.x_shape = x;
  s.w_shape = w;
  s.desc = batchconv::ConvDesc::with_padding(pad);
  s.desc.groups = groups;
  s.bias = bias;
  return s;
}

TEST(SampledCheck, SubProblemsReproduceTheFullReference) {
  expect_samples_match_full(spec(Op::GroupedConv, {5, 4, 7, 6}, {6, 2, 3, 3}, 1, 2, true));
  expect_samples_match_full(spec(Op::GroupedConv, {1, 8, 50}, {8, 8, 1}, 0, 1, true));  // column window
  expect_samples_match_full(spec(Op::BatchedWeightConv, {3, 4, 2, 6, 6}, {3, 5, 2, 3, 3}, 1, 1, true));
  auto bi = spec(Op::BroadcastInputConv, {4, 3, 5, 5}, {2, 4, 3, 3, 3}, 1, 1, true);
  expect_samples_match_full(bi);
  bi.layout = batchconv::BroadcastLayout::Batched;
  expect_samples_match_full(bi);
  expect_samples_match_full(spec(Op::BroadcastInputConv, {1, 16, 40}, {4, 16, 16, 1}, 0, 1, false));
  expect_samples_match_full(spec(Op::BatchedLinear, {3, 6, 5}, {3, 5, 4}, 0, 1, true));
  expect_samples_match_full(spec(Op::BatchedLinear, {6, 5}, {3, 5, 4}, 0, 1, true));
}

TEST(SampledCheck, CatchesAWrongOutput) {
  auto p = make_problem(spec(Op::BatchedWeightConv, {2, 3, 2, 5, 5}, {2, 4, 2, 3, 3}, 0, 1, false), 4);
  const CheckPlan plan = plan_check(*p, CheckMode::Full);
  EXPECT_TRUE(std::isinf(check_output(*p, plan)));  // y is still NaN-poisoned
  std::memset(p->y.data(), 0, p->y.size() * sizeof(float));
  EXPECT_GT(check_output(*p, plan), 1e-3);
}

}  // namespace
}  // namespace bcbench

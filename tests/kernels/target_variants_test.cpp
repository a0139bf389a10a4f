// The AOT kernels hold three variants (AVX-512, AVX2+FMA, baseline x86-64)
// and pick one at run time. The other sweeps only ever run the best one this
// CPU supports; here Halide's halide_set_custom_can_use_target_features hook
// forces the variant named by BATCHCONV_TEST_VARIANT (avx512, avx2, baseline),
// checks that it is the one dispatched, and runs a share of the swept cases of
// every op through it. The multi-target wrapper caches its choice at the first
// call of each kernel, so the hook is installed before any call and each
// variant needs its own process: ctest runs this binary once per variant.
#include <gtest/gtest.h>

#include <HalideRuntime.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "conv_check.h"
#include "variant_of.h"
#include "reference.h"

namespace batchconv::test {
namespace {

using support::Variant;
using support::variant_name;

bool g_forced = false;

// Installs the hook before the first kernel call of the process.
class ForceVariant : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* v = std::getenv("BATCHCONV_TEST_VARIANT");
    if (!v) return;
    support::variant_forcing().allowed = support::parse_variant(v);
    if (!support::cpu_supports(support::parse_variant(v))) return;
    support::restrict_to(support::parse_variant(v));
    g_forced = true;
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new ForceVariant);

class TargetVariant : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::getenv("BATCHCONV_TEST_VARIANT"))
      GTEST_SKIP() << "set BATCHCONV_TEST_VARIANT=avx512|avx2|baseline (ctest does)";
    if (!g_forced)
      GTEST_SKIP() << "this CPU cannot run the " << variant_name(support::variant_forcing().allowed) << " variant";
  }
  // The wrapper asks about the feature sets of the better variants (the
  // baseline needs none) and runs the best one accepted: that must be the
  // forced one, and the hook must have been asked at all.
  void expect_dispatched(const std::string& what) {
    const Variant ran = support::accepted_variant();
    EXPECT_GT(support::variant_forcing().hook_calls, 0) << what << ": the dispatch hook was never consulted";
    EXPECT_EQ(variant_name(ran), std::string(variant_name(support::variant_forcing().allowed)))
        << what << ": the multi-target wrapper ran another variant than the forced one";
  }
};

// Every 4th swept case of each conv op whose views the runtime takes (a
// last-axis stride != 1 is tested by the main sweeps).
TEST_F(TargetVariant, ConvOpsMatchReference) {
  for (ConvOp op : {ConvOp::Grouped, ConvOp::BatchedWeight, ConvOp::BroadcastInput}) {
    const auto cases = conv_cases(op);
    for (size_t i = 0; i < cases.size(); i += 4) {
      const ConvCase& c = cases[i];
      if (c.x_layout == Layout::InnerStrided || c.w_layout == Layout::InnerStrided ||
          c.y_layout == Layout::InnerStrided)
        continue;
      check_conv_case(op, c);
      expect_dispatched(c.name);
      if (HasFailure()) return;  // one failing case says enough
    }
  }
}

// Long reductions with many output channels (the channels family's full
// register tiles: 4 x 16, 2 x 8 and 2 x 4 channels on AVX-512, AVX2 and the
// baseline), under each forced family.
TEST_F(TargetVariant, LongReductionsMatchReference) {
  for (ConvOp op : {ConvOp::Grouped, ConvOp::BatchedWeight, ConvOp::BroadcastInput}) {
    for (const ConvCase& c : long_reduction_cases(op)) {
      check_conv_case(op, c);
      expect_dispatched(c.name);
      if (HasFailure()) return;
    }
  }
}

TEST_F(TargetVariant, BatchedLinearMatchesReference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int i = 0;
  for (int64_t B : {1, 3})
    for (int64_t N : {1, 7, 40})
      for (int64_t K : {1, 16, 37})
        for (int64_t M : {5, 32, 33}) {
          const std::string name = "linear_" + std::to_string(i++) + "_B" + std::to_string(B) +
                                   "_N" + std::to_string(N) + "_K" + std::to_string(K) + "_M" +
                                   std::to_string(M);
          auto rng = case_rng(name);
          Tensor x({B, N, K}, Layout::Contiguous), w({B, K, M}, Layout::Contiguous),
              b({B, M}, Layout::Contiguous), y({B, N, M}, Layout::Padded);
          x.fill_random(rng, nan), w.fill_random(rng, nan), b.fill_random(rng, nan);
          poison_output(y);
              batched_linear(x.view(), w.view(), b.view_ptr(), y.view(), Activation::ReLU);
          expect_dispatched(name);
          std::vector<int64_t> shape;
          const auto ref = ref::batched_linear(x.view(), w.view(), b.view_ptr(), Activation::ReLU, &shape);
          expect_matches(y, ref, shape, name);
        }
}

}  // namespace
}  // namespace batchconv::test

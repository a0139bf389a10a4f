// The multi-target model libraries (mode "mt": AVX-512, AVX2+FMA and baseline
// x86-64 variants, each lowered and scheduled with its own target's facts)
// with the variant named by BATCHCONV_TEST_VARIANT forced through Halide's
// can-use-target-features hook: every such model matches its stored PyTorch
// outputs and the reference interpreter, and the forced variant is the one
// that ran. The library caches its choice at the first call, so the hook is
// installed before any call and ctest runs this binary once per variant.
#include <gtest/gtest.h>

#include <HalideRuntime.h>

#include <cstdlib>
#include <string>

#include "compiled_model_checks.h"
#include "compiled_models_registry.h"
#include "variant_of.h"

namespace batchconv::testing {
namespace {

using support::Variant;

bool g_forced = false;

class ForceVariant : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* v = std::getenv("BATCHCONV_TEST_VARIANT");
    if (!v || !support::cpu_supports(support::parse_variant(v))) return;
    support::restrict_to(support::parse_variant(v));
    g_forced = true;
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new ForceVariant);

TEST(CompiledModelVariants, EachForcedVariantMatchesPyTorch) {
  if (!std::getenv("BATCHCONV_TEST_VARIANT")) GTEST_SKIP() << "set BATCHCONV_TEST_VARIANT=avx512|avx2|baseline (ctest does)";
  if (!g_forced) GTEST_SKIP() << "this CPU cannot run the forced variant";
  int models = 0;
  for (const CompiledModel& m : kCompiledModels) {
    if (std::string(m.mode) != "mt") continue;
    SCOPED_TRACE(m.stem);
    support::variant_forcing().accepted_mask = 0;
    expect_matches_stored_outputs(m);
    expect_matches_interpreter(m);
    ++models;
    // The first call of each library asked the hook; later calls use its
    // cached choice, so a model whose first call was here must show the
    // forced variant (and no better one) as the best accepted.
    const support::VariantForcing& f = support::variant_forcing();
    if (f.accepted_mask != 0) {
      EXPECT_STREQ(support::variant_name(support::accepted_variant()), support::variant_name(f.allowed))
          << "accepted mask " << f.accepted_mask;
    } else {
      // The baseline variant needs no features: the wrapper may not ask.
      EXPECT_EQ(static_cast<int>(f.allowed), static_cast<int>(Variant::Baseline)) << "the hook was never asked";
    }
  }
  EXPECT_GE(models, 4);
}

}  // namespace
}  // namespace batchconv::testing

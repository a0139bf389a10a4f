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

Variant g_allowed = Variant::Avx512;
int g_accepted_mask = 0;  // bit v: the hook accepted a feature set of Variant v
bool g_forced = false;

int forcing_hook(int count, const uint64_t* f) {
  const Variant v = support::variant_of(count, f);
  if (static_cast<int>(v) < static_cast<int>(g_allowed)) return 0;
  if (!halide_default_can_use_target_features(count, f)) return 0;
  g_accepted_mask |= 1 << static_cast<int>(v);
  return 1;
}

bool cpu_supports(Variant v) {
  __builtin_cpu_init();
  if (v == Variant::Baseline) return true;
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (v == Variant::Avx2) return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

class ForceVariant : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* v = std::getenv("BATCHCONV_TEST_VARIANT");
    if (!v) return;
    const std::string s(v);
    g_allowed = s == "avx2" ? Variant::Avx2 : s == "baseline" ? Variant::Baseline : Variant::Avx512;
    if (!cpu_supports(g_allowed)) return;
    halide_set_custom_can_use_target_features(forcing_hook);
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
    g_accepted_mask = 0;
    expect_matches_stored_outputs(m);
    expect_matches_interpreter(m);
    ++models;
    // The first call of each library asked the hook; later calls use its
    // cached choice, so a model whose first call was here must show the
    // forced variant (and no better one) as the best accepted.
    if (g_accepted_mask != 0) {
      const Variant ran = g_accepted_mask & 1 ? Variant::Avx512 : g_accepted_mask & 2 ? Variant::Avx2 : Variant::Baseline;
      EXPECT_EQ(static_cast<int>(ran), static_cast<int>(g_allowed)) << "accepted mask " << g_accepted_mask;
    } else {
      // The baseline variant needs no features: the wrapper may not ask.
      EXPECT_EQ(static_cast<int>(g_allowed), static_cast<int>(Variant::Baseline)) << "the hook was never asked";
    }
  }
  EXPECT_GE(models, 4);
}

}  // namespace
}  // namespace batchconv::testing

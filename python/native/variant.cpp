// Test hook: restricts which of the kernels' multi-target variants (AVX-512,
// AVX2+FMA, baseline x86-64) the Halide wrappers may pick, so the Python
// tests can run each variant's forward and backward kernels in their own
// process (the wrappers cache their choice at the first call: restrict
// before any kernel runs). Reports the best variant the wrappers accepted.
#include "variant.h"

#include <HalideRuntime.h>

#include <stdexcept>

#include "variant_of.h"

namespace batchconv_python {
namespace {

int g_allowed = 0;        // 0 avx512 (anything), 1 avx2, 2 baseline
int g_accepted_mask = 0;  // bit v: a feature set of variant v was accepted
int g_hook_calls = 0;

int restricting_hook(int count, const uint64_t* f) {
  ++g_hook_calls;
  const int v = static_cast<int>(batchconv::support::variant_of(count, f));
  if (v < g_allowed) return 0;
  if (!halide_default_can_use_target_features(count, f)) return 0;
  g_accepted_mask |= 1 << v;
  return 1;
}

}  // namespace

void restrict_variant(const std::string& name) {
  if (name == "avx512") {
    g_allowed = 0;
  } else if (name == "avx2") {
    g_allowed = 1;
  } else if (name == "baseline") {
    g_allowed = 2;
  } else {
    throw std::invalid_argument("variant: expected avx512, avx2 or baseline, got '" + name + "'");
  }
  halide_set_custom_can_use_target_features(restricting_hook);
}

// The wrappers ask about the better variants' feature sets (the baseline
// needs none) and run the best one accepted.
std::string dispatched_variant() {
  if (g_hook_calls == 0) return "";
  return g_accepted_mask & 1 ? "avx512" : g_accepted_mask & 2 ? "avx2" : "baseline";
}

}  // namespace batchconv_python

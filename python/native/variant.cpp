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


void restrict_variant(const std::string& name) {
  if (name != "avx512" && name != "avx2" && name != "baseline")
    throw std::invalid_argument("variant: expected avx512, avx2 or baseline, got '" + name + "'");
  batchconv::support::restrict_to(batchconv::support::parse_variant(name.c_str()));
}

// The wrappers ask about the better variants' feature sets (the baseline
// needs none) and run the best one accepted.
std::string dispatched_variant() {
  if (batchconv::support::variant_forcing().hook_calls == 0) return "";
  return batchconv::support::variant_name(batchconv::support::accepted_variant());
}

}  // namespace batchconv_python

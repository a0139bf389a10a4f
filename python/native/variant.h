// Test hook over the kernels' multi-target dispatch (variant.cpp).
#pragma once

#include <string>

namespace batchconv_python {

// Allows only the named variant ("avx512", "avx2", "baseline") and those
// below it; call before any kernel runs. Throws std::invalid_argument.
void restrict_variant(const std::string& name);

// The best variant the wrappers accepted since restrict_variant ("" when no
// wrapper has asked yet).
std::string dispatched_variant();

}  // namespace batchconv_python

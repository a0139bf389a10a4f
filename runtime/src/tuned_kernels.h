// Internal: the registry behind batchconv/tuning.h. A conv call looks its
// shape up once (choose_conv_path) and each kernel call site then asks for
// its function (conv_kernel), which is the tuned one when the tuned kernel
// was built from that call site's generator.
#pragma once

#include <string>

#include "batchconv/tuning.h"
#include "conv_chooser.h"

namespace batchconv::detail {

// Records `p` as this thread's last conv call and returns the tuned kernel
// registered for it, or nullptr.
const TunedConvKernel* find_tuned_kernel(const batchconv_gen::ConvProblem& p);

// Keeps the current call's tuned kernel only if it was built for the family
// the call runs ("rows", "channels" or "lanes").
void settle_tuned_kernel(const std::string& family);

// The function a call site for `generator` runs: the current call's tuned
// kernel when it was built from `generator`, else `fallback` (the default,
// named `fallback_name`). Records the name for last_conv_kernel().
ConvKernelFn conv_kernel(const char* generator, ConvKernelFn fallback, const char* fallback_name);

}  // namespace batchconv::detail

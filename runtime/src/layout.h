// Internal: views resolved to explicit strides by their layout.
#pragma once

#include "batchconv/batchconv.h"

namespace batchconv::detail {

// t with explicit strides: an NHWC view with empty strides gets the
// contiguous channels-last strides (channel axis `channel_dim`); an NHWC view
// with strides must have channel stride 1, else throws Error naming `name`.
// NCHW views are returned as they are. Call after the rank check.
TensorView resolve_layout(const char* op, const char* name, const TensorView& t, int channel_dim);

// Contiguous channels-last strides of `shape`.
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& shape, int channel_dim);

}  // namespace batchconv::detail

// Internal: operands whose last dimension is not unit-stride (transposed or
// step-sliced views) are packed into a reused per-thread scratch buffer, and
// such an output is computed into scratch and scattered back. The kernels
// themselves always see unit stride in the innermost dimension.
#pragma once

#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::detail {

// Which of the three per-thread scratch buffers an operand uses.
enum class Scratch { X, W, Y };

// t itself when its last stride is 1; otherwise a contiguous copy of it (in
// scratch `which`, valid until the next call on this thread). For an output
// (`copy_in` false) the data is not copied in; call scatter() afterwards.
TensorView unit_stride_view(const TensorView& t, Scratch which, bool copy_in = true);

// t's elements in channels-last scratch `which` (axis `channel_dim`
// innermost in memory, the rest in t's order), copied in when `copy_in`;
// valid until the next call on this thread. scatter() copies it back.
TensorView channels_last_scratch(const TensorView& t, int channel_dim, Scratch which, bool copy_in);

// dst[i] = src[i] for every index of `shape`, both strided (element
// strides). A layout change (the two sides' densest axes differ) is copied
// in 32 x 32 tiles of those two axes.
void copy_strided(const float* src, const std::vector<int64_t>& src_strides, float* dst,
                  const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& shape);

// Copies a contiguous `src` into the strided `dst` of the same shape.
void scatter(const TensorView& src, const TensorView& dst);

}  // namespace batchconv::detail

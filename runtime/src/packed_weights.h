// Internal: weights in the order the channels family reads them, the output
// channel innermost: memory ([B,] KH, KW, Cin_g, Cout) for the logical shape
// ([B,] Cout, Cin_g, [KH,] KW). A strided view of the logical shape for any
// groups (channel g * Cout_g + c is contiguous over all of Cout).
#pragma once

#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::detail {

// Strides of the packed order for `shape` with `lead` leading batch dims.
std::vector<int64_t> packed_weight_strides(const std::vector<int64_t>& shape, int lead);

// w itself when its output channel (axis `lead`) already has stride 1;
// otherwise a packed copy in a per-thread scratch buffer, valid until the
// next call on this thread. w is validated (shape, 32-bit size) before.
TensorView weights_for_channels(const TensorView& w, int lead);

// Packed weights passed to `op`: made for `batched` and `groups`, else
// throws Error naming w and the PackedWeights call that fits. Returns the view.
TensorView packed_view(const char* op, const PackedWeights& w, int groups, bool batched);

}  // namespace batchconv::detail

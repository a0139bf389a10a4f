// The one reading of ONNX conv/pool geometry: kernel, strides, dilations,
// pads and auto_pad (and a pool's ceil_mode) per spatial axis, and the output
// size they give, with every product and sum checked for overflow. The
// interpreter, the rewrites and the compiler all read Conv, MaxPool and
// AveragePool nodes through it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::ir {

struct WindowError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Attributes of a conv/pool node with `spatial` spatial axes; defaults filled
// in (strides and dilations 1, pads 0, auto_pad "NOTSET").
struct WindowAttrs {
  std::vector<int64_t> kernel_shape;  // empty when the node has none
  std::vector<int64_t> strides, dilations;
  std::vector<int64_t> pads;          // begins, then ends
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};

// Reads and checks the attributes (lengths match `spatial`, strides and
// dilations >= 1, pads >= 0, auto_pad known). `dilations`: whether the op
// has the attribute (AveragePool before opset 19 does not). Throws WindowError.
WindowAttrs window_attrs(const Node& n, int64_t spatial, bool dilations = true);

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};

// The window over input spatial sizes `in` with kernel sizes `kernel` (from
// the weight; empty: from kernel_shape, which must then be given; given both,
// they must agree): auto_pad resolved, output sizes computed. Throws
// WindowError when the kernel does not fit or a size overflows.
Window conv_window(const WindowAttrs& a, const std::vector<int64_t>& in, std::vector<int64_t> kernel = {});

}  // namespace batchconv::ir

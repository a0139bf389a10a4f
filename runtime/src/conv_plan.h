// Internal: validation and Halide views shared by the three conv entry
// points. A conv call is planned (every input checked, sizes derived) before
// anything is run.
#pragma once

#include <cstdint>
#include <vector>

#include "batchconv/batchconv.h"
#include "halide_view.h"

namespace batchconv::detail {

struct ConvPlan {
  int spatial = 2;          // 1 or 2 spatial dims
  int64_t batch = 1;        // B (1 when neither x nor w has a leading B)
  int64_t n = 0, cin = 0;   // x
  int64_t cout = 0;         // w
  int64_t groups = 1, cin_g = 0, cout_g = 0;
  std::vector<int64_t> in, kernel, out;  // spatial sizes, (H, W) or (W)
  // Halide-order geometry: x is the W axis, y the H axis.
  int stride_x = 1, stride_y = 1, dilation_x = 1, dilation_y = 1, pad_x = 0, pad_y = 0;
  bool relu = false;
};

// Checks x (x_lead leading batch dims, then N, Cin, [H,] W) and w (w_lead
// leading batch dims, then Cout, Cin/groups, [KH,] KW) against each other
// and the descriptor.
ConvPlan plan_conv(const char* op, const TensorView& x, int x_lead, const TensorView& w,
                   int w_lead, const ConvDesc& d);

// Checks bias (shape `expected`, any strides) when present.
void check_bias(const char* op, const TensorView* bias, const std::vector<int64_t>& expected,
                const char* layout);

// Halide dims (w, h, c_g, g, n, [b]) of an activation tensor laid out as
// ([B,] N, G*C_g, [H,] W); `lead` is 0 or 1.
std::vector<Dim> activation_dims(const TensorView& t, int lead, int spatial, int64_t c_g,
                                 int64_t groups);

// Halide dims (kw, kh, ci, co, g, [b]) of weights ([B,] G*Cout_g, Cin_g, [KH,] KW).
std::vector<Dim> weight_dims(const TensorView& w, int lead, int spatial, int64_t cout_g,
                             int64_t groups);

}  // namespace batchconv::detail

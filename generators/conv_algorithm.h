// The convolution algorithm, written once and shared by every conv generator
// (grouped_conv, batched_weight_conv, broadcast_input_conv) and by the model
// compiler.
//
// All tensors are seen in a "grouped" view with the group as its own
// dimension, innermost first:
//   input  (x, y, ci, g, n, b)   ci < Cin_g, the channel is g * Cin_g + ci
//   weight (kx, ky, ci, co, g, b) co < Cout_g, the channel is g * Cout_g + co
//   bias   (co, g, b)
//   output (x, y, co, g, n, b)
// An NCHW tensor reshapes into this view for free (the channel dimension of
// extent G * C_g splits into (c_g, g) with strides (s, C_g * s)), so the
// kernels never divide by the group size in their inner loops, and a group
// is just one more loop. A dense conv is G = 1, a depthwise conv Cin_g = 1.
// Callers with a 4-D Func f(x, y, c, n) wrap it as
//   input(x, y, ci, g, n, b) = f(x, y, g * cin_g + ci, n).
#pragma once

#include "Halide.h"

namespace batchconv_gen {

// Runtime geometry of one convolution (all scalar Exprs, so one compiled
// pipeline serves every shape). pad_* is the padding before the first
// element; the padding after the last follows from the output size.
struct ConvGeometry {
  Halide::Expr stride_x, stride_y;
  Halide::Expr dilation_x, dilation_y;
  Halide::Expr pad_x, pad_y;
  Halide::Expr in_w, in_h;                 // input extent, outside of which x reads 0
  Halide::Expr kernel_w, kernel_h, cin_g;  // the reduction extents
  Halide::Expr cout_g;                     // output channels per group
};

// The pure variables shared by every stage, named as in the schedules.
struct ConvVars {
  Halide::Var x{"x"}, y{"y"}, c{"c"}, g{"g"}, n{"n"}, b{"b"};
};

// The Funcs making up one convolution.
struct ConvFuncs {
  ConvVars v;
  Halide::Func padded{"padded"};  // zero-padded input (x, y, ci, g, n, b)
  Halide::Func conv{"conv"};      // bias + sum over (kx, ky, ci): (x, y, co, g, n, b)
  Halide::Func output{"output"};  // conv, optionally through ReLU
  Halide::Func weight;            // the weight Func the conv reads (the GPU schedule stages it)
  Halide::RDom r;                 // (kx, ky, ci)
  ConvGeometry geo;               // the geometry it was built with
  // With define_conv(..., input_block = B > 0) the conv reads the padded
  // input through blocked(ci % B, x, y, ci / B, g, n, b): channels in blocks
  // of B innermost (oneDNN's nChw16c for B = 16), a wrapper of `padded` with
  // the same values; its channel index is clamped (the last block's lanes
  // past Cin_g are never read by the conv).
  Halide::Func blocked{"padded_blocked"};
  int input_block = 0;
};

namespace detail {

// The zero-padded input, the reduction domain (kx, ky, ci) and the input
// coordinates (*ix, *iy) of output (x, y) at tap (kx, ky); and the fused
// ReLU on top of `acc`.
inline void define_window(ConvFuncs& f, Halide::Func input, const ConvGeometry& geo,
                          Halide::Expr* ix, Halide::Expr* iy) {
  using namespace Halide;
  f.geo = geo;
  const Var &x = f.v.x, &y = f.v.y, &c = f.v.c, &g = f.v.g, &n = f.v.n, &b = f.v.b;
  // Zero padding. constant_exterior marks the in-bounds case likely, so
  // loop partitioning gives the interior of a padded tile plain dense loads.
  Func bounded = BoundaryConditions::constant_exterior(input, 0.0f, {{0, geo.in_w}, {0, geo.in_h}});
  f.padded(x, y, c, g, n, b) = bounded(x, y, c, g, n, b);
  f.r = RDom(0, geo.kernel_w, 0, geo.kernel_h, 0, geo.cin_g, "r");
  *ix = x * geo.stride_x + f.r.x * geo.dilation_x - geo.pad_x;
  *iy = y * geo.stride_y + f.r.y * geo.dilation_y - geo.pad_y;
}

inline void define_output(ConvFuncs& f, const Halide::Expr& acc, const Halide::Expr& relu) {
  const ConvVars& v = f.v;
  f.output(v.x, v.y, v.c, v.g, v.n, v.b) = Halide::select(relu, Halide::max(acc, 0.0f), acc);
}

}  // namespace detail

// Builds y = act(bias + sum_{kx,ky,ci} x_pad(x*sx + kx*dx - px, y*sy + ky*dy - py, ci) * w(kx, ky, ci, co))
// for every (co, g, n, b). `input`, `weight` and `bias` are 6-, 6- and 3-D
// Funcs in the grouped view above; `relu` is a boolean Expr.
// `clamp_channels` clamps the channel index of weight and bias reads, for
// schedules that round channel tiles up past Cout_g (the rows family); the
// channels family never does (ShiftInwards) and needs the plain index for
// dense vector loads of packed weights. Either way the values are the same.
inline ConvFuncs define_conv(Halide::Func input, Halide::Func weight, Halide::Func bias,
                             const ConvGeometry& geo, Halide::Expr relu, bool clamp_channels = true,
                             int input_block = 0) {
  using namespace Halide;
  ConvFuncs f;
  Expr ix, iy;
  detail::define_window(f, input, geo, &ix, &iy);
  f.input_block = input_block;
  const Var &x = f.v.x, &y = f.v.y, &c = f.v.c, &g = f.v.g, &n = f.v.n, &b = f.v.b;
  const RDom& r = f.r;
  // The channel index of weight and bias is clamped so that schedules may
  // round channel tiles up past Cout_g without reading out of bounds (the
  // extra channels are computed into scratch space and never stored).
  Expr cc = clamp_channels ? clamp(c, 0, geo.cout_g - 1) : Expr(c);
  f.weight = weight;
  f.conv(x, y, c, g, n, b) = bias(cc, g, b);
  if (input_block > 0) {
    const int bs = input_block;
    Var cii("cii"), cio("cio");
    f.blocked(cii, x, y, cio, g, n, b) = f.padded(x, y, min(likely(cio * bs + cii), geo.cin_g - 1), g, n, b);
    f.conv(x, y, c, g, n, b) += f.blocked(r.z % bs, ix, iy, r.z / bs, g, n, b) * weight(r.x, r.y, r.z, cc, g, b);
  } else {
    f.conv(x, y, c, g, n, b) += f.padded(ix, iy, r.z, g, n, b) * weight(r.x, r.y, r.z, cc, g, b);
  }
  detail::define_output(f, f.conv(x, y, c, g, n, b), relu);
  return f;
}

}  // namespace batchconv_gen

// Helpers the conv generators share: the geometry from their scalar inputs,
// and the choice of schedule (autoscheduler estimates, CUDA, CPU, in that
// order).
#pragma once

#include <vector>

#include "Halide.h"
#include "conv_algorithm.h"
#include "conv_schedule_cpu.h"
#include "conv_schedule_cpu_cv.h"
#include "conv_schedule_cuda.h"

namespace batchconv_gen {

// Geometry from the generator's scalar inputs and the input/weight buffers
// (x: (w, h, ci, ...), w: (kw, kh, ci, ...)).
template <typename BufX, typename BufW, typename Int>
ConvGeometry conv_geometry(const BufX& x, const BufW& w, const Int& stride_x, const Int& stride_y,
                           const Int& dilation_x, const Int& dilation_y, const Int& pad_x,
                           const Int& pad_y) {
  ConvGeometry g;
  g.stride_x = stride_x;
  g.stride_y = stride_y;
  g.dilation_x = dilation_x;
  g.dilation_y = dilation_y;
  g.pad_x = pad_x;
  g.pad_y = pad_y;
  g.in_w = x.dim(0).extent();
  g.in_h = x.dim(1).extent();
  g.kernel_w = w.dim(0).extent();
  g.kernel_h = w.dim(1).extent();
  g.cin_g = w.dim(2).extent();
  g.cout_g = w.dim(3).extent();
  return g;
}

}  // namespace batchconv_gen

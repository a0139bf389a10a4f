// Internal: the CUDA backend over another set of kernels of the same
// signatures (the gpu schedule family at other points of the schedule
// space), for tools that time those points on a GPU
// (tests/gpu/gpu_points_time.cpp). They link device_common.cpp and
// device_cuda.cpp statically, with the kernels built without a runtime
// against the one the library's own kernels bring.
#pragma once

#include <memory>

#include "HalideRuntime.h"
#include "device_common.h"

namespace batchconv::detail::device {

using CudaConvKernel = int (*)(const void*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, int, int, int, int,
                               int, int, bool, halide_buffer_t*);
using CudaLinearKernel = int (*)(const void*, halide_buffer_t*, halide_buffer_t*, halide_buffer_t*, bool,
                                 halide_buffer_t*);

struct CudaKernels {
  CudaConvKernel grouped, batched_weight, broadcast_input;
  CudaLinearKernel linear;
};

std::unique_ptr<Backend> make_cuda_backend(const CudaKernels& kernels);

}  // namespace batchconv::detail::device

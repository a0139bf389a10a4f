// batchconv on a GPU: the ops of batchconv.h through the gpu schedule family,
// in two shared libraries of their own so that the CPU library never needs a
// GPU driver:
//   batchconv::cuda    libbatchconv_cuda.so   (CMake target batchconv::cuda)
//   batchconv::opencl  libbatchconv_opencl.so (CMake target batchconv::opencl)
// Each loads its driver (libcuda.so.1, libOpenCL.so.1) on first use, so an
// app that links one but runs where no driver or device is present gets
// batchconv::Error from the first call ("cuda: no CUDA driver: ..."), never
// a crash. The device is chosen per call by the namespace called.
//
// Two forms of every op:
//   - on device memory (DeviceTensor): x, w, bias and y already on the
//     device; the kernels run asynchronously on the caller's stream (CUDA)
//     or Halide's queue (OpenCL), nothing is copied, nothing is
//     synchronised. Never falls back to the CPU.
//   - on host memory (TensorView, the same views as batchconv.h): copied to
//     the device, run, y copied back before returning. With
//     DeviceContext::cpu_fallback = true, and only then, a call where the
//     device or its driver is missing runs the CPU kernels instead.
// Shapes, groups and geometry are validated exactly as the CPU ops do (the
// same messages), before anything runs; device tensors must have unit
// innermost stride.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv {

// A float32 tensor in device memory. `handle` is a CUdeviceptr (CUDA) or a
// cl_mem (OpenCL) holding the whole tensor; shape in PyTorch order, strides
// in elements (empty: contiguous), as TensorView.
struct DeviceTensor {
  uint64_t handle = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  DeviceTensor() = default;
  DeviceTensor(uint64_t h, std::vector<int64_t> s) : handle(h), shape(std::move(s)) {}
  DeviceTensor(uint64_t h, std::vector<int64_t> s, std::vector<int64_t> st)
      : handle(h), shape(std::move(s)), strides(std::move(st)) {}
};

// Where a call runs and what it may share.
struct DeviceContext {
  // CUDA: the caller's CUcontext and CUstream (e.g. PyTorch's current
  // stream), so kernels queue behind the caller's work without a sync.
  // Null context: the primary context of device 0; null stream: the
  // context's default stream.
  void* cuda_context = nullptr;
  void* cuda_stream = nullptr;
  // Host-memory calls only: run on the CPU when the device or its driver is
  // missing. Off by default: a missing device is an Error.
  bool cpu_fallback = false;
};

// Both namespaces declare the same functions.
#define BATCHCONV_DEVICE_API(ns)                                                                      \
  namespace ns {                                                                                      \
  /* "" when the device can run kernels here, else why not ("no CUDA driver: ..."). */               \
  std::string unavailable_reason();                                                                   \
  inline bool available() { return unavailable_reason().empty(); }                                   \
  /* The device the kernels run on ("NVIDIA H200", "pthread-..."): for reports. */                    \
  std::string device_name(const DeviceContext& ctx = {});                                             \
  /* Waits for the work queued by device-memory calls. */                                             \
  void synchronize(const DeviceContext& ctx = {});                                                    \
  void grouped_conv(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,           \
                    const DeviceTensor& y, const ConvDesc& d, const DeviceContext& ctx = {});         \
  void batched_weight_conv(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,    \
                           const DeviceTensor& y, const ConvDesc& d, const DeviceContext& ctx = {});  \
  void broadcast_input_conv(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,   \
                            const DeviceTensor& y, const ConvDesc& d, BroadcastLayout layout,         \
                            const DeviceContext& ctx = {});                                           \
  void batched_linear(const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,         \
                      const DeviceTensor& y, Activation act = Activation::None,                       \
                      const DeviceContext& ctx = {});                                                 \
  void grouped_conv(const TensorView& x, const TensorView& w, const TensorView* bias,                 \
                    const TensorView& y, const ConvDesc& d, const DeviceContext& ctx);                \
  void batched_weight_conv(const TensorView& x, const TensorView& w, const TensorView* bias,          \
                           const TensorView& y, const ConvDesc& d, const DeviceContext& ctx);         \
  void broadcast_input_conv(const TensorView& x, const TensorView& w, const TensorView* bias,         \
                            const TensorView& y, const ConvDesc& d, BroadcastLayout layout,           \
                            const DeviceContext& ctx);                                                \
  void batched_linear(const TensorView& x, const TensorView& w, const TensorView* bias,               \
                      const TensorView& y, Activation act, const DeviceContext& ctx);                 \
  }

BATCHCONV_DEVICE_API(cuda)
BATCHCONV_DEVICE_API(opencl)
#undef BATCHCONV_DEVICE_API

namespace opencl {
// The cl_context and cl_command_queue the kernels run on (Halide's, created
// on first use: platform HL_OCL_PLATFORM_NAME, device type
// HL_OCL_DEVICE_TYPE); device tensors must be cl_mem buffers of this context.
void native_handles(void** cl_context, void** cl_command_queue);
}  // namespace opencl

}  // namespace batchconv

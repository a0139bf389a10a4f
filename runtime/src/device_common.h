// Internal: what the CUDA and the OpenCL device libraries share. Each
// library is built from device_common.cpp plus its backend file
// (device_cuda.cpp, device_opencl.cpp), which supplies a Backend: its
// driver checks, how a device handle becomes a halide_buffer_t and its four
// AOT kernels. Shapes are validated by the CPU library's own functions (the
// same messages), then mapped to the kernels' grouped view
// (generators/conv_algorithm.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "batchconv/device.h"

namespace batchconv::detail::device {

// The user context every kernel call gets (the backend's Halide hooks read it).
struct CallContext {
  const DeviceContext* ctx = nullptr;
};

struct ConvArgs {
  int stride_x, stride_y, dilation_x, dilation_y, pad_x, pad_y;
  bool relu;
};

enum class ConvKernel { Grouped, BatchedWeight, BroadcastInput };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;  // "cuda", "opencl"
  // "" when kernels can run, else why not.
  virtual std::string unavailable_reason() = 0;
  // Throws Error naming `what` unless `handle` is device memory of the
  // device `ctx` runs on, holding at least `bytes`.
  virtual void check_handle(const char* op, const char* what, uint64_t handle, int64_t bytes,
                            const DeviceContext& ctx) = 0;
  // Points `buf` (dims set, host null) at device memory / back.
  virtual int wrap(void* uc, halide_buffer_t* buf, uint64_t handle) = 0;
  virtual int detach(void* uc, halide_buffer_t* buf) = 0;
  virtual int copy_to_host(void* uc, halide_buffer_t* buf) = 0;
  virtual int device_free(void* uc, halide_buffer_t* buf) = 0;
  virtual void synchronize(const DeviceContext& ctx) = 0;
  virtual std::string device_name(const DeviceContext& ctx) = 0;
  virtual int conv(ConvKernel k, void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias,
                   const ConvArgs& a, halide_buffer_t* y) = 0;
  virtual int linear(void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias, bool relu,
                     halide_buffer_t* y) = 0;
};

// The ops of device.h over a backend.
void conv(Backend& be, ConvKernel k, const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
          const DeviceTensor& y, const ConvDesc& d, BroadcastLayout layout, const DeviceContext& ctx);
void conv(Backend& be, ConvKernel k, const TensorView& x, const TensorView& w, const TensorView* bias,
          const TensorView& y, const ConvDesc& d, BroadcastLayout layout, const DeviceContext& ctx);
void linear(Backend& be, const DeviceTensor& x, const DeviceTensor& w, const DeviceTensor* bias,
            const DeviceTensor& y, Activation act, const DeviceContext& ctx);
void linear(Backend& be, const TensorView& x, const TensorView& w, const TensorView* bias, const TensorView& y,
            Activation act, const DeviceContext& ctx);

// The Halide error text of the last failed call on this thread (the
// library's Halide runtime reports into it).
void install_error_capture();
std::string last_halide_error();

}  // namespace batchconv::detail::device

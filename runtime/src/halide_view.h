// Internal: halide_buffer_t views over caller memory, and calling an AOT
// kernel with its error text turned into batchconv::Error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "batchconv/batchconv.h"

namespace batchconv::detail {

constexpr int kMaxHalideDims = 6;

// One Halide dimension: extent and stride in elements (innermost first).
struct Dim {
  int64_t extent;
  int64_t stride;
};

// A float32 halide_buffer_t over caller memory with up to 6 dimensions.
// Checks that every extent, stride and the furthest element offset fit
// Halide's 32-bit indexing (throws Error naming `what` otherwise).
class HalideView {
 public:
  HalideView(const char* op, const char* what, float* data, const std::vector<Dim>& dims);
  HalideView(const HalideView& other);
  HalideView& operator=(const HalideView& other);
  halide_buffer_t* get() { return &buf_; }

 private:
  halide_buffer_t buf_{};
  halide_dimension_t dims_[kMaxHalideDims]{};
};

// A bias view: the caller's bias, or a zero broadcast with stride 0 when
// bias is null. `dims` are the Halide dims of the real bias.
HalideView bias_view(const char* op, const TensorView* bias, const std::vector<Dim>& dims);

// Runs an AOT kernel call (a lambda returning the Halide error code) and
// throws Error with Halide's message when it fails.
template <typename F>
void call_kernel(const char* op, F&& f);

// Implementation details of call_kernel.
void install_error_handler();
[[noreturn]] void throw_kernel_error(const char* op, int code);

template <typename F>
void call_kernel(const char* op, F&& f) {
  install_error_handler();
  int code = f();
  if (code != 0) throw_kernel_error(op, code);
}

}  // namespace batchconv::detail

// Tuned conv kernels: kernels that batchconv-tune found fastest for one
// exact call shape on one machine, dispatched instead of the defaults for
// exactly that shape. A kernel library built with a tuning database
// (BATCHCONV_TUNING_DB, see tools/batchconv-tune/README.md) registers its
// kernels when it is loaded; the tuner registers each candidate it times.
// Without registered kernels nothing changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct halide_buffer_t;

namespace batchconv {

// The C signature every conv generator's AOT function has (grouped_conv,
// batched_weight_conv, broadcast_input_conv; any schedule family).
using ConvKernelFn = int (*)(halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias,
                             int32_t stride_x, int32_t stride_y, int32_t dilation_x,
                             int32_t dilation_y, int32_t pad_x, int32_t pad_y, bool relu,
                             halide_buffer_t* y);

struct TunedConvKernel {
  std::string op;  // the API call: "grouped_conv", "batched_weight_conv", "broadcast_input_conv"
  std::string shape_key;  // the call's shape, as last_conv_shape_key() gives it
  std::string generator;  // the generator `fn` was built from (the kernel the call's path runs)
  // "rows", "channels" or "lanes": the path (and weight packing) `fn` needs.
  // A lanes kernel runs only where the lanes family's AOT kernels would (a
  // grouped or batched-weight conv whose Cout_g divides a vector and whose
  // groups fill one); elsewhere the call takes the rows family's default.
  std::string family;
  ConvKernelFn fn = nullptr;
  std::string name;  // reported by last_conv_kernel()
  // The Halide target `fn` was built for; empty: any. A kernel for another
  // target than the one the runtime runs here (selected_target()) is not
  // registered.
  std::string target;
};

// Registers `k` (replacing a kernel registered for the same op and shape);
// returns false, registering nothing, when k.target is set and is not
// batchconv::selected_target(). Throws batchconv::Error on an unknown op,
// generator or family, or a null fn.
bool register_tuned_conv_kernel(const TunedConvKernel& k);
void clear_tuned_conv_kernels();
size_t tuned_conv_kernel_count();

// The shape key of the last conv call on this thread (the tuning database's
// "shape"), and the name of the kernel it ran: the default AOT kernel's
// ("batchconv_grouped_conv_channels") or a tuned kernel's.
std::string last_conv_shape_key();
std::string last_conv_kernel();

}  // namespace batchconv

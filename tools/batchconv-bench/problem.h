// One benchmark problem: which op, its shapes and geometry, and the buffers
// (allocated once, 64-byte aligned, first-touched before any timing).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"

namespace bcbench {

enum class Op { GroupedConv, BatchedWeightConv, BroadcastInputConv, BatchedLinear };

const char* op_name(Op op);  // "grouped_conv", ...
// Accepts the full names and the short ones: gconv, bwconv, biconv, blinear.
bool parse_op(const std::string& s, Op* op);

struct ProblemSpec {
  Op op = Op::GroupedConv;
  std::vector<int64_t> x_shape, w_shape;
  bool bias = false;
  batchconv::ConvDesc desc;  // conv ops; desc.activation also applies to batched_linear
  batchconv::BroadcastLayout layout = batchconv::BroadcastLayout::Concatenated;
  std::string label;  // free text for reports
  std::string device;  // --device: "" (CPU only), "opencl" or "cuda": also run the op there
};

// A float buffer, 64-byte aligned, owned. Allocated through malloc (so it is
// visible to the allocation counter) and touched once on creation.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  float* p_ = nullptr;
  size_t n_ = 0;
};

// A convolution in 2-D NCHW terms (1-D: h = kh = oh = 1 and only the w axis
// carries stride/padding/dilation). Dilation is PyTorch's (1 = dense).
struct ConvGeom {
  int64_t n = 0, cin = 0, h = 1, w = 0, cout = 0, kh = 1, kw = 0, oh = 1, ow = 0;
  int64_t groups = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  bool relu = false;
  bool one_d = false;
  bool pointwise() const;  // 1x1 kernel, stride 1, no padding
};

struct Problem {
  ProblemSpec spec;
  std::vector<int64_t> y_shape;
  Buffer x, w, b, y;
  batchconv::TensorView xv, wv, bv, yv;
  // The per-slice conv (conv ops): for batched-weight x[b] with w[b], for
  // broadcast-input x with w[b], for grouped conv the whole conv.
  ConvGeom slice;
  int64_t batch = 1;  // B for batched-weight / broadcast-input / batched-linear
  bool shared_x = false;  // batched_linear with x (N, K)
  double flops = 0;       // 2 * multiply-adds (bias and ReLU not counted)
  double io_bytes = 0;    // bytes of x + w + bias + y: the least any method must move

  const batchconv::TensorView* bias_view() const { return spec.bias ? &bv : nullptr; }
};

// Validates the spec (through the runtime's own shape checks), allocates and
// fills x, w, bias with uniform [-1, 1) values from `seed`, and y with NaN.
// Throws batchconv::Error or std::invalid_argument with a clear message.
std::unique_ptr<Problem> make_problem(const ProblemSpec& spec, uint64_t seed);

// Fills y with NaN so a method that does not write it is caught by the check.
void poison_output(Problem& p);

// Deterministic uniform [-1, 1) fill.
void fill_random(float* p, size_t n, uint64_t seed);

std::string shape_str(const std::vector<int64_t>& s);  // "2x64x3x7x7"
int64_t numel(const std::vector<int64_t>& s);

}  // namespace bcbench

// batchconv runtime API: the entry points an application calls.
//
// All tensors are float32 views whose shape is in PyTorch/ONNX order (N, C,
// H, W); their memory is NCHW, NHWC (PyTorch's channels_last) or any other
// strides (see Layout). A view owns nothing; the caller allocates x, w, bias and y (and reuses them: freshly
// allocated memory is slow to touch on the machines we target).
//
// Every entry point validates shapes first and throws batchconv::Error, whose
// message names the argument and the expected shape, e.g.
//   "batched_weight_conv: w has shape (4, 64, 3, 7, 7) but x (B=2, ...) needs
//    B=2 filter banks: expected (2, 64, 3, KH, KW)".
// Nothing is written to y unless validation succeeds.
//
// 1-D convolutions use rank-3 (grouped) / rank-4 (batched) tensors; the
// descriptor's spatial fields then use index 0 only (the width axis).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace batchconv {

class Error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// How a view's memory is laid out. The shape is always in PyTorch order
// ((B,) N, C, (H,) W); the layout says where the channel axis lives:
//   NCHW  the strides say it all: empty strides are contiguous NCHW, any
//         explicit strides are accepted (transposed or sliced views); the
//         default, and what every op has always taken.
//   NHWC  channels last, PyTorch's torch.channels_last: the channel stride
//         is 1. Empty strides are the contiguous channels-last strides; given
//         strides must have channel stride 1, or the op throws Error naming
//         the tensor. (The blocked layout of oneDNN, nChw16c, is not a view
//         layout: convert with reorder() through NHWC.)
enum class Layout { NCHW, NHWC };

// A non-owning view of a float tensor. Strides are in elements, in shape
// order (outermost first). Empty strides mean contiguous in `layout`.
struct TensorView {
  float* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  Layout layout = Layout::NCHW;

  TensorView() = default;
  TensorView(float* d, std::vector<int64_t> s) : data(d), shape(std::move(s)) {}
  TensorView(float* d, std::vector<int64_t> s, std::vector<int64_t> st)
      : data(d), shape(std::move(s)), strides(std::move(st)) {}

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const;
  // The stride of dimension i (computing the contiguous NCHW one when strides
  // is empty; an NHWC view gets its strides when an op or channels_last()
  // resolves it).
  int64_t stride(int i) const;
  std::string shape_string() const;  // "(2, 64, 3, 7, 7)"
};

// A contiguous channels-last view: memory in the order of `shape` with the
// axis `channel_dim` moved innermost (for (N, C, H, W): N, H, W, C).
TensorView channels_last(float* data, std::vector<int64_t> shape, int channel_dim = 1);

// Copies src into dst: same shape, any strides or layouts (explicit strides
// are taken as they are; an NHWC view with empty strides takes channel_dim
// 1). Throws Error on a shape mismatch or an overlap.
void reorder(const TensorView& src, const TensorView& dst);

enum class Activation { None, ReLU };

// Convolution geometry. Spatial arrays are ordered (H, W) for 2-D; for 1-D
// only index 0 (W) is used. Padding is per side: begin then end.
struct ConvDesc {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> dilation{1, 1};
  std::array<int, 2> pad_begin{0, 0};
  std::array<int, 2> pad_end{0, 0};
  int groups = 1;
  Activation activation = Activation::None;

  // Convenience: same padding on both sides of every spatial dim.
  static ConvDesc with_padding(int pad) {
    ConvDesc d;
    d.pad_begin = {pad, pad};
    d.pad_end = {pad, pad};
    return d;
  }
};

// Output spatial size of one axis, or throws Error (names `what`) when the
// kernel does not fit in the padded input.
int64_t conv_output_size(int64_t in, int64_t kernel, int stride, int dilation,
                         int pad_begin, int pad_end, const char* what = "conv");

// Expected output shapes, for callers that allocate y.
std::vector<int64_t> grouped_conv_output_shape(const TensorView& x, const TensorView& w,
                                               const ConvDesc& d);
std::vector<int64_t> batched_weight_conv_output_shape(const TensorView& x, const TensorView& w,
                                                      const ConvDesc& d);

// Layout of broadcast_input_conv's output.
enum class BroadcastLayout {
  Concatenated,  // y (N, B*Cout, H', W'): what repeat + grouped conv produces
  Batched,       // y (B, N, Cout, H', W')
};
std::vector<int64_t> broadcast_input_conv_output_shape(const TensorView& x, const TensorView& w,
                                                       const ConvDesc& d, BroadcastLayout layout);

// grouped conv: x (N, Cin, [H,] W), w (Cout, Cin/groups, [KH,] KW),
// bias (Cout) or nullptr -> y (N, Cout, [H',] W'). Same numbers as F.conv1d/2d.
// groups = 1 is a dense conv, groups = Cin a depthwise conv (Cout = k*Cin).
void grouped_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                  const TensorView& y, const ConvDesc& d);

// batched-weight conv: x (B, N, Cin, [H,] W), w (B, Cout, Cin/groups, [KH,] KW),
// bias (B, Cout) or nullptr -> y (B, N, Cout, [H',] W'). Slice b of x meets
// only slice b of w.
void batched_weight_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                         const TensorView& y, const ConvDesc& d);

// broadcast-input conv: one x (N, Cin, [H,] W) shared by B filter banks
// w (B, Cout, Cin/groups, [KH,] KW), bias (B, Cout) or nullptr ->
// y (N, B*Cout, [H',] W') [Concatenated] or (B, N, Cout, [H',] W') [Batched].
// The repeat is never materialised.
void broadcast_input_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                          const TensorView& y, const ConvDesc& d, BroadcastLayout layout);

// batched linear: x (B, N, K) or shared (N, K), w (B, K, M), bias (B, M) or
// nullptr -> y (B, N, M).
void batched_linear(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const TensorView& y, Activation act = Activation::None);

// Weights packed once into what the channels-family register tile reads
// (the output channel innermost), for calls that reuse the same weights:
// pass packed.view() wherever w goes (or the overloads below, which also
// check the groups). Without it, each call that runs the channels family
// packs w into a per-thread scratch buffer first: O(weights) per call, which
// is what a MAML inner loop whose weights change every step pays anyway
// (there, call update() after each step, or just pass the new w).
class PackedWeights {
 public:
  PackedWeights() = default;
  // w: (Cout, Cin/groups, [KH,] KW), or with batched = true (B, Cout,
  // Cin/groups, [KH,] KW), any strides. Throws Error on a bad shape.
  PackedWeights(const TensorView& w, int groups, bool batched);
  PackedWeights(const PackedWeights& other);
  PackedWeights(PackedWeights&& other) noexcept;
  PackedWeights& operator=(const PackedWeights& other);
  PackedWeights& operator=(PackedWeights&& other) noexcept;
  // Repacks from new weights of the same shape (throws Error otherwise).
  void update(const TensorView& w);
  // Drops the packed copy; using it afterwards throws Error until update().
  void invalidate();
  bool valid() const { return valid_; }
  int groups() const { return groups_; }
  bool batched() const { return batched_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  // The weights as a view (logical shape, packed strides); throws when invalid.
  TensorView view() const;

 private:
  std::vector<float> data_;  // data_ptr_ is its first 64-byte aligned float
  float* data_ptr_ = nullptr;
  std::vector<int64_t> shape_, strides_;
  int groups_ = 1;
  bool batched_ = false;
  bool valid_ = false;
};

void grouped_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                  const TensorView& y, const ConvDesc& d);
void batched_weight_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                         const TensorView& y, const ConvDesc& d);
void broadcast_input_conv(const TensorView& x, const PackedWeights& w, const TensorView* bias,
                          const TensorView& y, const ConvDesc& d, BroadcastLayout layout);

// Which schedule family the conv ops run. Auto (the default) asks the
// chooser for each call (generators/conv_chooser.h); Rows, Channels and
// Lanes force one, for comparisons and tests. Lanes runs only grouped and
// batched-weight convs with fewer output channels per group than a vector
// and at least a vector's worth across groups; forced on any other call,
// the rows family runs it. Process-wide.
enum class ScheduleFamily { Auto, Rows, Channels, Lanes };
void set_schedule_family(ScheduleFamily f);
ScheduleFamily schedule_family();
// The family the last conv call on this thread ran ("rows", "channels" or "lanes").
std::string last_conv_family();

// Which kernel variant runs batched_linear calls: Auto (by shape: the
// chooser in generators/linear_chooser.h), or one forced, as tests and
// benchmarks do: InPlace (x and w read in place), WeightPanels (each task
// copies w's column tiles into panels), AllPanels (w's and x's). Process-wide.
enum class LinearKernel { Auto, InPlace, WeightPanels, AllPanels };
void set_linear_kernel(LinearKernel k);
// The variant the last batched_linear call on this thread ran ("in_place",
// "weight_panels" or "all_panels").
std::string last_linear_kernel();

// Threads used by all kernels (0 = one per core, the default).
void set_num_threads(int n);
int num_threads();

// The instruction set the multi-target kernels picked on this machine
// ("x86-64-linux-avx512..." etc.), for reports.
std::string selected_target();

}  // namespace batchconv

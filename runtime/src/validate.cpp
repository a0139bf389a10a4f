#include "validate.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace batchconv::detail {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ")";
  return os.str();
}

void fail(const char* op, const std::string& msg) { throw Error(std::string(op) + ": " + msg); }

void check_tensor(const char* op, const char* name, const TensorView& t, int min_rank,
                  int max_rank, const char* layout) {
  if (t.rank() < min_rank || t.rank() > max_rank) {
    std::ostringstream os;
    os << name << " has rank " << t.rank() << " " << shape_string(t.shape) << " but must be "
       << layout;
    fail(op, os.str());
  }
  if (!t.strides.empty() && t.strides.size() != t.shape.size()) {
    std::ostringstream os;
    os << name << " has " << t.strides.size() << " strides for its " << t.rank()
       << " dimensions " << shape_string(t.shape);
    fail(op, os.str());
  }
  for (int64_t s : t.shape) {
    if (s <= 0) {
      fail(op, std::string(name) + " has shape " + shape_string(t.shape) +
                   " with a zero or negative size; every size must be >= 1 (" + layout + ")");
    }
  }
  if (!t.data) fail(op, std::string(name) + " " + shape_string(t.shape) + " has a null data pointer");
  // The kernels index in 32 bits. Checked here, before any scratch copy of a
  // strided view is made (the copy holds numel elements).
  const int64_t limit = std::numeric_limits<int32_t>::max();
  int64_t count = 1;
  for (int64_t s : t.shape) {
    if (count > limit / s) {
      fail(op, std::string(name) + " has shape " + shape_string(t.shape) + ": more than " +
                   std::to_string(limit) + " elements, beyond the kernels' 32-bit indexing; split the call");
    }
    count *= s;
  }
  if (t.strides.empty()) return;
  int64_t span = 0;
  for (int i = 0; i < t.rank(); ++i) {
    const int64_t st = t.strides[i];
    if (st > limit || st < -limit || span > limit) span = limit + 1;
    else span += std::llabs(st) * (t.shape[i] - 1);
  }
  // A view with unit inner stride goes to the kernels as it is; others are packed first.
  if (t.strides.back() == 1 && span > limit) {
    fail(op, std::string(name) + " " + shape_string(t.shape) + " spans more than " + std::to_string(limit) +
                 " elements of memory, beyond the kernels' 32-bit indexing; split the call");
  }
}

void check_desc(const char* op, const ConvDesc& d, int spatial_dims) {
  const char* axis[2] = {spatial_dims == 2 ? "H" : "W", "W"};
  for (int i = 0; i < spatial_dims; ++i) {
    std::ostringstream os;
    if (d.stride[i] < 1) os << "stride[" << i << "] (" << axis[i] << ") = " << d.stride[i] << " must be >= 1";
    else if (d.dilation[i] < 1) os << "dilation[" << i << "] (" << axis[i] << ") = " << d.dilation[i] << " must be >= 1";
    else if (d.pad_begin[i] < 0 || d.pad_end[i] < 0)
      os << "padding of " << axis[i] << " (" << d.pad_begin[i] << ", " << d.pad_end[i] << ") must be >= 0";
    if (!os.str().empty()) fail(op, os.str());
  }
  if (d.groups < 1) fail(op, "groups = " + std::to_string(d.groups) + " must be >= 1");
  check_activation(op, d.activation);
}

void check_activation(const char* op, Activation a) {
  if (a != Activation::None && a != Activation::ReLU) {
    fail(op, "activation = " + std::to_string(static_cast<int>(a)) +
                 " is not a batchconv::Activation; expected Activation::None (0) or Activation::ReLU (1)");
  }
}

namespace {

// [lowest, highest] byte address that t's elements occupy, in 128 bits (a
// strided view's reach may exceed 64 bits before anything else refuses it).
std::pair<__int128, __int128> extent_of(const TensorView& t) {
  const __int128 base = static_cast<__int128>(reinterpret_cast<uintptr_t>(t.data));
  __int128 lo = base, hi = base;
  for (int i = 0; i < t.rank(); ++i) {
    const __int128 reach = static_cast<__int128>(t.stride(i)) * (t.shape[i] - 1) * static_cast<__int128>(sizeof(float));
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi + static_cast<__int128>(sizeof(float)) - 1};
}

}  // namespace

void check_no_overlap(const char* op, const TensorView& y,
                      const std::vector<std::pair<const char*, const TensorView*>>& inputs) {
  const auto [ylo, yhi] = extent_of(y);
  for (const auto& [name, t] : inputs) {
    if (!t) continue;
    const auto [lo, hi] = extent_of(*t);
    if (lo <= yhi && ylo <= hi) {
      fail(op, "y " + shape_string(y.shape) + " shares memory with " + name + " " + shape_string(t->shape) +
                   "; the output must not overlap an input (the kernels read inputs while writing y)");
    }
  }
}

void check_shape(const char* op, const char* name, const TensorView& t,
                 const std::vector<int64_t>& expected, const std::string& why) {
  if (t.shape == expected) return;
  fail(op, std::string(name) + " has shape " + shape_string(t.shape) + " but " + why +
               ": expected " + shape_string(expected));
}

void check_groups(const char* op, const TensorView& x, int64_t cin, const TensorView& w,
                  int64_t cout, int64_t w_cin_g, int groups) {
  if (cin % groups != 0) {
    fail(op, "groups = " + std::to_string(groups) + " does not divide the " + std::to_string(cin) +
                 " input channels of x " + shape_string(x.shape));
  }
  if (cout % groups != 0) {
    fail(op, "groups = " + std::to_string(groups) + " does not divide the " +
                 std::to_string(cout) + " output channels of w " + shape_string(w.shape));
  }
  if (w_cin_g != cin / groups) {
    fail(op, "w has shape " + shape_string(w.shape) + " with " + std::to_string(w_cin_g) +
                 " input channels per group, but x " + shape_string(x.shape) + " with groups = " +
                 std::to_string(groups) + " needs Cin/groups = " + std::to_string(cin / groups));
  }
}

std::vector<int64_t> conv_spatial_out(const char* op, const TensorView& x,
                                      const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& k, const ConvDesc& d) {
  std::vector<int64_t> out;
  const int n = static_cast<int>(in.size());
  for (int i = 0; i < n; ++i) {
    std::string what = std::string(op) + " (" + (n == 2 && i == 0 ? "H" : "W") + " axis)";
    const int64_t o = conv_output_size(in[i], k[i], d.stride[i], d.dilation[i], d.pad_begin[i],
                                       d.pad_end[i], what.c_str());
    // The kernels index in 32 bits: the padded input and the furthest tap
    // of the last output must stay below 2^31.
    const int64_t limit = std::numeric_limits<int32_t>::max();
    const int64_t padded = in[i] + d.pad_begin[i] + d.pad_end[i];
    const int64_t reach = (o - 1) * d.stride[i] + (k[i] - 1) * int64_t(d.dilation[i]) + 1;
    if (padded > limit || reach > limit) {
      fail(op, std::string("the ") + (n == 2 && i == 0 ? "H" : "W") + " axis of x " +
                   shape_string(x.shape) + " with this geometry (input " +
                   std::to_string(in[i]) + ", padding " + std::to_string(d.pad_begin[i]) + " + " +
                   std::to_string(d.pad_end[i]) + ", stride " + std::to_string(d.stride[i]) +
                   ", dilation " + std::to_string(d.dilation[i]) + ", kernel " +
                   std::to_string(k[i]) + ") indexes beyond 2^31 - 1, the kernels' 32-bit limit");
    }
    out.push_back(o);
  }
  return out;
}

void check_output(const char* op, const TensorView& y, const std::vector<int64_t>& expected) {
  if (y.shape != expected) {
    fail(op, "y has shape " + shape_string(y.shape) + " but the inputs give expected " +
                 shape_string(expected));
  }
  check_tensor(op, "y", y, static_cast<int>(expected.size()), static_cast<int>(expected.size()),
               "the output shape");
  // Sorted by |stride|, each dimension must step past everything the inner
  // ones span, or two output elements would share memory.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, extent)
  for (int i = 0; i < y.rank(); ++i) {
    if (y.shape[i] > 1) dims.push_back({std::llabs(y.stride(i)), y.shape[i]});
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;
  for (const auto& [stride, extent] : dims) {
    if (stride <= span) {
      std::vector<int64_t> strides;
      for (int i = 0; i < y.rank(); ++i) strides.push_back(y.stride(i));
      fail(op, "y " + shape_string(y.shape) + " has strides " + shape_string(strides) +
                   " under which different elements overlap in memory; the output needs "
                   "distinct memory for every element");
    }
    // In 128 bits: a non-unit inner stride may be huge (the view is packed later).
    const __int128 next = static_cast<__int128>(span) + static_cast<__int128>(stride) * (extent - 1);
    span = next > std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(next);
  }
}

}  // namespace batchconv::detail

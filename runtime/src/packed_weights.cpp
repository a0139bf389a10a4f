#include "packed_weights.h"

#include <algorithm>
#include <cstdint>

#include "validate.h"

namespace batchconv {

namespace detail {

// n floats of v starting at a 64-byte boundary (the kernels' vector loads of
// weights then never split a cache line: 10% on 64 -> 64 3x3, JIT).
float* aligned_floats(std::vector<float>& v, size_t n) {
  v.resize(n + 16);
  const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<float*>((p + 63) & ~uintptr_t(63));
}

std::vector<int64_t> packed_weight_strides(const std::vector<int64_t>& shape, int lead) {
  // Memory order, outermost first: [B,] KH, KW, Cin_g, Cout.
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> s(shape.size(), 1);
  std::vector<int> order;  // logical axes, innermost memory first
  order.push_back(lead);      // Cout
  order.push_back(lead + 1);  // Cin_g
  for (int i = r - 1; i >= lead + 2; --i) order.push_back(i);  // KW, then KH
  for (int i = lead - 1; i >= 0; --i) order.push_back(i);      // B
  int64_t step = 1;
  for (int axis : order) {
    s[axis] = step;
    step *= shape[axis];
  }
  return s;
}

TensorView weights_for_channels(const TensorView& w, int lead) {
  if (w.stride(lead) == 1) return w;
  thread_local std::vector<float> scratch;
  float* data = aligned_floats(scratch, static_cast<size_t>(w.numel()));
  TensorView packed(data, w.shape, packed_weight_strides(w.shape, lead));
  reorder(w, packed);
  return packed;
}

TensorView packed_view(const char* op, const PackedWeights& w, int groups, bool batched) {
  if (w.batched() != batched || w.groups() != groups) {
    const std::string made = w.batched() != batched
                                 ? (w.batched() ? "a batched op" : "an unbatched op")
                                 : "groups=" + std::to_string(w.groups());
    fail(op, "w: packed weights " + shape_string(w.shape()) + " made for " + made +
                 ", but this call has groups=" + std::to_string(groups) + ": expected PackedWeights(w, " +
                 std::to_string(groups) + (batched ? ", true)" : ", false)"));
  }
  return w.view();
}

}  // namespace detail

namespace {

constexpr const char* kOp = "PackedWeights";

void check_weights(const TensorView& w, int groups, bool batched) {
  const int lead = batched ? 1 : 0;
  detail::check_tensor(kOp, "w", w, lead + 3, lead + 4,
                       batched ? "(B, Cout, Cin/groups, [KH,] KW)" : "(Cout, Cin/groups, [KH,] KW)");
  if (w.layout == Layout::NHWC) {
    detail::fail(kOp, "w has layout NHWC: weights take any strides with layout NCHW");
  }
  if (groups < 1 || w.shape[lead] % groups != 0) {
    detail::fail(kOp, "groups=" + std::to_string(groups) + " does not divide w's " +
                          std::to_string(w.shape[lead]) + " output channels " +
                          detail::shape_string(w.shape));
  }
}

}  // namespace

PackedWeights::PackedWeights(const TensorView& w, int groups, bool batched)
    : groups_(groups), batched_(batched) {
  check_weights(w, groups, batched);
  shape_ = w.shape;
  strides_ = detail::packed_weight_strides(shape_, batched ? 1 : 0);
  update(w);
}

PackedWeights::PackedWeights(const PackedWeights& other) { *this = other; }

PackedWeights::PackedWeights(PackedWeights&& other) noexcept { *this = std::move(other); }

PackedWeights& PackedWeights::operator=(const PackedWeights& other) {
  if (this == &other) return *this;
  shape_ = other.shape_;
  strides_ = other.strides_;
  groups_ = other.groups_;
  batched_ = other.batched_;
  valid_ = other.valid_;
  data_ptr_ = nullptr;
  std::vector<float>().swap(data_);
  if (valid_) {
    size_t n = 1;
    for (int64_t d : shape_) n *= static_cast<size_t>(d);
    data_ptr_ = detail::aligned_floats(data_, n);
    std::copy(other.data_ptr_, other.data_ptr_ + n, data_ptr_);
  }
  return *this;
}

PackedWeights& PackedWeights::operator=(PackedWeights&& other) noexcept {
  if (this == &other) return *this;
  data_ = std::move(other.data_);  // the buffer moves, so data_ptr_ stays valid
  data_ptr_ = other.data_ptr_;
  shape_ = std::move(other.shape_);
  strides_ = std::move(other.strides_);
  groups_ = other.groups_;
  batched_ = other.batched_;
  valid_ = other.valid_;
  other.data_ptr_ = nullptr;
  other.valid_ = false;
  return *this;
}

void PackedWeights::update(const TensorView& w) {
  check_weights(w, groups_, batched_);
  if (w.shape != shape_) {
    detail::fail(kOp, "update: w has shape " + detail::shape_string(w.shape) +
                          " but these packed weights were made for " + detail::shape_string(shape_));
  }
  data_ptr_ = detail::aligned_floats(data_, static_cast<size_t>(w.numel()));
  reorder(w, TensorView(data_ptr_, shape_, strides_));
  valid_ = true;
}

void PackedWeights::invalidate() {
  valid_ = false;
  data_ptr_ = nullptr;
  std::vector<float>().swap(data_);
}

TensorView PackedWeights::view() const {
  if (!valid_) {
    detail::fail(kOp, shape_.empty() ? "these packed weights were never packed"
                                     : "these packed weights " + detail::shape_string(shape_) +
                                           " were invalidated: call update(w) first");
  }
  return TensorView(data_ptr_, shape_, strides_);
}

}  // namespace batchconv

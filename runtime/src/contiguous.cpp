#include "contiguous.h"

namespace batchconv::detail {

namespace {

std::vector<float>& scratch(Scratch which) {
  thread_local std::vector<float> buffers[3];
  return buffers[static_cast<int>(which)];
}

// dst[i] = src[i] for every index of `shape`, both strided.
void copy_strided(const float* src, const std::vector<int64_t>& src_strides, float* dst,
                  const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& shape,
                  int dim) {
  const int64_t n = shape[dim];
  if (dim + 1 == static_cast<int>(shape.size())) {
    for (int64_t i = 0; i < n; ++i) dst[i * dst_strides[dim]] = src[i * src_strides[dim]];
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    copy_strided(src + i * src_strides[dim], src_strides, dst + i * dst_strides[dim],
                 dst_strides, shape, dim + 1);
  }
}

std::vector<int64_t> strides_of(const TensorView& t) {
  std::vector<int64_t> s(t.shape.size());
  for (int i = 0; i < t.rank(); ++i) s[i] = t.stride(i);
  return s;
}

}  // namespace

TensorView unit_stride_view(const TensorView& t, Scratch which, bool copy_in) {
  if (t.rank() == 0 || t.stride(t.rank() - 1) == 1) return t;
  std::vector<float>& buf = scratch(which);
  buf.resize(static_cast<size_t>(t.numel()));
  TensorView packed(buf.data(), t.shape);
  if (copy_in) copy_strided(t.data, strides_of(t), packed.data, strides_of(packed), t.shape, 0);
  return packed;
}

void scatter(const TensorView& src, const TensorView& dst) {
  if (src.data == dst.data) return;
  copy_strided(src.data, strides_of(src), dst.data, strides_of(dst), dst.shape, 0);
}

}  // namespace batchconv::detail

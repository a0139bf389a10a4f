#include "layout.h"

#include <algorithm>
#include <string>

#include "contiguous.h"
#include "validate.h"

namespace batchconv {

namespace detail {

std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& shape, int channel_dim) {
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> s(shape.size(), 1);
  int64_t step = 1;
  if (channel_dim >= 0 && channel_dim < r) step = std::max<int64_t>(1, shape[channel_dim]);
  for (int i = r - 1; i >= 0; --i) {
    if (i == channel_dim) continue;
    s[i] = step;
    step *= std::max<int64_t>(1, shape[i]);
  }
  return s;
}

TensorView resolve_layout(const char* op, const char* name, const TensorView& t, int channel_dim) {
  if (t.layout != Layout::NHWC) return t;
  if (channel_dim < 0 || channel_dim >= t.rank()) {
    fail(op, std::string(name) + " has layout NHWC but rank " + std::to_string(t.rank()) +
                 " has no channel axis " + std::to_string(channel_dim));
  }
  TensorView r = t;
  if (r.strides.empty()) {
    r.strides = channels_last_strides(t.shape, channel_dim);
    return r;
  }
  if (t.strides.size() != t.shape.size()) return r;  // check_tensor reports it
  if (t.shape[channel_dim] > 1 && t.strides[channel_dim] != 1) {
    fail(op, std::string(name) + " has layout NHWC but its strides " + shape_string(t.strides) +
                 " give the channel axis (" + std::to_string(channel_dim) + ") stride " +
                 std::to_string(t.strides[channel_dim]) + ": expected 1 (or layout NCHW)");
  }
  return r;
}

}  // namespace detail

TensorView channels_last(float* data, std::vector<int64_t> shape, int channel_dim) {
  TensorView t(data, shape, detail::channels_last_strides(shape, channel_dim));
  t.layout = Layout::NHWC;
  if (channel_dim < 0 || channel_dim >= t.rank()) {
    throw Error("channels_last: channel_dim " + std::to_string(channel_dim) +
                " is not an axis of shape " + detail::shape_string(shape));
  }
  return t;
}

void reorder(const TensorView& src_in, const TensorView& dst_in) {
  constexpr const char* op = "reorder";
  using namespace detail;
  if (!src_in.data || !dst_in.data) fail(op, "src and dst need data");
  if (src_in.shape != dst_in.shape) {
    fail(op, "src has shape " + shape_string(src_in.shape) + " but dst has shape " +
                 shape_string(dst_in.shape) + ": expected the same shape");
  }
  check_tensor(op, "src", src_in, 1, 8, "any shape");
  check_tensor(op, "dst", dst_in, 1, 8, "any shape");
  // Explicit strides say where every axis is; only an NHWC view without
  // strides needs its channel axis (taken as axis 1).
  auto resolved = [&](const char* name, const TensorView& t) {
    return t.strides.empty() ? resolve_layout(op, name, t, t.rank() > 1 ? 1 : 0) : t;
  };
  const TensorView src = resolved("src", src_in), dst = resolved("dst", dst_in);
  check_output(op, dst, dst.shape);
  check_no_overlap(op, dst, {{"src", &src}});
  std::vector<int64_t> ss, ds;
  for (int i = 0; i < src.rank(); ++i) {
    ss.push_back(src.stride(i));
    ds.push_back(dst.stride(i));
  }
  copy_strided(src.data, ss, dst.data, ds, src.shape);
}

}  // namespace batchconv

#include "halide_view.h"

#include <limits>
#include <mutex>
#include <sstream>

namespace batchconv::detail {

namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

std::mutex g_error_mutex;
std::string g_last_error;

void capture_error(void* /*user_context*/, const char* msg) {
  std::lock_guard<std::mutex> lock(g_error_mutex);
  g_last_error = msg ? msg : "";
}

float g_zero = 0.0f;

}  // namespace

HalideView::HalideView(const char* op, const char* what, float* data,
                       const std::vector<Dim>& dims) {
  int i = 0;
  int64_t furthest = 0, count = 1;
  for (const Dim& d : dims) {
    if (d.extent > kInt32Max || d.stride > kInt32Max || d.stride < -kInt32Max) {
      std::ostringstream os;
      os << op << ": " << what << " has an extent or stride (" << d.extent << ", " << d.stride
         << " elements) beyond the kernels' 32-bit indexing (at most " << kInt32Max << ")";
      throw Error(os.str());
    }
    furthest += (d.stride < 0 ? -d.stride : d.stride) * (d.extent - 1);
    count *= d.extent;
    if (furthest > kInt32Max || count > kInt32Max) {
      std::ostringstream os;
      os << op << ": " << what << " spans more than " << kInt32Max
         << " elements, beyond the kernels' 32-bit indexing; split the call";
      throw Error(os.str());
    }
    dims_[i].min = 0;
    dims_[i].extent = static_cast<int32_t>(d.extent);
    dims_[i].stride = static_cast<int32_t>(d.stride);
    dims_[i].flags = 0;
    ++i;
  }
  buf_.device = 0;
  buf_.device_interface = nullptr;
  buf_.host = reinterpret_cast<uint8_t*>(data);
  buf_.flags = 0;
  buf_.type = halide_type_t(halide_type_float, 32, 1);
  buf_.dimensions = i;
  buf_.dim = dims_;
  buf_.padding = nullptr;
}

HalideView::HalideView(const HalideView& other) { *this = other; }

HalideView& HalideView::operator=(const HalideView& other) {
  buf_ = other.buf_;
  for (int i = 0; i < kMaxHalideDims; ++i) dims_[i] = other.dims_[i];
  buf_.dim = dims_;
  return *this;
}

HalideView bias_view(const char* op, const TensorView* bias, const std::vector<Dim>& dims) {
  if (bias) return HalideView(op, "bias", bias->data, dims);
  // No bias: every element reads the same zero.
  HalideView v(op, "bias", &g_zero, dims);
  for (int i = 0; i < v.get()->dimensions; ++i) v.get()->dim[i].stride = 0;
  return v;
}

void install_error_handler() {
  static std::once_flag once;
  std::call_once(once, [] { halide_set_error_handler(capture_error); });
}

void throw_kernel_error(const char* op, int code) {
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    msg = g_last_error;
  }
  std::ostringstream os;
  os << op << ": kernel failed (Halide error " << code << ")";
  if (!msg.empty()) os << ": " << msg;
  throw Error(os.str());
}

}  // namespace batchconv::detail

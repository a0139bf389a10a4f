// TensorView helpers and conv_output_size.
#include <sstream>

#include "batchconv/batchconv.h"
#include "validate.h"

namespace batchconv {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t TensorView::stride(int i) const {
  if (!strides.empty()) return strides.at(i);
  int64_t s = 1;
  for (int j = rank() - 1; j > i; --j) s *= shape[j];
  return s;
}

std::string TensorView::shape_string() const { return detail::shape_string(shape); }

int64_t conv_output_size(int64_t in, int64_t kernel, int stride, int dilation, int pad_begin,
                         int pad_end, const char* what) {
  std::ostringstream os;
  os << what << ": ";
  if (in < 1 || kernel < 1) {
    os << "input size " << in << " and kernel size " << kernel << " must be >= 1";
    throw Error(os.str());
  }
  if (stride < 1 || dilation < 1 || pad_begin < 0 || pad_end < 0) {
    os << "stride " << stride << " and dilation " << dilation << " must be >= 1, padding ("
       << pad_begin << ", " << pad_end << ") >= 0";
    throw Error(os.str());
  }
  const int64_t span = static_cast<int64_t>(dilation) * (kernel - 1) + 1;
  const int64_t padded = in + pad_begin + pad_end;
  if (span > padded) {
    os << "kernel of size " << kernel << " (dilation " << dilation << ", spanning " << span
       << ") is larger than the padded input (" << in << " + " << pad_begin << " + " << pad_end
       << " = " << padded << ")";
    throw Error(os.str());
  }
  return (padded - span) / stride + 1;
}

}  // namespace batchconv

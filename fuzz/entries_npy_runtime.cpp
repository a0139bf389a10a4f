// Fuzz entries over .npy files and the runtime API's shape validation.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "conv_plan.h"
#include "entries.h"
#include "npy.h"
#include "validate.h"

namespace batchconv::fuzz {

void npy(const uint8_t* data, size_t size) {
  char path[] = "/tmp/batchconv-fuzz-npy-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return;
  size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, data + done, size - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  try {
    bcbench::NpyArray a = bcbench::read_npy(path);
    (void)a;
  } catch (const std::exception&) {
  }
  ::unlink(path);
}

namespace {

// Reads small signed numbers from the bytes (0 once they run out).
struct Bytes {
  const uint8_t* p;
  size_t n;
  int64_t next(int64_t lo, int64_t hi) {
    if (n == 0) return lo;
    const int64_t v = lo + static_cast<int64_t>(*p++ % static_cast<uint64_t>(hi - lo + 1));
    --n;
    return v;
  }
  // Mostly small, sometimes huge (overflow paths).
  int64_t dim() {
    const int64_t k = next(0, 15);
    if (k == 15) return int64_t(1) << next(20, 62);
    if (k == 14) return -next(0, 3);
    return next(0, 9);
  }
};

TensorView view(Bytes& b, float* mem, int rank) {
  std::vector<int64_t> shape, strides;
  for (int i = 0; i < rank; ++i) shape.push_back(b.dim());
  if (b.next(0, 1)) {
    for (int i = 0; i < rank; ++i) strides.push_back(b.next(-4, 8) * (b.next(0, 7) == 7 ? (int64_t(1) << 40) : 1));
  }
  return TensorView(b.next(0, 15) ? mem : nullptr, shape, strides);
}

}  // namespace

void runtime_validation(const uint8_t* data, size_t size) {
  Bytes b{data, size};
  static float mem[64];
  const int op = static_cast<int>(b.next(0, 3));
  const int lead = op == 1 ? 1 : 0;
  ConvDesc d;
  const int spatial = static_cast<int>(b.next(1, 2));
  for (int i = 0; i < 2; ++i) {
    d.stride[i] = static_cast<int>(b.next(-1, 4));
    d.dilation[i] = static_cast<int>(b.next(-1, 4));
    d.pad_begin[i] = static_cast<int>(b.next(-1, 4) * (b.next(0, 9) == 9 ? int64_t(1) << 28 : 1));
    d.pad_end[i] = static_cast<int>(b.next(-1, 4));
  }
  d.groups = static_cast<int>(b.next(-1, 8));
  d.activation = static_cast<Activation>(b.next(-1, 2));
  try {
    TensorView x = view(b, mem, static_cast<int>(b.next(1, 6)));
    TensorView w = view(b, mem + 16, lead + 2 + spatial);
    TensorView bias = view(b, mem + 32, static_cast<int>(b.next(1, 2)));
    TensorView y = view(b, mem + 48, static_cast<int>(b.next(1, 6)));
    detail::ConvPlan plan = detail::plan_conv("fuzz", x, lead, w, op == 2 ? 1 : lead, d);
    const bool with_bias = b.next(0, 1);
    detail::check_bias("fuzz", with_bias ? &bias : nullptr, {plan.batch, plan.cout}, "(B, Cout)");
    std::vector<int64_t> out{plan.n, plan.cout};
    if (lead) out.insert(out.begin(), plan.batch);
    out.insert(out.end(), plan.out.begin(), plan.out.end());
    y.shape = out;
    detail::check_output("fuzz", y, out);
    detail::check_no_overlap("fuzz", y, {{"x", &x}, {"w", &w}, {"bias", with_bias ? &bias : nullptr}});
  } catch (const Error&) {
  }
}

}  // namespace batchconv::fuzz

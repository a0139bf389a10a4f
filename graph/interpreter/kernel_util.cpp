// Helpers shared by the interpreter's kernels.
#include "interpreter/kernel_util.h"

#include <sstream>

namespace batchconv::interp {

void fail(const std::string& what) { throw KernelError(what); }

Tensor make_tensor(ir::DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  int64_t n = t.numel();
  if (n < 0) fail("negative dimension in shape " + shape_str(t.shape));
  if (n > element_limit())
    fail("tensor of shape " + shape_str(t.shape) + " is too large for the reference interpreter (limit " +
         std::to_string(element_limit()) + " elements)");
  if (t.is_float()) t.f.assign(static_cast<size_t>(n), 0.0f);
  else t.i.assign(static_cast<size_t>(n), 0);
  return t;
}

Tensor int_tensor(std::vector<int64_t> shape, std::vector<int64_t> values) {
  Tensor t;
  t.dtype = ir::DType::Int64;
  t.shape = std::move(shape);
  t.i = std::move(values);
  return t;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t k = 0; k < s.size(); ++k) out += (k ? "," : "") + std::to_string(s[k]);
  return out + "]";
}

const Tensor& in(const Inputs& ins, size_t k, const char* what) {
  if (k >= ins.size() || !ins[k]) fail(std::string("missing required input ") + std::to_string(k) + " (" + what + ")");
  return *ins[k];
}

const Tensor* opt_in(const Inputs& ins, size_t k) { return k < ins.size() ? ins[k] : nullptr; }

std::vector<int64_t> ints_of(const Tensor& t, const char* what) {
  if (t.is_float()) fail(std::string(what) + " must be an integer tensor, got " + ir::dtype_name(t.dtype));
  if (static_cast<int64_t>(t.i.size()) != t.numel()) fail(std::string(what) + ": tensor has no data");
  return t.i;
}

double get(const Tensor& t, int64_t k) { return t.is_float() ? t.f[k] : static_cast<double>(t.i[k]); }

int64_t float_to_int64(double v, const char* what) {
  if (!ir::fits_int64(v)) {
    std::ostringstream os;
    os << what << ": value " << v << " is not an integer in int64's range";
    fail(os.str());
  }
  return static_cast<int64_t>(v);
}

void set(Tensor& t, int64_t k, double v) {
  if (t.is_float()) t.f[k] = static_cast<float>(v);
  else t.i[k] = float_to_int64(v, "integer result");
}

void copy_elem(const Tensor& src, int64_t s, Tensor& dst, int64_t d) {
  if (dst.is_float()) dst.f[d] = src.is_float() ? src.f[s] : static_cast<float>(src.i[s]);
  else dst.i[d] = src.is_float() ? float_to_int64(src.f[s], "float to integer copy") : src.i[s];
}

void check_data(const Tensor& t, const std::string& what) {
  if (t.dtype == ir::DType::Other) fail(what + " has a data type the interpreter does not model");
  for (int64_t d : t.shape)
    if (d < 0) fail(what + " has a negative dimension");
  const size_t have = t.is_float() ? t.f.size() : t.i.size();
  if (static_cast<int64_t>(have) != t.numel())
    fail(what + " holds " + std::to_string(have) + " values for shape " + shape_str(t.shape));
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t k = static_cast<int64_t>(shape.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * shape[k + 1];
  return s;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1) fail("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_index(const std::vector<int64_t>& src, const std::vector<int64_t>& out) {
  const size_t r = out.size(), off = r - src.size();
  std::vector<int64_t> sstr(r, 0);
  std::vector<int64_t> ss = strides_of(src);
  for (size_t k = off; k < r; ++k) sstr[k] = src[k - off] == 1 ? 0 : ss[k - off];
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::vector<int64_t> pos(r, 0);
  int64_t flat = 0;
  for (int64_t e = 0; e < n; ++e) {
    idx[e] = flat;
    for (int64_t k = static_cast<int64_t>(r) - 1; k >= 0; --k) {
      if (++pos[k] < out[k]) {
        flat += sstr[k];
        break;
      }
      flat -= sstr[k] * (out[k] - 1);
      pos[k] = 0;
    }
  }
  return idx;
}

}  // namespace batchconv::interp

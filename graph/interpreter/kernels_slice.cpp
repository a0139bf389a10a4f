// Slice (attribute form before opset 10, inputs form after) and Split
// (attribute form before opset 13, input form after, num_outputs in 18).
#include <algorithm>

#include "interpreter/kernel_util.h"

namespace batchconv::interp {

namespace {

Outputs slice(const ir::Node& n, const Inputs& ins, int64_t opset) {
  const Tensor& x = in(ins, 0, "data");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset >= 10) {
    starts = ints_of(in(ins, 1, "starts"), "starts");
    ends = ints_of(in(ins, 2, "ends"), "ends");
    if (const Tensor* a = opt_in(ins, 3)) axes = ints_of(*a, "axes");
    if (const Tensor* s = opt_in(ins, 4)) steps = ints_of(*s, "steps");
  } else {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  }
  if (starts.size() != ends.size()) fail("starts and ends have different lengths");
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) fail("starts/ends/axes/steps lengths differ");
  std::vector<int64_t> begin(r, 0), step(r, 1), count(x.shape);
  std::vector<char> seen(r, 0);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t a = normalize_axis(axes[k], r, "axis");
    if (seen[a]) fail("axis " + std::to_string(axes[k]) + " repeated");
    seen[a] = 1;
    int64_t dim = x.shape[a], st = steps[k];
    if (st == 0) fail("step must not be 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count[a] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    begin[a] = s;
    step[a] = st;
  }
  Tensor out = make_tensor(x.dtype, count);
  std::vector<int64_t> xs = strides_of(x.shape), os = strides_of(count);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t src = 0, rem = k;
    for (int64_t d = 0; d < r; ++d) {
      src += (begin[d] + (rem / os[d]) * step[d]) * xs[d];
      rem %= os[d];
    }
    copy_elem(x, src, out, k);
  }
  Outputs o;
  o.push_back(std::move(out));
  return o;
}

Outputs split(const ir::Node& n, const Inputs& ins, int64_t opset) {
  const Tensor& x = in(ins, 0, "input");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = normalize_axis(n.attr_int("axis", 0), r, "axis");
  const int64_t dim = x.shape[axis];
  std::vector<int64_t> parts;
  if (opset >= 13) {
    if (const Tensor* s = opt_in(ins, 1)) parts = ints_of(*s, "split");
  } else {
    parts = n.attr_ints("split");
  }
  const int64_t nout = static_cast<int64_t>(n.outputs.size());
  if (parts.empty()) {
    int64_t k = n.attr_int("num_outputs", nout);
    if (k <= 0) fail("Split needs at least one output");
    if (k != nout) fail("num_outputs = " + std::to_string(k) + " but the node has " + std::to_string(nout) + " outputs");
    if (n.attr("num_outputs")) {  // opset 18: last chunk may be smaller
      int64_t chunk = (dim + k - 1) / k;
      for (int64_t j = 0; j < k; ++j) parts.push_back(std::max<int64_t>(0, std::min(chunk, dim - j * chunk)));
    } else {
      if (dim % k) fail("axis of size " + std::to_string(dim) + " does not split into " + std::to_string(k) + " equal parts");
      parts.assign(k, dim / k);
    }
  }
  int64_t total = 0;
  for (int64_t p : parts) {
    if (p < 0) fail("negative split size");
    if (p > dim) fail("split size " + std::to_string(p) + " exceeds axis size " + std::to_string(dim));
    total += p;  // each part <= dim, so no overflow before the check below fails
    if (total > dim) break;
  }
  if (total != dim) fail("split sizes " + shape_str(parts) + " do not add up to axis size " + std::to_string(dim));
  if (static_cast<int64_t>(parts.size()) != nout)
    fail(std::to_string(parts.size()) + " split sizes for " + std::to_string(nout) + " outputs");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.shape[d];
  Outputs outs;
  int64_t offset = 0;
  for (int64_t p : parts) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = p;
    Tensor t = make_tensor(x.dtype, shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < p * inner; ++e) copy_elem(x, (o * dim + offset) * inner + e, t, o * p * inner + e);
    offset += p;
    outs.push_back(std::move(t));
  }
  return outs;
}

}  // namespace

void register_slice_kernels(Registry& r) {
  r["Slice"] = [](const ir::Node& n, const Inputs& i, int64_t o) { return slice(n, i, o); };
  r["Split"] = [](const ir::Node& n, const Inputs& i, int64_t o) { return split(n, i, o); };
}

}  // namespace batchconv::interp

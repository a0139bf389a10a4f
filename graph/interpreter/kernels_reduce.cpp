// Reductions over axes: ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd
// ReduceSumSquare ReduceL1 ReduceL2 (axes from the attribute, or from the
// second input where the opset moved them there: ReduceSum from 13, the
// others from 18), and GlobalMaxPool. Double-precision accumulation; float
// and integer tensors (shape arithmetic) alike.
#include <cmath>
#include <limits>
#include <set>

#include "interpreter/kernel_util.h"
#include "ir/reduce_axes.h"

namespace batchconv::interp {

namespace {

Outputs reduce(const ir::Node& n, const Inputs& ins, int64_t opset, ir::ReduceKind kind) {
  const Tensor& x = in(ins, 0, "data");
  const int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes;
  bool have_axes = false;
  if (ir::reduce_axes_are_input(n.op_type, opset)) {
    if (const Tensor* a = opt_in(ins, 1)) axes = ints_of(*a, "axes"), have_axes = true;
  } else if (const ir::Attribute* a = n.attr("axes")) {
    axes = a->ints, have_axes = true;
  }
  const bool keep = n.attr_int("keepdims", 1) != 0;
  if (have_axes && axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0) {
    Outputs o;
    o.push_back(x);
    o.back().onnx_proto.clear();
    return o;
  }
  std::set<int64_t> reduced;
  if (axes.empty()) {
    for (int64_t k = 0; k < r; ++k) reduced.insert(k);
  } else {
    for (int64_t a : axes) {
      const int64_t k = normalize_axis(a, r, "axes");
      if (!reduced.insert(k).second) fail("axes lists axis " + std::to_string(k) + " twice");
    }
  }
  std::vector<int64_t> shape, kept_shape;
  for (int64_t k = 0; k < r; ++k) {
    if (!reduced.count(k)) shape.push_back(x.shape[k]), kept_shape.push_back(x.shape[k]);
    else if (keep) shape.push_back(1);
  }
  int64_t count = 1;
  for (int64_t k : reduced) count *= x.shape[k];
  if (count == 0 && (kind == ir::ReduceKind::Max || kind == ir::ReduceKind::Min))
    fail("cannot take the " + std::string(kind == ir::ReduceKind::Max ? "max" : "min") + " of an empty set");
  Tensor y = make_tensor(x.dtype, shape);
  std::vector<double> acc(static_cast<size_t>(y.numel()), ir::reduce_init(kind));
  // Walk x in row-major order; the kept dims give the slot.
  const std::vector<int64_t> xs = strides_of(x.shape), ks = strides_of(kept_shape);
  const int64_t total = x.numel();
  for (int64_t i = 0; i < total; ++i) {
    int64_t slot = 0, j = 0;
    for (int64_t k = 0; k < r; ++k) {
      if (reduced.count(k)) continue;
      slot += (i / xs[k]) % x.shape[k] * ks[j++];
    }
    double& a = acc[static_cast<size_t>(slot)];
    a = ir::reduce_step(kind, a, get(x, i));
  }
  for (int64_t k = 0; k < y.numel(); ++k) set(y, k, ir::reduce_finish(kind, acc[static_cast<size_t>(k)], count));
  Outputs o;
  o.push_back(std::move(y));
  return o;
}

Outputs global_max_pool(const Inputs& ins) {
  const Tensor& x = in(ins, 0, "X");
  if (!x.is_float()) fail("X must be a float tensor");
  if (x.shape.size() < 3) fail("X must be (N, C, spatial...), got " + shape_str(x.shape));
  std::vector<int64_t> shape(x.shape.size(), 1);
  shape[0] = x.shape[0];
  shape[1] = x.shape[1];
  Tensor y = make_tensor(x.dtype, shape);
  const int64_t nc = x.shape[0] * x.shape[1], S = nc == 0 ? 0 : x.numel() / nc;
  if (S == 0 && nc > 0) fail("X has an empty spatial extent " + shape_str(x.shape));
  for (int64_t i = 0; i < nc; ++i) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < S; ++k) m = std::max(m, x.f[i * S + k]);
    y.f[i] = m;
  }
  Outputs o;
  o.push_back(std::move(y));
  return o;
}

}  // namespace

void register_reduce_kernels(Registry& r) {
  for (const ir::ReduceOp& op : ir::reduce_ops()) {
    const ir::ReduceKind kind = op.kind;
    r[op.name] = [kind](const ir::Node& n, const Inputs& i, int64_t opset) { return reduce(n, i, opset, kind); };
  }
  r["GlobalMaxPool"] = [](const ir::Node&, const Inputs& i, int64_t) { return global_max_pool(i); };
}

}  // namespace batchconv::interp

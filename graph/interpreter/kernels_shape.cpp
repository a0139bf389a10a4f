// Shape and data-movement kernels: Shape Reshape Expand Tile Concat Transpose
// Unsqueeze Squeeze Flatten Gather ConstantOfShape Constant.
#include <algorithm>

#include "interpreter/kernel_util.h"

namespace batchconv::interp {

namespace {

Outputs one(Tensor t) {
  Outputs o;
  o.push_back(std::move(t));
  return o;
}

Tensor with_shape(const Tensor& x, std::vector<int64_t> shape) {
  Tensor t = x;
  t.shape = std::move(shape);
  if (t.numel() != x.numel()) fail("cannot view " + shape_str(x.shape) + " as " + shape_str(t.shape));
  return t;
}

Outputs shape_op(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "data");
  int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t start = n.attr_int("start", 0), end = n.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> dims;
  for (int64_t k = start; k < end; ++k) dims.push_back(x.shape[k]);
  return one(int_tensor({static_cast<int64_t>(dims.size())}, dims));
}

Outputs reshape(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "data");
  std::vector<int64_t> s = ints_of(in(ins, 1, "shape"), "shape");
  bool allowzero = n.attr_int("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == 0 && !allowzero) {
      if (k >= x.shape.size()) fail("shape entry 0 at position " + std::to_string(k) + " has no input dim to copy");
      s[k] = x.shape[k];
    }
    if (s[k] == -1) {
      if (infer >= 0) fail("shape " + shape_str(s) + " has more than one -1");
      infer = static_cast<int64_t>(k);
    } else if (s[k] < 0) {
      fail("shape " + shape_str(s) + " has a negative entry");
    } else {
      known = ir::mul_sat(known, s[k]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known) fail("cannot infer -1 reshaping " + shape_str(x.shape) + " to " + shape_str(s));
    s[infer] = x.numel() / known;
  }
  return one(with_shape(x, s));
}

Outputs expand(const Inputs& ins) {
  const Tensor& x = in(ins, 0, "input");
  std::vector<int64_t> s = ints_of(in(ins, 1, "shape"), "shape");
  std::vector<int64_t> shape = broadcast_shapes(x.shape, s);
  Tensor out = make_tensor(x.dtype, shape);
  std::vector<int64_t> idx = broadcast_index(x.shape, shape);
  for (int64_t k = 0; k < out.numel(); ++k) copy_elem(x, idx[k], out, k);
  return one(std::move(out));
}

Outputs tile(const Inputs& ins) {
  const Tensor& x = in(ins, 0, "input");
  std::vector<int64_t> reps = ints_of(in(ins, 1, "repeats"), "repeats");
  if (reps.size() != x.shape.size())
    fail("repeats has " + std::to_string(reps.size()) + " entries, input has rank " + std::to_string(x.shape.size()));
  std::vector<int64_t> shape(x.shape.size());
  for (size_t k = 0; k < shape.size(); ++k) {
    if (reps[k] < 0) fail("negative repeat count " + std::to_string(reps[k]));
    shape[k] = ir::mul_sat(x.shape[k], reps[k]);
  }
  Tensor out = make_tensor(x.dtype, shape);
  std::vector<int64_t> xs = strides_of(x.shape), os = strides_of(shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t src = 0, rem = k;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t c = rem / os[d];
      rem %= os[d];
      src += (c % x.shape[d]) * xs[d];
    }
    copy_elem(x, src, out, k);
  }
  return one(std::move(out));
}

Outputs concat(const ir::Node& n, const Inputs& ins) {
  if (ins.empty()) fail("Concat needs at least one input");
  const Tensor& first = in(ins, 0, "inputs");
  const Attribute* ax = n.attr("axis");
  if (!ax) fail("missing attribute 'axis'");
  int64_t r = static_cast<int64_t>(first.shape.size());
  int64_t axis = normalize_axis(ax->i, r, "axis");
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    const Tensor& t = in(ins, k, "inputs");
    if (t.shape.size() != first.shape.size() || t.is_float() != first.is_float())
      fail("input " + std::to_string(k) + " " + shape_str(t.shape) + " does not match input 0 " + shape_str(first.shape));
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.shape[d] != first.shape[d])
        fail("input " + std::to_string(k) + " " + shape_str(t.shape) + " differs from " + shape_str(first.shape) +
             " outside axis " + std::to_string(axis));
    shape[axis] += t.shape[axis];
  }
  Tensor out = make_tensor(first.dtype, shape);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= shape[d];
  int64_t offset = 0;
  for (const Tensor* t : ins) {
    int64_t chunk = t->shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t e = 0; e < chunk; ++e) copy_elem(*t, o * chunk + e, out, o * shape[axis] * inner + offset + e);
    offset += chunk;
  }
  return one(std::move(out));
}

Outputs transpose(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "data");
  int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t k = r - 1; k >= 0; --k) perm.push_back(k);
  if (static_cast<int64_t>(perm.size()) != r) fail("perm " + shape_str(perm) + " does not match rank " + std::to_string(r));
  std::vector<char> seen(r, 0);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[p]) fail("perm " + shape_str(perm) + " is not a permutation");
    seen[p] = 1;
  }
  std::vector<int64_t> shape(r);
  for (int64_t k = 0; k < r; ++k) shape[k] = x.shape[perm[k]];
  Tensor out = make_tensor(x.dtype, shape);
  std::vector<int64_t> xs = strides_of(x.shape), os = strides_of(shape);
  for (int64_t k = 0; k < out.numel(); ++k) {
    int64_t src = 0, rem = k;
    for (int64_t d = 0; d < r; ++d) {
      src += (rem / os[d]) * xs[perm[d]];
      rem %= os[d];
    }
    copy_elem(x, src, out, k);
  }
  return one(std::move(out));
}

std::vector<int64_t> axes_of(const ir::Node& n, const Inputs& ins, int64_t opset, bool* given) {
  if (opset >= 13) {
    const Tensor* a = opt_in(ins, 1);
    *given = a != nullptr;
    return a ? ints_of(*a, "axes") : std::vector<int64_t>{};
  }
  *given = n.attr("axes") != nullptr;
  return n.attr_ints("axes");
}

Outputs unsqueeze(const ir::Node& n, const Inputs& ins, int64_t opset) {
  const Tensor& x = in(ins, 0, "data");
  bool given;
  std::vector<int64_t> axes = axes_of(n, ins, opset, &given);
  if (!given) fail("Unsqueeze needs axes");
  int64_t r = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<char> is_new(r, 0);
  for (int64_t a : axes) {
    int64_t k = normalize_axis(a, r, "axis");
    if (is_new[k]) fail("axis " + std::to_string(a) + " repeated");
    is_new[k] = 1;
  }
  std::vector<int64_t> shape;
  size_t src = 0;
  for (int64_t k = 0; k < r; ++k) shape.push_back(is_new[k] ? 1 : x.shape[src++]);
  return one(with_shape(x, shape));
}

Outputs squeeze(const ir::Node& n, const Inputs& ins, int64_t opset) {
  const Tensor& x = in(ins, 0, "data");
  bool given;
  std::vector<int64_t> axes = axes_of(n, ins, opset, &given);
  int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<char> drop(r, 0);
  if (!given || axes.empty()) {
    for (int64_t k = 0; k < r; ++k) drop[k] = x.shape[k] == 1;
  } else {
    for (int64_t a : axes) {
      int64_t k = normalize_axis(a, r, "axis");
      if (x.shape[k] != 1) fail("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(x.shape[k]));
      drop[k] = 1;
    }
  }
  std::vector<int64_t> shape;
  for (int64_t k = 0; k < r; ++k)
    if (!drop[k]) shape.push_back(x.shape[k]);
  return one(with_shape(x, shape));
}

Outputs flatten(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "input");
  int64_t r = static_cast<int64_t>(x.shape.size());
  int64_t axis = n.attr_int("axis", 1);
  if (axis < -r || axis > r) fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  int64_t a = 1, b = 1;
  for (int64_t k = 0; k < r; ++k) (k < axis ? a : b) *= x.shape[k];
  return one(with_shape(x, {a, b}));
}

Outputs gather(const ir::Node& n, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "data");
  std::vector<int64_t> idx = ints_of(in(ins, 1, "indices"), "indices");
  const std::vector<int64_t>& ishape = ins[1]->shape;
  int64_t r = static_cast<int64_t>(x.shape.size());
  if (r == 0) fail("Gather data must have rank >= 1");
  int64_t axis = normalize_axis(n.attr_int("axis", 0), r, "axis");
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + axis);
  shape.insert(shape.end(), ishape.begin(), ishape.end());
  shape.insert(shape.end(), x.shape.begin() + axis + 1, x.shape.end());
  Tensor out = make_tensor(x.dtype, shape);
  int64_t outer = 1, inner = 1, dim = x.shape[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= x.shape[d];
  const int64_t ni = static_cast<int64_t>(idx.size());
  for (int64_t& v : idx) {
    if (v < -dim || v >= dim) fail("index " + std::to_string(v) + " out of range for axis of size " + std::to_string(dim));
    if (v < 0) v += dim;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j)
      for (int64_t e = 0; e < inner; ++e) copy_elem(x, (o * dim + idx[j]) * inner + e, out, (o * ni + j) * inner + e);
  return one(std::move(out));
}

Outputs constant_of_shape(const ir::Node& n, const Inputs& ins) {
  std::vector<int64_t> s = ints_of(in(ins, 0, "input"), "input");
  const Attribute* v = n.attr("value");
  Tensor fillv = make_tensor(ir::DType::Float, {1});
  if (v) {
    if (v->kind != Attribute::Kind::Tensor || !v->t || v->t->numel() != 1) fail("'value' must be a one-element tensor");
    check_data(*v->t, "attribute 'value'");
    fillv = *v->t;
  }
  for (int64_t d : s)
    if (d < 0) fail("negative dimension in shape " + shape_str(s));
  Tensor out = make_tensor(fillv.dtype, s);
  for (int64_t k = 0; k < out.numel(); ++k) copy_elem(fillv, 0, out, k);
  out.onnx_proto.clear();
  return one(std::move(out));
}

Outputs constant(const ir::Node& n) {
  if (const Attribute* a = n.attr("value")) {
    if (a->kind != Attribute::Kind::Tensor || !a->t) fail("'value' is not a tensor");
    check_data(*a->t, "attribute 'value'");
    return one(*a->t);
  }
  if (const Attribute* a = n.attr("value_float")) return one(Tensor{ir::DType::Float, {}, {a->f}, {}, {}});
  if (const Attribute* a = n.attr("value_floats"))
    return one(Tensor{ir::DType::Float, {static_cast<int64_t>(a->floats.size())}, a->floats, {}, {}});
  if (const Attribute* a = n.attr("value_int")) return one(int_tensor({}, {a->i}));
  if (const Attribute* a = n.attr("value_ints")) return one(int_tensor({static_cast<int64_t>(a->ints.size())}, a->ints));
  fail("Constant has no supported value attribute (value, value_float(s), value_int(s))");
}

}  // namespace

void register_shape_kernels(Registry& r) {
  r["Shape"] = [](const ir::Node& n, const Inputs& i, int64_t) { return shape_op(n, i); };
  r["Reshape"] = [](const ir::Node& n, const Inputs& i, int64_t) { return reshape(n, i); };
  r["Expand"] = [](const ir::Node&, const Inputs& i, int64_t) { return expand(i); };
  r["Tile"] = [](const ir::Node&, const Inputs& i, int64_t) { return tile(i); };
  r["Concat"] = [](const ir::Node& n, const Inputs& i, int64_t) { return concat(n, i); };
  r["Transpose"] = [](const ir::Node& n, const Inputs& i, int64_t) { return transpose(n, i); };
  r["Unsqueeze"] = [](const ir::Node& n, const Inputs& i, int64_t o) { return unsqueeze(n, i, o); };
  r["Squeeze"] = [](const ir::Node& n, const Inputs& i, int64_t o) { return squeeze(n, i, o); };
  r["Flatten"] = [](const ir::Node& n, const Inputs& i, int64_t) { return flatten(n, i); };
  r["Gather"] = [](const ir::Node& n, const Inputs& i, int64_t) { return gather(n, i); };
  r["ConstantOfShape"] = [](const ir::Node& n, const Inputs& i, int64_t) { return constant_of_shape(n, i); };
  r["Constant"] = [](const ir::Node& n, const Inputs&, int64_t) { return constant(n); };
}

}  // namespace batchconv::interp

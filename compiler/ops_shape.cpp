// Shape and data-movement ops, all inlined into their consumers as index
// arithmetic (no copies): Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Expand, Tile, Concat, Slice, Split, and Shape (a compile-time constant).
#include <algorithm>

#include "ops.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

// out = in seen with another shape of the same element count. Dims are
// matched in groups of equal products, so inserting or dropping unit dims
// and splitting/merging neighbours costs no division where a group is 1:1.
LTensor reshape_view(LoweringContext& cx, const ir::Node& n, const LTensor& in, const std::vector<int64_t>& shape) {
  if (numel(shape) != in.numel()) {
    cx.fail(n, "cannot reshape " + shape_str(in.shape) + " to " + shape_str(shape) +
                   (cx.options().batch2_shapes ? " (--dynamic-batch: the model's target shape fixes the batch; export "
                                                 "the model with a dynamic batch axis)" : ""));
  }
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  std::vector<Expr> out_idx = onnx_index(vars);
  std::vector<Expr> in_idx(in.shape.size(), Expr(0));
  std::vector<int> ins, outs;  // non-unit dims
  // A run-time batch (dim 0, 1 in the static shape) maps to the result's dim 0.
  const size_t first = in.batched ? 1 : 0;
  if (in.batched) {
    if (shape.empty() || shape[0] != 1) cx.fail(n, "--dynamic-batch: the reshape to " + shape_str(shape) + " merges the run-time batch with other dims");
    in_idx[0] = out_idx[0];
  }
  for (size_t k = first; k < in.shape.size(); ++k)
    if (in.shape[k] != 1) ins.push_back(static_cast<int>(k));
  for (size_t k = first; k < shape.size(); ++k)
    if (shape[k] != 1) outs.push_back(static_cast<int>(k));
  size_t a = 0, c = 0;
  while (a < ins.size() && c < outs.size()) {
    size_t b = a + 1, d = c + 1;
    int64_t pi = in.shape[ins[a]], po = shape[outs[c]];
    while (pi != po) {
      if (pi < po) pi *= in.shape[ins[b++]];
      else po *= shape[outs[d++]];
    }
    if (b == a + 1 && d == c + 1) {
      in_idx[ins[a]] = out_idx[outs[c]];
    } else {
      Expr linear = 0;
      for (size_t k = c; k < d; ++k) linear = linear * i32(shape[outs[k]]) + out_idx[outs[k]];
      int64_t stride = 1;
      for (size_t k = b; k-- > a;) {
        in_idx[ins[k]] = (linear / i32(stride)) % i32(in.shape[ins[k]]);
        stride *= in.shape[ins[k]];
      }
    }
    a = b;
    c = d;
  }
  Func f = cx.func(n);
  f(vars) = read(in, in_idx);
  LTensor t = make_tensor(f, shape);
  t.cheap = in.cheap;
  t.storage = in.storage;
  t.storage_extents = in.storage_extents;
  t.storage_batch_dim = in.storage_batch_dim;
  return t;
}

std::vector<int64_t> axes_of(LoweringContext& cx, const ir::Node& n, int64_t rank) {
  std::vector<int64_t> axes;
  if (cx.opset("") >= 13) {
    if (cx.optional_input(n, 1)) axes = cx.constant_ints(n, 1);
  } else {
    axes = n.attr_ints("axes");
  }
  for (int64_t& a : axes) a = normalize_axis(cx, n, a, rank);
  std::sort(axes.begin(), axes.end());
  return axes;
}

void reshape(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> shape = cx.constant_ints(n, 1);
  const bool allowzero = n.attr_int("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allowzero) {
      if (k >= in.shape.size()) cx.fail(n, "shape entry 0 at " + std::to_string(k) + " has no input dim to copy");
      shape[k] = in.shape[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) cx.fail(n, "more than one -1 in the target shape");
      infer = static_cast<int>(k);
    } else if (shape[k] < 0) {
      cx.fail(n, "the target shape " + shape_str(shape) + " has a negative entry");
    } else {
      known = ir::mul_sat(known, shape[k]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0) cx.fail(n, "cannot reshape " + shape_str(in.shape) + " with a -1");
    shape[infer] = in.numel() / known;
  }
  cx.define(n.outputs[0], reshape_view(cx, n, in, shape));
}

void flatten(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  const int64_t axis = normalize_axis(cx, n, n.attr_int("axis", 1), in.rank() + 1);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < in.rank(); ++k) (k < axis ? outer : inner) *= in.shape[k];
  cx.define(n.outputs[0], reshape_view(cx, n, in, {outer, inner}));
}

void squeeze(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> axes = axes_of(cx, n, in.rank());
  std::vector<int64_t> shape;
  for (int64_t k = 0; k < in.rank(); ++k) {
    const bool listed = std::count(axes.begin(), axes.end(), k) > 0;
    if (listed && in.shape[k] != 1) cx.fail(n, "cannot squeeze axis " + std::to_string(k) + " of " + shape_str(in.shape));
    if (!(listed || (axes.empty() && in.shape[k] == 1))) shape.push_back(in.shape[k]);
  }
  cx.define(n.outputs[0], reshape_view(cx, n, in, shape));
}

void unsqueeze(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  const int64_t rank = in.rank() + static_cast<int64_t>(cx.opset("") >= 13 ? cx.constant_ints(n, 1).size()
                                                                          : n.attr_ints("axes").size());
  std::vector<int64_t> axes = axes_of(cx, n, rank);
  std::vector<int64_t> shape;
  size_t src = 0;
  for (int64_t k = 0; k < rank; ++k) {
    if (std::count(axes.begin(), axes.end(), k)) shape.push_back(1);
    else shape.push_back(in.shape.at(src++));
  }
  cx.define(n.outputs[0], reshape_view(cx, n, in, shape));
}

void transpose(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (int64_t k = in.rank(); k-- > 0;) perm.push_back(k);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); ++k)
    if (sorted[k] != int64_t(k) || perm.size() != in.shape.size()) cx.fail(n, "perm is not a permutation of the input dims");
  std::vector<int64_t> shape;
  for (int64_t p : perm) shape.push_back(in.shape[p]);
  std::vector<Var> vars = make_vars(in.rank());
  std::vector<Expr> out_idx = onnx_index(vars), in_idx(in.rank());
  for (size_t k = 0; k < perm.size(); ++k) in_idx[perm[k]] = out_idx[k];
  Func f = cx.func(n);
  f(vars) = read(in, in_idx);
  LTensor t = make_tensor(f, shape);
  t.cheap = in.cheap;
  cx.define(n.outputs[0], std::move(t));
}

void expand(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> shape;
  try {
    shape = broadcast_shapes(in.shape, cx.constant_ints(n, 1));
  } catch (const std::invalid_argument& e) {
    cx.fail(n, e.what());
  }
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  Func f = cx.func(n);
  f(vars) = read_broadcast(in, shape, onnx_index(vars));
  LTensor t = make_tensor(f, shape);
  t.cheap = in.cheap;
  if (shape == in.shape)
    t.storage = in.storage, t.storage_extents = in.storage_extents, t.storage_batch_dim = in.storage_batch_dim;
  cx.define(n.outputs[0], std::move(t));
}

void tile(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> reps = cx.constant_ints(n, 1);
  if (reps.size() != in.shape.size()) cx.fail(n, "repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(in.rank()));
  std::vector<int64_t> shape;
  for (size_t k = 0; k < reps.size(); ++k) {
    if (reps[k] < 0) cx.fail(n, "negative repeat count");
    if (reps[k] < 0) cx.fail(n, "repeats " + shape_str(reps) + " has a negative entry");
    shape.push_back(ir::mul_sat(in.shape[k], reps[k]));
  }
  std::vector<Var> vars = make_vars(in.rank());
  std::vector<Expr> idx = onnx_index(vars);
  for (size_t k = 0; k < reps.size(); ++k)
    if (reps[k] != 1) idx[k] = idx[k] % i32(in.shape[k]);
  Func f = cx.func(n);
  f(vars) = read(in, idx);
  LTensor t = make_tensor(f, shape);
  t.cheap = in.cheap;
  cx.define(n.outputs[0], std::move(t));
}

void concat(LoweringContext& cx, const ir::Node& n) {
  const LTensor& first = cx.input(n, 0);
  const int64_t axis = normalize_axis(cx, n, n.attr_int("axis", 0), first.rank());
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  std::vector<const LTensor*> parts;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const LTensor& t = cx.input(n, k);
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (t.rank() != first.rank() || (d != axis && t.shape[d] != first.shape[d])) {
        cx.fail(n, "input " + std::to_string(k) + " of shape " + shape_str(t.shape) + " does not match " +
                       shape_str(first.shape) + " outside axis " + std::to_string(axis));
      }
    }
    if (t.shape[axis] > 0) parts.push_back(&t);
    shape[axis] += t.shape[axis];
  }
  if (parts.empty()) cx.fail(n, "every input is empty along the axis");
  std::vector<Var> vars = make_vars(first.rank());
  std::vector<Expr> idx = onnx_index(vars);
  // From the last part back: select(i < offset_k + d_k, part_k(clamped), rest).
  int64_t offset = shape[axis];
  Expr value;
  for (size_t k = parts.size(); k-- > 0;) {
    offset -= parts[k]->shape[axis];
    std::vector<Expr> pi = idx;
    pi[axis] = Halide::clamp(idx[axis] - i32(offset), 0, i32(parts[k]->shape[axis] - 1));
    Expr v = read(*parts[k], pi);
    value = value.defined() ? Halide::select(idx[axis] < i32(offset + parts[k]->shape[axis]), v, value) : v;
  }
  Func f = cx.func(n);
  f(vars) = value;
  LTensor t = make_tensor(f, shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

// Output k of a strided window: in_idx[axis] = start + i * step along each axis.
LTensor window(LoweringContext& cx, const ir::Node& n, const LTensor& in, const std::vector<int64_t>& start,
               const std::vector<int64_t>& step, const std::vector<int64_t>& shape, const std::string& suffix) {
  std::vector<Var> vars = make_vars(in.rank());
  std::vector<Expr> idx = onnx_index(vars);
  for (int64_t k = 0; k < in.rank(); ++k) {
    if (start[k] != 0 || step[k] != 1) idx[k] = i32(start[k]) + idx[k] * i32(step[k]);
  }
  Func f = cx.func(n, suffix);
  f(vars) = read(in, idx);
  LTensor t = make_tensor(f, shape);
  t.cheap = in.cheap;
  return t;
}

void slice(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (cx.opset("") >= 10) {
    starts = cx.constant_ints(n, 1);
    ends = cx.constant_ints(n, 2);
    if (cx.optional_input(n, 3)) axes = cx.constant_ints(n, 3);
    if (cx.optional_input(n, 4)) steps = cx.constant_ints(n, 4);
  } else {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    cx.fail(n, "starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> start(in.rank(), 0), step(in.rank(), 1), shape = in.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t a = normalize_axis(cx, n, axes[k], in.rank()), d = in.shape[a], s = steps[k];
    if (s == 0) cx.fail(n, "step 0 on axis " + std::to_string(a));
    auto norm = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + d : v, lo, hi); };
    const int64_t b = s > 0 ? norm(starts[k], 0, d) : norm(starts[k], -1, d - 1);
    const int64_t e = s > 0 ? norm(ends[k], 0, d) : norm(ends[k], -1, d - 1);
    const int64_t len = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e - s - 1) / -s);
    start[a] = b;
    step[a] = s;
    shape[a] = len;
  }
  if (numel(shape) == 0) cx.fail(n, "the slice is empty " + shape_str(shape) + "; empty tensors are not supported");
  cx.define(n.outputs[0], window(cx, n, in, start, step, shape, ""));
}

void split(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  const int64_t axis = normalize_axis(cx, n, n.attr_int("axis", 0), in.rank());
  std::vector<int64_t> sizes;
  if (cx.opset("") >= 13) {
    if (cx.optional_input(n, 1)) sizes = cx.constant_ints(n, 1);
  } else {
    sizes = n.attr_ints("split");
  }
  const int64_t parts = static_cast<int64_t>(n.outputs.size()), d = in.shape[axis];
  if (sizes.empty()) {
    const int64_t each = (d + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, d - k * each));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (int64_t(sizes.size()) != parts || total != d) {
    cx.fail(n, "split sizes do not add up to " + std::to_string(d) + " over " + std::to_string(parts) + " outputs");
  }
  int64_t offset = 0;
  for (int64_t k = 0; k < parts; ++k) {
    std::vector<int64_t> start(in.rank(), 0), step(in.rank(), 1), shape = in.shape;
    start[axis] = offset;
    shape[axis] = sizes[k];
    offset += sizes[k];
    if (n.outputs[k]) cx.define(n.outputs[k], window(cx, n, in, start, step, shape, std::to_string(k)));
  }
}

void shape_op(LoweringContext& cx, const ir::Node& n) {
  const LTensor& in = cx.input(n, 0);
  const int64_t r = in.rank();
  int64_t b = n.attr_int("start", 0), e = n.attr_int("end", r);
  b = std::clamp(b < 0 ? b + r : b, int64_t(0), r);
  e = std::clamp(e < 0 ? e + r : e, int64_t(0), r);
  ir::Tensor t;
  t.dtype = ir::DType::Int64;
  for (int64_t k = b; k < e; ++k) t.i.push_back(in.shape[k]);
  t.shape = {static_cast<int64_t>(t.i.size())};
  cx.define(n.outputs[0], constant_tensor(t, cx.unique_c_name("shape_" + n.name)));
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r["Reshape"] = reshape;
  r["Flatten"] = flatten;
  r["Squeeze"] = squeeze;
  r["Unsqueeze"] = unsqueeze;
  r["Transpose"] = transpose;
  r["Expand"] = expand;
  r["Tile"] = tile;
  r["Concat"] = concat;
  r["Slice"] = slice;
  r["Split"] = split;
  r["Shape"] = shape_op;
}

}  // namespace batchconv::compiler

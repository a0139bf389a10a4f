// Ops that reduce: MatMul, Gemm, MaxPool, AveragePool, Softmax, LogSoftmax
// (reductions over axes and the global pools: ops_reduce_axes.cpp). Each is compute_root; MatMul and Gemm take the
// epilogue the fusion plan gave them and the
// batched-linear generator's register-tiled CPU schedule
// (generators/linear_schedule_cpu.h), the others are vectorised along
// their innermost dimension and parallel over the others
// (schedule_reduction); inputs that are inlined arithmetic are
// materialised first so the reduction does not recompute them.
#include <algorithm>
#include <cmath>

#include "ir/conv_window.h"
#include "epilogue.h"
#include "linear_chooser.h"
#include "linear_schedule_cpu.h"
#include "linear_weights.h"
#include "ops.h"
#include "target_facts.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Var;

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

// A compute_root copy of t when reading it is not cheap.
LTensor materialize(LoweringContext& cx, const ir::Node& n, const LTensor& t, const std::string& suffix) {
  if (t.cheap) return t;
  std::vector<Var> vars = make_vars(t.rank());
  Func f = cx.func(n, suffix);
  f(vars) = t.f(std::vector<Expr>(vars.begin(), vars.end()));
  schedule_reduction(f, reversed(t.shape), cx.target());
  LTensor out = make_tensor(f, t.shape);
  out.batched = t.batched;
  return out;
}

// A 4-D result (N, C, H, W) stored channels innermost (c, x, y, n): a
// vector of channels per store, parallel over rows.
void schedule_channels_innermost(Func f, const std::vector<int64_t>& shape, const Halide::Target& target) {
  std::vector<Var> a = f.args();  // x, y, c, n
  const int vec = target.natural_vector_size<float>();
  f.compute_root().reorder_storage(a[2], a[0], a[1], a[3]).reorder(a[2], a[0], a[1], a[3]);
  if (shape[1] >= vec) f.vectorize(a[2], vec, Halide::TailStrategy::GuardWithIf);
  Var rows("y_n");
  f.fuse(a[1], a[3], rows).parallel(rows);
}

void define_root(LoweringContext& cx, const ir::Node& n, size_t output, Func f, std::vector<int64_t> shape) {
  schedule_reduction(f, reversed(shape), cx.target());
  cx.define(n.outputs[output], make_tensor(f, std::move(shape)));
}

// The result of a matmul-like reduction acc(col, row, batch...): on a CPU
// the batched-linear generator's register-tiled schedule
// (linear_schedule_cpu.h) with the batch dims in the parallel loop; on a
// GPU one thread per element, as other reductions.
// operands: the rows Func acc reads and the weights (linear_schedule_cpu.h);
// on a CPU the chooser (linear_chooser.h) decides, with this target's facts,
// which of them each task copies into panels; on a GPU both are inlined.
// The epilogue (fusion_plan.h) is applied to each value as it is stored.
Func linear_root(LoweringContext& cx, const ir::Node& n, Func acc, const std::vector<Var>& vars,
                 const std::vector<int64_t>& shape, const Halide::RDom& r, int64_t k, int64_t cols,
                 const batchconv_gen::LinearOperands& operands, const Epilogue& epilogue,
                 bool batched_rows = false) {
  // operands.weights undefined: B is stored as panels (linear_weights.h), read in place.
  Func f = cx.func(n);
  f(vars) = epilogue.apply(cx, acc(vars), shape, onnx_index(vars));
  if (cx.target().has_gpu_feature()) {
    schedule_reduction(acc, reversed(shape), cx.target());
    schedule_reduction(f, reversed(shape), cx.target());
    return f;
  }
  f.compute_root();
  std::vector<Var> outer(vars.begin() + 2, vars.end());
  const batchconv_gen::TargetFacts facts = batchconv_gen::target_facts(cx.target());
  const int64_t rows = shape[shape.size() - 2];
  const batchconv_gen::LinearPanels panels = batchconv_gen::choose_linear_panels(rows, k, cols, facts);
  batchconv_gen::LinearOperands chosen;
  if (panels != batchconv_gen::LinearPanels::None && operands.weights.defined()) {
    chosen.weights = operands.weights;
    chosen.column_arg = operands.column_arg;
  }
  if (panels == batchconv_gen::LinearPanels::All) chosen.rows = operands.rows;
  // Rows that are the run-time batch (--dynamic-batch): the caller's extent.
  const Expr rows_extent = batched_rows ? cx.batch() : i32(rows);
  batchconv_gen::schedule_linear_cpu(f, acc, vars[0], vars[1], outer, r.x, i32(cols), rows_extent, facts,
                                     chosen);
  return f;
}

void matmul(LoweringContext& cx, const ir::Node& n) {
  const LTensor a = materialize(cx, n, cx.input(n, 0), "a");
  const LTensor b = materialize(cx, n, cx.input(n, 1), "b");
  if (a.rank() < 1 || b.rank() < 1) cx.fail(n, "MatMul of a scalar");
  std::vector<int64_t> as = a.shape, bs = b.shape;
  if (a.rank() == 1) as.insert(as.begin(), 1);
  if (b.rank() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K) cx.fail(n, "inner dims differ: " + shape_str(a.shape) + " @ " + shape_str(b.shape));
  std::vector<int64_t> batch;
  try {
    batch = broadcast_shapes(std::vector<int64_t>(as.begin(), as.end() - 2), std::vector<int64_t>(bs.begin(), bs.end() - 2));
  } catch (const std::invalid_argument& e) {
    cx.fail(n, e.what());
  }
  std::vector<int64_t> full = batch;
  full.push_back(M);
  full.push_back(N);
  std::vector<int64_t> shape = batch;
  if (a.rank() > 1) shape.push_back(M);
  if (b.rank() > 1) shape.push_back(N);
  // An epilogue only where the result is the root Func itself (no 1-D operand).
  if (shape != full) cx.truncate_epilogue(&n, 0);
  const Epilogue epilogue = fitted_epilogue(cx, n, full);
  std::vector<Var> vars = make_vars(static_cast<int>(full.size()));
  std::vector<Expr> idx = onnx_index(vars);
  RDom r(0, i32(K), "k");
  auto operand = [&](const LTensor& t, const std::vector<int64_t>& s2, Expr row, Expr col, bool is_a) {
    std::vector<Expr> i;
    const size_t nb = s2.size() - 2, off = batch.size() - nb;
    for (size_t k = 0; k < nb; ++k) i.push_back(s2[k] == 1 && !(k == 0 && t.batched) ? Expr(0) : idx[k + off]);
    if (t.rank() == 1) i.push_back(is_a ? col : row);
    else i.push_back(row), i.push_back(col);
    return read(t, i);
  };
  // A's rows as rows(k, row, batch...), the row clamped: the CPU schedule's
  // row tiles round up past M (linear_schedule_cpu.h).
  // A 2-D A that is batched has the run-time batch as its rows.
  const bool batched_rows = a.batched && a.rank() == 2;
  Expr row = Halide::clamp(idx[batch.size()], 0, batched_rows ? cx.batch() - 1 : i32(M - 1));
  Var k("k");
  std::vector<Var> row_args{k, vars[1]};
  row_args.insert(row_args.end(), vars.begin() + 2, vars.end());
  std::vector<Expr> row_call{r, vars[1]};
  row_call.insert(row_call.end(), vars.begin() + 2, vars.end());
  Func rows = cx.func(n, "rows");
  rows(row_args) = operand(a, as, row, k, true);
  Func acc = cx.func(n, "acc");
  acc(vars) = 0.0f;
  const std::optional<LinearWeights> stored = linear_weights(cx, n, b, false, M * numel(batch));
  const Expr col = idx[batch.size() + 1];
  acc(vars) += rows(row_call) * (stored ? stored->at(r, col) : operand(b, bs, r, col, false));
  // B's column is its Func's first argument (none for a 1-D B or panels).
  batchconv_gen::LinearOperands operands{rows, b.rank() > 1 && !stored ? b.f : Func(), 0};
  if (stored && stored->width == 0) operands.weights = stored->tensor.f;
  Func f = linear_root(cx, n, acc, vars, full, r, K, N, operands, epilogue, batched_rows);
  LTensor t = make_tensor(f, full);
  if (shape == full) {
    epilogue.define(cx, n, t);
  } else {
    // Drop the unit dims of 1-D operands: a view of the root Func.
    std::vector<Var> v2 = make_vars(static_cast<int>(shape.size()));
    std::vector<Expr> o = onnx_index(v2), fi;
    for (size_t k = 0; k < batch.size(); ++k) fi.push_back(o[k]);
    size_t next = batch.size();
    fi.push_back(a.rank() > 1 ? o[next++] : Expr(0));
    fi.push_back(b.rank() > 1 ? o[next] : Expr(0));
    Func g = cx.func(n, "view");
    g(v2) = read(t, fi);
    cx.define(n.outputs[0], make_tensor(g, shape));
  }
}

void gemm(LoweringContext& cx, const ir::Node& n) {
  const LTensor a = materialize(cx, n, cx.input(n, 0), "a");
  const LTensor b = materialize(cx, n, cx.input(n, 1), "b");
  const LTensor* c = cx.optional_input(n, 2);
  if (a.rank() != 2 || b.rank() != 2) cx.fail(n, "A and B must be 2-D, got " + shape_str(a.shape) + " and " + shape_str(b.shape));
  const bool ta = n.attr_int("transA", 0) != 0;
  const bool tb = n.attr_int("transB", 0) != 0;
  const ir::Attribute* al = n.attr("alpha");
  const ir::Attribute* be = n.attr("beta");
  const float alpha = al ? al->f : 1.0f, beta = be ? be->f : 1.0f;
  const int64_t M = ta ? a.shape[1] : a.shape[0], K = ta ? a.shape[0] : a.shape[1];
  const int64_t K2 = tb ? b.shape[1] : b.shape[0], N = tb ? b.shape[0] : b.shape[1];
  if (K != K2) cx.fail(n, "inner dims differ: A " + shape_str(a.shape) + ", B " + shape_str(b.shape));
  const std::optional<LinearWeights> stored = linear_weights(cx, n, b, tb, M);
  const std::vector<int64_t> shape{M, N};
  const Epilogue epilogue = fitted_epilogue(cx, n, shape);
  if (c) {
    try {
      if (broadcast_shapes(c->shape, shape) != shape) throw std::invalid_argument("");
    } catch (const std::invalid_argument&) {
      cx.fail(n, "C of shape " + shape_str(c->shape) + " does not broadcast to " + shape_str(shape));
    }
  }
  Var x("n"), y("m");
  RDom r(0, i32(K), "k");
  // Rows clamped for the CPU schedule's rounded-up row tiles.
  const bool batched_rows = a.batched && !ta;
  Expr row = Halide::clamp(y, 0, batched_rows ? cx.batch() - 1 : i32(M - 1));
  Func acc = cx.func(n, "acc");
  acc(x, y) = c ? beta * read_broadcast(*c, shape, {row, x}) : Expr(0.0f);
  Var k("k");
  Func rows = cx.func(n, "rows");
  rows(k, y) = ta ? read(a, {k, row}) : read(a, {row, k});
  Expr bv = stored ? stored->at(r, x) : tb ? read(b, {x, r}) : read(b, {r, x});
  acc(x, y) += alpha * rows(r, y) * bv;
  // B's column is its Func's first argument, its second when transposed.
  batchconv_gen::LinearOperands operands{rows, Func(), 0};
  if (!stored) operands = {rows, b.f, tb ? 1 : 0};
  else if (stored->width == 0) operands = {rows, stored->tensor.f, 0};
  Func f = linear_root(cx, n, acc, {x, y}, shape, r, K, N, operands, epilogue, batched_rows);
  epilogue.define(cx, n, make_tensor(f, shape));
}

struct Window {
  std::vector<int64_t> k, s, d, pb, pe, out;
};

Window pool_window(LoweringContext& cx, const ir::Node& n, const LTensor& x, bool dilations) {
  const int sp = x.rank() - 2;
  if (sp < 1) cx.fail(n, "input of shape " + shape_str(x.shape) + " has no spatial dims");
  ir::Window win;
  try {
    win = ir::conv_window(ir::window_attrs(n, sp, dilations), std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  } catch (const ir::WindowError& e) {
    cx.fail(n, e.what());
  }
  Window w;
  w.k = win.kernel;
  w.s = win.strides;
  w.d = win.dilations;
  w.pb = win.pad_begin;
  w.pe = win.pad_end;
  w.out = win.out;
  return w;
}

void pool(LoweringContext& cx, const ir::Node& n, bool is_max) {
  if (n.outputs.size() > 1 && n.outputs[1] && !n.outputs[1]->uses.empty()) cx.fail(n, "the Indices output is not supported");
  const LTensor& x = cx.input(n, 0);
  const Window w = pool_window(cx, n, x, is_max);
  const int sp = x.rank() - 2;
  std::vector<int64_t> shape{x.shape[0], x.shape[1]};
  for (int64_t o : w.out) shape.push_back(o);
  std::vector<Var> vars = make_vars(x.rank());
  std::vector<Expr> idx = onnx_index(vars);
  Halide::Region dom;
  for (int i = sp; i-- > 0;) dom.push_back({0, i32(w.k[i])});  // innermost first
  RDom r(dom);
  std::vector<Expr> in_idx{idx[0], idx[1]};
  Expr inside = Halide::Internal::const_true(), in_pad = Halide::Internal::const_true();
  for (int i = 0; i < sp; ++i) {
    Expr p = idx[2 + i] * i32(w.s[i]) + r[sp - 1 - i] * i32(w.d[i]) - i32(w.pb[i]);
    inside = inside && p >= 0 && p < i32(x.shape[2 + i]);
    in_pad = in_pad && p < i32(x.shape[2 + i] + w.pe[i]);
    in_idx.push_back(Halide::clamp(p, 0, i32(x.shape[2 + i] - 1)));
  }
  Expr v = read(x, in_idx);
  Func f = cx.func(n);
  if (is_max) {
    f(vars) = Halide::maximum(Halide::select(inside, v, Halide::Float(32).min()));
  } else {
    const bool include_pad = n.attr_int("count_include_pad", 0) != 0;
    Expr count = Halide::sum(Halide::select(include_pad ? in_pad : inside, 1, 0));
    f(vars) = Halide::sum(Halide::select(inside, v, 0.0f)) / Halide::cast<float>(Halide::max(count, 1));
  }
  if (sp != 2 || cx.target().has_gpu_feature()) {
    define_root(cx, n, 0, f, shape);
    return;
  }
  // Scheduled once the layout plan has chosen its storage (layout_plan.h).
  f.compute_root();
  cx.define(n.outputs[0], make_tensor(f, shape));
  const Halide::Target target = cx.target();
  PoolStage stage{&n, n.outputs[0], f, shape, {}};
  stage.schedule = [f, shape, target](bool channels_innermost) mutable {
    if (channels_innermost) schedule_channels_innermost(f, shape, target);
    else schedule_reduction(f, reversed(shape), target);
  };
  cx.pool_stages.push_back(std::move(stage));
}

void softmax(LoweringContext& cx, const ir::Node& n, bool log) {
  const LTensor x = materialize(cx, n, cx.input(n, 0), "x");
  const bool v13 = cx.opset("") >= 13;
  const int64_t axis = normalize_axis(cx, n, n.attr_int("axis", v13 ? -1 : 1), x.rank());
  // Reduced dims: the axis (opset >= 13) or every dim from it on (older opsets).
  const int64_t last = v13 ? axis : x.rank() - 1;
  std::vector<Var> vars = make_vars(x.rank());
  std::vector<Expr> idx = onnx_index(vars);
  std::vector<Var> kept;  // Halide order
  std::vector<int64_t> kept_ext;
  Halide::Region dom;
  for (int64_t k = x.rank(); k-- > 0;) {
    if (k >= axis && k <= last) dom.push_back({0, i32(x.shape[k])});
    else kept.push_back(vars[x.rank() - 1 - k]), kept_ext.push_back(x.shape[k]);
  }
  RDom r(dom);
  std::vector<Expr> ridx = idx;
  for (int64_t k = axis; k <= last; ++k) ridx[k] = r[last - k];
  std::vector<Expr> kept_args(kept.begin(), kept.end());
  Func mx = cx.func(n, "max"), sum = cx.func(n, "sum"), f = cx.func(n);
  mx(kept) = Halide::maximum(read(x, ridx));
  sum(kept) = 0.0f;
  sum(kept) += Halide::exp(read(x, ridx) - mx(kept_args));
  Expr shifted = read(x, idx) - mx(kept_args);
  f(vars) = log ? shifted - Halide::log(sum(kept_args)) : Halide::exp(shifted) / sum(kept_args);
  schedule_reduction(mx, kept_ext, cx.target());
  schedule_reduction(sum, kept_ext, cx.target());
  LTensor t = make_tensor(f, x.shape);
  t.cheap = false;
  cx.define(n.outputs[0], std::move(t));
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  r["MatMul"] = matmul;
  r["Gemm"] = gemm;
  r["MaxPool"] = [](LoweringContext& cx, const ir::Node& n) { pool(cx, n, true); };
  r["AveragePool"] = [](LoweringContext& cx, const ir::Node& n) { pool(cx, n, false); };
  r["Softmax"] = [](LoweringContext& cx, const ir::Node& n) { softmax(cx, n, false); };
  r["LogSoftmax"] = [](LoweringContext& cx, const ir::Node& n) { softmax(cx, n, true); };
}

}  // namespace batchconv::compiler

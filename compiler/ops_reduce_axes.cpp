// Reductions over axes: the Reduce* ops (ir/reduce_axes.h), GlobalAveragePool
// and GlobalMaxPool. A mean, sum or max over the two spatial axes of a 4-D
// tensor on a CPU (torchvision's x.mean([2, 3]) and the global pools) is a
// global-pool stage of the layout plan: over a channels-innermost input it
// sums a vector of channels at a time, so the conv before it stays channels
// innermost. Other reductions are compute_root, vectorised along their
// innermost kept dimension (schedule_reduction).
#include <algorithm>
#include <set>

#include "ir/reduce_axes.h"
#include "ops.h"

namespace batchconv::compiler {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Var;
using ir::ReduceKind;

Expr i32(int64_t v) { return Expr(static_cast<int32_t>(v)); }

Expr halide_init(ReduceKind k) {
  switch (k) {
    case ReduceKind::Max: return Halide::Float(32).min();
    case ReduceKind::Min: return Halide::Float(32).max();
    case ReduceKind::Prod: return 1.0f;
    default: return 0.0f;
  }
}

Expr halide_step(ReduceKind k, Expr acc, Expr v) {
  switch (k) {
    case ReduceKind::Max: return Halide::max(acc, v);
    case ReduceKind::Min: return Halide::min(acc, v);
    case ReduceKind::Prod: return acc * v;
    case ReduceKind::SumSquare:
    case ReduceKind::L2: return acc + v * v;
    case ReduceKind::L1: return acc + Halide::abs(v);
    default: return acc + v;
  }
}

Expr halide_finish(ReduceKind k, Expr acc, int64_t count) {
  if (k == ReduceKind::Mean) return acc * (1.0f / static_cast<float>(count));
  if (k == ReduceKind::L2) return Halide::sqrt(acc);
  return acc;
}

// The reduction of the 4-D x over its spatial axes, as a global-pool stage
// the layout plan schedules (PoolStage::global). keep: (N, C, 1, 1), else (N, C).
void spatial_reduce(LoweringContext& cx, const ir::Node& n, const LTensor& x, ReduceKind kind, bool keep) {
  const int64_t H = x.shape[2], W = x.shape[3];
  RDom r(0, i32(W), 0, i32(H));
  std::vector<Var> vars = make_vars(4);  // x, y (extent 1), c, n
  Func f = cx.func(n, "acc");
  f(vars) = halide_init(kind);
  f(vars) = halide_step(kind, f(vars), read(x, {vars[3], vars[2], r.y, r.x}));
  const std::vector<int64_t> pooled{x.shape[0], x.shape[1], 1, 1};
  f.compute_root();
  const Halide::Target target = cx.target();
  PoolStage stage{&n, n.outputs[0], f, pooled, {}, true};
  stage.schedule = [f, r, pooled, target](bool channels_innermost) mutable {
    if (!channels_innermost) {
      schedule_reduction(f, reversed(pooled), target);
      return;
    }
    std::vector<Var> a = f.args();  // x, y (extent 1), c, n
    const int vec = target.natural_vector_size<float>();
    // Images, and channel blocks within them, in parallel: at batch 1 the
    // blocks are what spreads the map over the cores.
    const int block = static_cast<int>(std::max<int64_t>(vec, (pooled[1] + 7) / 8 / vec * vec));
    Var co("co"), ci("ci"), t("t");
    Halide::Stage u = f.update();
    f.split(a[2], co, ci, block, Halide::TailStrategy::GuardWithIf).reorder(ci, a[0], a[1], co, a[3]);
    u.split(a[2], co, ci, block, Halide::TailStrategy::GuardWithIf).reorder(ci, r[0], r[1], a[0], a[1], co, a[3]);
    for (Halide::Stage s : {Halide::Stage(f), u}) {
      s.fuse(co, a[3], t).parallel(t);
      if (pooled[1] >= vec) s.vectorize(ci, vec);
    }
  };
  cx.pool_stages.push_back(std::move(stage));
  const int64_t count = H * W;
  Func g = cx.func(n);
  std::vector<int64_t> shape{x.shape[0], x.shape[1]};
  if (keep) {
    g(vars) = halide_finish(kind, f(vars), count);
    shape.push_back(1), shape.push_back(1);
  } else {
    Var c("c"), b("b");
    g(c, b) = halide_finish(kind, f(0, 0, c, b), count);
  }
  LTensor t = make_tensor(g, shape);
  t.cheap = kind != ReduceKind::Mean && kind != ReduceKind::L2;
  cx.define(n.outputs[0], std::move(t));
}

void reduce(LoweringContext& cx, const ir::Node& n, ReduceKind kind) {
  const LTensor& x = cx.input(n, 0);
  const int64_t rank = x.rank();
  std::vector<int64_t> axes;
  bool have_axes = false;
  if (ir::reduce_axes_are_input(n.op_type, cx.opset(""))) {
    if (cx.optional_input(n, 1)) axes = cx.constant_ints(n, 1), have_axes = true;
  } else if (const ir::Attribute* a = n.attr("axes")) {
    axes = a->ints, have_axes = true;
  }
  const bool keep = n.attr_int("keepdims", 1) != 0;
  if (have_axes && axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0) {
    cx.define(n.outputs[0], x);
    return;
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    if (!reduced.insert(normalize_axis(cx, n, a, rank)).second)
      cx.fail(n, "axes lists axis " + std::to_string(a) + " twice");
  }
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) reduced.insert(k);
  int64_t count = 1;
  for (int64_t k : reduced) count *= x.shape[k];
  if (count == 0) cx.fail(n, "reduces an empty set (input of shape " + shape_str(x.shape) + ")");
  const bool pool_kind = kind == ReduceKind::Mean || kind == ReduceKind::Sum || kind == ReduceKind::Max;
  if (rank == 4 && reduced == std::set<int64_t>{2, 3} && pool_kind && !cx.target().has_gpu_feature()) {
    spatial_reduce(cx, n, x, kind, keep);
    return;
  }
  // General: kept dims are the pure vars, reduced dims an RDom (innermost first).
  std::vector<Var> vars = make_vars(static_cast<int>(rank));  // Halide order
  std::vector<Expr> idx = onnx_index(vars);
  Halide::Region dom;
  std::vector<int64_t> red_axes;
  for (int64_t k = rank; k-- > 0;)
    if (reduced.count(k)) dom.push_back({0, i32(x.shape[k])}), red_axes.push_back(k);
  RDom r(dom);
  std::vector<Var> kept;
  std::vector<int64_t> kept_ext;
  for (int64_t k = rank; k-- > 0;)
    if (!reduced.count(k)) kept.push_back(vars[rank - 1 - k]), kept_ext.push_back(x.shape[k]);
  std::vector<Expr> ridx = idx;
  for (size_t j = 0; j < red_axes.size(); ++j) ridx[red_axes[j]] = r[static_cast<int>(j)];
  Func acc = cx.func(n, "acc");
  acc(kept) = halide_init(kind);
  acc(kept) = halide_step(kind, acc(kept), read(x, ridx));
  if (kept.empty()) acc.compute_root();
  else schedule_reduction(acc, kept_ext, cx.target());
  std::vector<int64_t> shape;
  std::vector<Var> out_vars;  // Halide order
  std::vector<Expr> acc_args;
  for (int64_t k = rank; k-- > 0;) {
    if (!reduced.count(k)) out_vars.push_back(vars[rank - 1 - k]), acc_args.push_back(vars[rank - 1 - k]);
    else if (keep) out_vars.push_back(vars[rank - 1 - k]);
  }
  for (int64_t k = 0; k < rank; ++k) {
    if (!reduced.count(k)) shape.push_back(x.shape[k]);
    else if (keep) shape.push_back(1);
  }
  Func g = cx.func(n);
  g(out_vars) = halide_finish(kind, acc(acc_args), count);
  LTensor t = make_tensor(g, shape);
  t.cheap = kind != ReduceKind::Mean && kind != ReduceKind::L2;
  cx.define(n.outputs[0], std::move(t));
}

void global_pool(LoweringContext& cx, const ir::Node& n, ReduceKind kind) {
  const LTensor& x = cx.input(n, 0);
  if (x.rank() < 3) cx.fail(n, "input of shape " + shape_str(x.shape) + " has no spatial dims");
  int64_t count = 1;
  for (int i = 2; i < x.rank(); ++i) count *= x.shape[i];
  if (count == 0) cx.fail(n, "input of shape " + shape_str(x.shape) + " has an empty spatial extent");
  if (x.rank() == 4 && !cx.target().has_gpu_feature()) {
    spatial_reduce(cx, n, x, kind, true);
    return;
  }
  const int sp = x.rank() - 2;
  Halide::Region dom;
  for (int i = sp; i-- > 0;) dom.push_back({0, i32(x.shape[2 + i])});
  RDom r(dom);
  std::vector<Var> vars = make_vars(x.rank());
  std::vector<Expr> idx = onnx_index(vars), in_idx{idx[0], idx[1]};
  for (int i = 0; i < sp; ++i) in_idx.push_back(r[sp - 1 - i]);
  std::vector<int64_t> shape{x.shape[0], x.shape[1]};
  shape.resize(x.shape.size(), 1);
  Func f = cx.func(n, "acc");
  f(vars) = halide_init(kind);
  f(vars) = halide_step(kind, f(vars), read(x, in_idx));
  schedule_reduction(f, reversed(shape), cx.target());
  Func g = cx.func(n);
  g(vars) = halide_finish(kind, f(vars), count);
  LTensor t = make_tensor(g, shape);
  t.cheap = kind != ReduceKind::Mean;
  cx.define(n.outputs[0], std::move(t));
}

}  // namespace

void register_reduce_axes_ops(OpRegistry& r) {
  for (const ir::ReduceOp& op : ir::reduce_ops()) {
    const ReduceKind kind = op.kind;
    r[op.name] = [kind](LoweringContext& cx, const ir::Node& n) { reduce(cx, n, kind); };
  }
  r["GlobalAveragePool"] = [](LoweringContext& cx, const ir::Node& n) { global_pool(cx, n, ReduceKind::Mean); };
  r["GlobalMaxPool"] = [](LoweringContext& cx, const ir::Node& n) { global_pool(cx, n, ReduceKind::Max); };
}

}  // namespace batchconv::compiler

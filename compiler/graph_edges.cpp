#include "graph_edges.h"

#include <algorithm>
#include <map>
#include <set>

namespace batchconv::compiler {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

namespace {

// A channels-last edge (--edge-layout name=nhwc): the permutation from the
// caller's dims to ONNX's, perm[k] = the ONNX dim of the caller's dim k
// ((N, H, W, C) or (N, W, C)); "NHWC" / "NWC" in *layout. Throws naming the
// tensor when its rank has no channels-last form.
std::vector<int> channels_last_perm(const LoweringContext& cx, const std::string& what, const std::string& name,
                                    const std::vector<int64_t>& shape, std::string* layout) {
  if (shape.size() == 4) {
    *layout = "NHWC";
    return {0, 2, 3, 1};
  }
  if (shape.size() == 3) {
    *layout = "NWC";
    return {0, 2, 1};
  }
  throw Error(cx.origin() + ": --edge-layout " + name + "=nhwc: " + what + " '" + name + "' has shape " +
              shape_str(shape) + "; a channels-last edge needs a 4-D (N, C, H, W) or 3-D (N, C, W) tensor");
}

std::vector<int64_t> permuted(const std::vector<int64_t>& s, const std::vector<int>& perm) {
  std::vector<int64_t> out;
  for (int p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

}  // namespace

void lower_input(LoweringContext& cx, const ir::Value* v) {
  if (v->type.dtype != ir::DType::Float) {
    throw Error(cx.origin() + ": input '" + v->name + "' has type " + ir::dtype_name(v->type.dtype) +
                "; only float32 inputs are supported");
  }
  std::vector<int64_t> shape;
  for (const ir::Dim& d : *v->type.shape) shape.push_back(d.value);
  ParamInfo info;
  info.onnx_name = v->name;
  info.c_name = cx.unique_c_name(v->name);
  std::vector<int> perm;
  if (cx.options().channels_last_edges.count(v->name)) perm = channels_last_perm(cx, "input", v->name, shape, &info.layout);
  info.shape = perm.empty() ? shape : permuted(shape, perm);
  info.param = Halide::ImageParam(Halide::Float(32), static_cast<int>(shape.size()), info.c_name);
  // --dynamic-batch: dim 0 (the caller's too: channels-last keeps N first)
  // is the run-time batch, the first input's, the same for all.
  info.batched = cx.options().batch2_shapes != nullptr;
  const int batch_dim = info.batched ? static_cast<int>(shape.size()) - 1 : -1;
  constrain_dense(info.param, reversed(info.shape), batch_dim);
  if (info.batched) {
    if (!cx.batch().defined()) cx.set_batch(info.param.dim(batch_dim).extent());
    else info.param.dim(batch_dim).set_extent(cx.batch());
  }
  std::vector<Var> vars = make_vars(static_cast<int>(shape.size()));
  Func f(cx.unique_c_name("f_in_" + v->name));
  if (perm.empty()) {
    f(vars) = info.param(std::vector<Expr>(vars.begin(), vars.end()));
  } else {
    // The caller's dim k is ONNX dim perm[k]; both index lists in ONNX order, reversed for Halide.
    std::vector<Expr> onnx = onnx_index(vars), caller;
    for (int p : perm) caller.push_back(onnx[static_cast<size_t>(p)]);
    f(vars) = info.param(halide_args(caller));
    const int vec = cx.target().natural_vector_size<float>();
    if (cx.options().stored_input_edges.count(v->name)) {
      // A channels-innermost result of an earlier model part: its readers
      // read it in place, as they would the stage that stored it.
    } else if (!cx.target().has_gpu_feature()) {
      // Read once into NCHW, in tiles (channels-last reads, x-vector writes).
      f.compute_root();
      Var c = vars[vars.size() - 2], x = vars[0];
      if (shape.size() == 4) {
        Var xi("xi"), ci("ci");
        f.tile(x, c, xi, ci, vec, vec, Halide::TailStrategy::GuardWithIf).vectorize(xi).unroll(ci);
        f.parallel(vars[1]);  // rows
      } else {
        f.vectorize(x, vec, Halide::TailStrategy::GuardWithIf).parallel(c);
      }
    } else {
      schedule_reduction(f, reversed(shape), cx.target());
    }
  }
  cx.define(v, make_tensor(f, shape));
  cx.inputs.push_back(std::move(info));
}


// The graph outputs whose own stage (a conv's storage, a compute_root or
// inlined Func) the computation of another graph output reads. Such an
// output is written through a copy: Halide loads a stage with aligned vector
// loads wherever it stores it, and from a caller's buffer with 16-byte
// alignment (malloc's) that was a crash (a Conv or Add output read by a
// Sigmoid output).
namespace {

std::set<const ir::Value*> outputs_read_by_others(const LoweringContext& cx, const std::vector<ir::Value*>& outputs) {
  std::vector<std::map<std::string, Halide::Internal::Function>> reads;
  for (const ir::Value* v : outputs) {
    const LTensor& t = cx.at(v);
    reads.push_back(t.f.defined() ? Halide::Internal::find_transitive_calls(t.f.function())
                                  : std::map<std::string, Halide::Internal::Function>{});
  }
  std::set<const ir::Value*> out;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const LTensor& t = cx.at(outputs[j]);
    std::vector<std::string> own;
    if (t.storage) own.push_back(t.storage->name());
    if (t.f.defined()) own.push_back(t.f.name());
    for (size_t k = 0; k < outputs.size(); ++k)
      for (const std::string& name : own)
        if (k != j && reads[k].count(name)) out.insert(outputs[j]);
  }
  return out;
}

// copy: write the output through a Func of its own (outputs_read_by_others).
void lower_output(LoweringContext& cx, const ir::Value* v, std::vector<std::string>& used, bool copy) {
  const LTensor& t = cx.at(v);
  OutputInfo o;
  o.onnx_name = v->name;
  o.c_name = cx.unique_c_name(v->name);
  o.shape = t.shape;
  auto unused = [&](const Func& f) { return std::find(used.begin(), used.end(), f.name()) == used.end(); };
  const bool channels_last = cx.options().channels_last_edges.count(v->name) > 0;
  if (channels_last && t.rank() == 4 && t.storage && t.storage_extents.size() == 6 && unused(*t.storage) && !copy &&
      !t.batched) {
    // A 2-D conv's result written channels-last: its storage (x, y, c, g,
    // n, b) is computed straight into the caller's NHWC memory, with the
    // strides of that order (the channel (g, c) innermost).
    std::string layout;
    o.shape = permuted(t.shape, channels_last_perm(cx, "output", v->name, t.shape, &layout));
    o.layout = layout;
    o.func = *t.storage;
    o.internal_extents = t.storage_extents;
    const std::vector<int64_t>& e = t.storage_extents;  // W, H, cout_g, G, N, B
    const int64_t C = e[2] * e[3];
    o.internal_strides = {C, C * e[0], 1, e[2], C * e[0] * e[1], C * e[0] * e[1] * e[4]};
  } else if (channels_last) {
    // Written channels-last: the caller's dim k is ONNX dim perm[k].
    const std::vector<int> perm = channels_last_perm(cx, "output", v->name, t.shape, &o.layout);
    o.shape = permuted(t.shape, perm);
    std::vector<Var> vars = make_vars(t.rank());
    std::vector<Expr> caller = onnx_index(vars), onnx(caller.size());
    for (size_t k = 0; k < perm.size(); ++k) onnx[static_cast<size_t>(perm[k])] = caller[k];
    o.func = Func(cx.unique_c_name("f_out_" + v->name));
    o.func(vars) = t.f(halide_args(onnx));
    o.internal_extents = reversed(o.shape);
  } else if (t.storage && unused(*t.storage) && !copy && (!t.batched || t.storage_batch_dim >= 0)) {
    o.func = *t.storage;  // computed straight into the caller's memory
    o.internal_extents = t.storage_extents;
    if (t.batched) o.batch_dim = t.storage_batch_dim;
  } else if (!t.constant && unused(t.f) && t.f.defined() && !copy) {
    o.func = t.f;
    o.internal_extents = reversed(t.shape);
  } else {
    std::vector<Var> vars = make_vars(t.rank());
    o.func = Func(cx.unique_c_name("f_out_" + v->name));
    o.func(vars) = t.f(std::vector<Expr>(vars.begin(), vars.end()));
    o.internal_extents = reversed(t.shape);
  }
  if (t.batched && o.batch_dim < 0) o.batch_dim = static_cast<int>(o.internal_extents.size()) - 1;
  used.push_back(o.func.name());
  // An output that is not already a scheduled stage (a conv's storage, a
  // reduction) is computed by its own loops: parallel and vectorised, or
  // on the GPU, like a reduction's.
  Halide::LoopLevel level = o.func.function().schedule().compute_level();
  level.lock();  // (compute_root and compute_at replace the level; locking this one changes nothing)
  if (!level.is_root()) schedule_reduction(o.func, o.internal_extents, cx.target());
  if (o.internal_strides.empty()) {
    constrain_dense(o.func.output_buffer(), o.internal_extents, o.batch_dim);
  } else {
    Halide::OutputImageParam b = o.func.output_buffer();
    for (size_t k = 0; k < o.internal_extents.size(); ++k)
      b.dim(static_cast<int>(k)).set_bounds(0, static_cast<int>(o.internal_extents[k]))
          .set_stride(static_cast<int>(o.internal_strides[k]));
  }
  cx.outputs.push_back(std::move(o));
}

}  // namespace

void lower_outputs(LoweringContext& cx, const std::vector<ir::Value*>& outputs) {
  std::vector<std::string> used;
  const std::set<const ir::Value*> copied = outputs_read_by_others(cx, outputs);
  for (const ir::Value* v : outputs) lower_output(cx, v, used, copied.count(v) > 0);
}

}  // namespace batchconv::compiler

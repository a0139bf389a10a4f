#include "lowering_context.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "dynamic_batch.h"

namespace batchconv::compiler {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

int64_t numel(const std::vector<int64_t>& s) {
  ir::Tensor t;  // the IR's count: -1 for a negative dim, INT64_MAX on overflow
  t.shape = s;
  return t.numel();
}

int64_t LTensor::numel() const { return compiler::numel(shape); }

LoweringContext::LoweringContext(const ir::Model& model, const std::string& origin, const LowerOptions& options)
    : model_(model), origin_(origin), options_(options) {}

std::string LoweringContext::where(const ir::Node& n) const { return origin_ + ": node " + ir::describe(&n); }

void LoweringContext::fail(const ir::Node& n, const std::string& what) const { throw Error(where(n) + ": " + what); }

const LTensor& LoweringContext::at(const ir::Value* v) const {
  auto it = values_.find(v);
  if (it == values_.end()) throw Error(origin_ + ": value '" + v->name + "' is used before it is defined");
  return it->second;
}

void LoweringContext::define(const ir::Value* v, LTensor t) {
  if (options_.batch2_shapes && batch_dependent.count(v)) check_batched(*this, v, t);
  values_[v] = std::move(t);
}

const LTensor* LoweringContext::optional_input(const ir::Node& n, size_t k) const {
  if (k >= n.inputs.size() || n.inputs[k] == nullptr || n.inputs[k]->name.empty()) return nullptr;
  return &at(n.inputs[k]);
}

const LTensor& LoweringContext::input(const ir::Node& n, size_t k) const {
  const LTensor* t = optional_input(n, k);
  if (!t) fail(n, "input " + std::to_string(k) + " is missing");
  return *t;
}

std::vector<int64_t> LoweringContext::constant_ints(const ir::Node& n, size_t k) const {
  const LTensor& t = input(n, k);
  if (!t.constant) {
    fail(n, "input " + std::to_string(k) + " ('" + n.inputs[k]->name +
                "') must be known at compile time (a constant or initializer)");
  }
  const ir::Tensor& c = *t.constant;
  if (c.is_float()) {
    std::vector<int64_t> out;
    for (float f : c.f) {
      if (!ir::fits_int64(f))
        fail(n, "input " + std::to_string(k) + " ('" + n.inputs[k]->name + "') holds " + std::to_string(f) +
                    ", expected integers in int64's range");
      out.push_back(static_cast<int64_t>(f));
    }
    return out;
  }
  return c.i;
}

std::string LoweringContext::unique_c_name(const std::string& base) {
  std::string s;
  for (char ch : base) s += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  std::string name = s;
  for (int k = 1; names_.count(name); ++k) name = s + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

Func LoweringContext::func(const ir::Node& n, const std::string& suffix) {
  std::string base = n.name.empty() ? n.op_type : n.name;
  return Func(unique_c_name("f_" + base + (suffix.empty() ? "" : "_" + suffix)));
}

std::vector<Var> make_vars(int rank) {
  std::vector<Var> v;
  for (int k = 0; k < rank; ++k) v.emplace_back("i" + std::to_string(k));
  return v;
}

std::vector<Expr> halide_args(const std::vector<Expr>& onnx_idx) {
  return std::vector<Expr>(onnx_idx.rbegin(), onnx_idx.rend());
}

Expr read(const LTensor& t, const std::vector<Expr>& onnx_idx) { return t.f(halide_args(onnx_idx)); }

std::vector<Expr> onnx_index(const std::vector<Var>& vars) {
  return std::vector<Expr>(vars.rbegin(), vars.rend());
}

LTensor make_tensor(Func f, std::vector<int64_t> shape) {
  LTensor t;
  t.f = std::move(f);
  t.shape = std::move(shape);
  return t;
}

LTensor constant_tensor(const ir::Tensor& t, const std::string& name) {
  std::vector<int> extents;
  for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) extents.push_back(static_cast<int>(*it));
  Halide::Buffer<float> buf(extents, name);
  const int64_t n = t.numel();
  const size_t have = t.is_float() ? t.f.size() : t.i.size();
  if (n < 0 || static_cast<int64_t>(have) != n)
    throw Error(name + ": a constant of type " + ir::dtype_name(t.dtype) + " whose data the compiler cannot read");
  float* p = buf.data();
  for (int64_t k = 0; k < n; ++k) p[k] = t.is_float() ? t.f[k] : static_cast<float>(t.i[k]);
  LTensor out;
  out.f = Func(name + "_c");
  std::vector<Var> v = make_vars(static_cast<int>(t.shape.size()));
  std::vector<Expr> args(v.begin(), v.end());
  out.f(v) = buf(args);
  out.shape = t.shape;
  out.constant = t;
  return out;
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      throw std::invalid_argument("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    }
    out[k] = da == 1 ? db : da;
  }
  return out;
}

Expr read_broadcast(const LTensor& t, const std::vector<int64_t>& out_shape, const std::vector<Expr>& out_idx) {
  const size_t off = out_shape.size() - t.shape.size();
  std::vector<Expr> idx;
  for (size_t k = 0; k < t.shape.size(); ++k) {
    idx.push_back(t.shape[k] == 1 && !(k == 0 && t.batched) ? Expr(0) : out_idx[k + off]);
  }
  return read(t, idx);
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "(";
  for (size_t k = 0; k < s.size(); ++k) os << (k ? ", " : "") << s[k];
  os << ")";
  return os.str();
}

int64_t normalize_axis(const LoweringContext& cx, const ir::Node& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    cx.fail(n, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

namespace {

// On a GPU: every stage one kernel, all of its pure dimensions fused into
// one loop over threads (kGpuBlock per block), each thread running the
// stage's reduction loops for its element; a scalar runs on one thread.
void schedule_root_gpu(Func f) {
  constexpr int kGpuBlock = 128;
  std::vector<Var> args = f.args();
  auto apply = [&](Halide::Stage s) {
    if (args.empty()) {
      s.gpu_single_thread();
      return;
    }
    Var t = args[0];
    for (size_t k = 1; k < args.size(); ++k) {
      Var fused(t.name() + "_" + args[k].name());
      s.fuse(t, args[k], fused);
      t = fused;
    }
    Var block(t.name() + "_b"), thread(t.name() + "_t");
    s.gpu_tile(t, block, thread, kGpuBlock, Halide::TailStrategy::GuardWithIf);
  };
  apply(f);
  for (int k = 0; k < f.num_update_definitions(); ++k) apply(f.update(k));
}

}  // namespace

void schedule_reduction(Func f, const std::vector<int64_t>& ext, const Halide::Target& target) {
  f.compute_root();
  if (target.has_gpu_feature()) {
    schedule_root_gpu(f);
    return;
  }
  const int vec = target.natural_vector_size<float>();
  std::vector<Var> args = f.args();
  auto apply = [&](Halide::Stage s) {
    if (args.empty()) return;
    // Narrow rows (a 14 x 14 map) are fused with the next dimensions until
    // the innermost loop holds a few vectors: one 14-wide row per task was
    // scalar code in 28,672 tasks for a ResNeXt block's output, 5.4 ms for
    // 1.6 MB.
    Var inner = args[0];
    int64_t inner_extent = ext[0];
    size_t next = 1;
    // (Reductions keep their rows: fusing the pure dims of an update stage
    // made Halide 14 write out of bounds on a 5 x 9 Gemm.)
    while (inner_extent < 4 * vec && next < args.size() && f.num_update_definitions() == 0) {
      Var fused(inner.name() + "_" + args[next].name());
      s.fuse(inner, args[next], fused);
      inner = fused;
      inner_extent *= ext[next++];
    }
    if (inner_extent >= vec) s.vectorize(inner, vec, Halide::TailStrategy::GuardWithIf);
    if (next < args.size()) {
      // Fuse every outer dimension into one parallel loop, in tasks of at
      // least 16K elements.
      Var t = args[next];
      for (size_t k = next + 1; k < args.size(); ++k) {
        Var fused(t.name() + "_" + args[k].name());
        s.fuse(t, args[k], fused);
        t = fused;
      }
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner_extent));
      if (grain > 1) s.parallel(t, static_cast<int>(grain), Halide::TailStrategy::GuardWithIf);
      else s.parallel(t);
    }
  };
  apply(f);
  for (int k = 0; k < f.num_update_definitions(); ++k) apply(f.update(k));
}

std::vector<int64_t> reversed(std::vector<int64_t> s) {
  std::reverse(s.begin(), s.end());
  return s;
}

void constrain_dense(Halide::OutputImageParam p, const std::vector<int64_t>& halide_extents, int batch_dim) {
  Expr stride = 1;
  for (size_t k = 0; k < halide_extents.size(); ++k) {
    if (int(k) == batch_dim) {
      p.dim(int(k)).set_min(0);
      p.dim(int(k)).set_stride(stride);
      stride = stride * p.dim(int(k)).extent();
    } else {
      p.dim(int(k)).set_bounds(0, static_cast<int32_t>(halide_extents[k]));
      p.dim(int(k)).set_stride(stride);
      stride = stride * static_cast<int32_t>(halide_extents[k]);
    }
  }
}

Expr last_index(const LoweringContext& cx, const LTensor& t, size_t d) {
  if (d == 0 && t.batched && cx.batch().defined()) return cx.batch() - 1;
  return static_cast<int32_t>(t.shape[d] - 1);
}

}  // namespace batchconv::compiler

// Which of ONNX 1.12's inference functions run on files from strangers, and
// the checks in front of them. Those functions index shapes and attribute
// vectors by the ranks they expect without checking them (Gemm at opset 6 with
// a rank-0 B, STFT with a scalar signal, a Conv whose X rank is only known
// after inference: each a crash, not an exception). So:
//  - only the ops the project reads keep their inference function
//    (kInferredOps; a test keeps it equal to the interpreter's ops), each
//    read for what it assumes, with checks in front: every input a tensor
//    of sane dims (check_inputs), and per op (checks()) what its function
//    assumes without checking. A failed check is an InferenceError,
//    which inference in error mode 0 records and skips; the importer then
//    reports the node by name (check_ranks) or leaves its types unknown;
//  - every other op's function (every version, every domain) is replaced by
//    one that infers nothing: such outputs keep the types the file states.
//    The compiler refuses those ops anyway, and the rewrites pass them through.
// Installed once per process, in ONNX's schema registry (whose entries are
// ordinary objects handed out as const).
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "onnx/convert.h"

namespace batchconv::io {

namespace {

using Check = std::function<void(onnx::InferenceContext&)>;

int rank_of(onnx::InferenceContext& ctx, int i) {
  if (i < 0 || static_cast<size_t>(i) >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* t = ctx.getInputType(static_cast<size_t>(i));
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

// Conv and pool ops: X (input x) of rank >= 3, W (input w, or -1) of X's
// rank, and the spatial attributes of rank - 2 entries (pads 2 (rank - 2)).
Check conv_like(int x, int w) {
  return [x, w](onnx::InferenceContext& ctx) {
    const int rx = rank_of(ctx, x), rw = rank_of(ctx, w);
    if (rx >= 0 && rx < 3) fail_shape_inference("X has rank ", rx, ", expected (N, C, spatial...)");
    if (rx >= 0 && rw >= 0 && rx != rw) fail_shape_inference("X has rank ", rx, " but W has rank ", rw);
    if (rw >= 0 && rw < 3) fail_shape_inference("W has rank ", rw, ", expected (M, C/group, kernel...)");
    const int r = rx >= 0 ? rx : rw;
    if (r < 0) {
      // Nothing to compare against: only attributes that agree with each other.
      const onnx::AttributeProto* ks = ctx.getAttribute("kernel_shape");
      if (!ks) return;
      const int s = ks->ints_size();
      for (const char* name : {"strides", "dilations", "output_padding", "output_shape"})
        if (const auto* a = ctx.getAttribute(name); a && a->ints_size() != s)
          fail_shape_inference(name, " has ", a->ints_size(), " entries but kernel_shape has ", s);
      if (const auto* a = ctx.getAttribute("pads"); a && a->ints_size() != 2 * s)
        fail_shape_inference("pads has ", a->ints_size(), " entries, expected ", 2 * s);
      return;
    }
    const int s = r - 2;
    for (const char* name : {"kernel_shape", "strides", "dilations", "output_padding", "output_shape"})
      if (const auto* a = ctx.getAttribute(name); a && a->ints_size() != s)
        fail_shape_inference(name, " has ", a->ints_size(), " entries, expected ", s, " for rank ", r);
    if (const auto* a = ctx.getAttribute("pads"); a && a->ints_size() != 2 * s)
      fail_shape_inference("pads has ", a->ints_size(), " entries, expected ", 2 * s, " for rank ", r);
  };
}

// Inputs whose rank, where known, must be exactly `rank`.
Check exact_ranks(std::vector<int> inputs, int rank) {
  return [inputs, rank](onnx::InferenceContext& ctx) {
    for (int i : inputs)
      if (const int r = rank_of(ctx, i); r >= 0 && r != rank)
        fail_shape_inference("input ", i, " has rank ", r, ", expected ", rank);
  };
}

// Every inferred op reads tensors only (ONNX counts a sparse, sequence or
// optional type as a shape of rank 0), of ranks up to 64 and dims from 0 to
// 2^40 (no tensor of more elements in one dim runs anywhere). Inference
// makes larger ones (Expand of a constant 2^62, negative dims from a
// Constant) that later functions loop over or multiply.
constexpr int64_t kMaxInferredDim = int64_t(1) << 40;
constexpr int kMaxInferredRank = 64;

void check_inputs(onnx::InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TypeProto* t = ctx.getInputType(i);
    if (!t || t->value_case() == onnx::TypeProto::VALUE_NOT_SET) continue;
    if (!t->has_tensor_type()) fail_type_inference("input ", i, " is not a tensor");
    if (!t->tensor_type().has_shape()) continue;
    const auto& shape = t->tensor_type().shape();
    if (shape.dim_size() > kMaxInferredRank)
      fail_shape_inference("input ", i, " has rank ", shape.dim_size(), ", more than ", kMaxInferredRank);
    for (const auto& d : shape.dim())
      if (d.has_dim_value() && (d.dim_value() < 0 || d.dim_value() > kMaxInferredDim))
        fail_shape_inference("input ", i, " has dim ", d.dim_value(), ", expected 0 to ", kMaxInferredDim);
  }
}

// The int64 entries of a constant input, or false when it has none.
bool constant_ints(onnx::InferenceContext& ctx, int i, std::vector<int64_t>& out) {
  if (i < 0 || static_cast<size_t>(i) >= ctx.getNumInputs()) return false;
  const onnx::TensorProto* t = ctx.getInputData(static_cast<size_t>(i));
  if (!t || t->data_type() != onnx::TensorProto::INT64) return false;
  out.clear();
  if (t->has_raw_data()) {
    const std::string& raw = t->raw_data();
    if (raw.size() % sizeof(int64_t)) fail_shape_inference("input ", i, " has raw data of ", raw.size(), " bytes");
    out.resize(raw.size() / sizeof(int64_t));
    if (!out.empty()) std::memcpy(out.data(), raw.data(), raw.size());
  } else {
    out.assign(t->int64_data().begin(), t->int64_data().end());
  }
  return true;
}

// Reshape multiplies the input's dims and the target's entries without
// checking for overflow (a product of 2^63 wraps, then INT64_MIN % -1 traps).
void check_reshape(onnx::InferenceContext& ctx) {
  std::vector<int64_t> target;
  if (!constant_ints(ctx, 1, target)) return;
  int64_t product = 1;
  for (int64_t v : target) {
    if (v < -1) fail_shape_inference("shape entry ", v, ", expected -1 or more");
    if (v > 0 && __builtin_mul_overflow(product, v, &product))
      fail_shape_inference("the shape's entries multiply past int64");
  }
  if (rank_of(ctx, 0) < 0) return;
  product = 1;
  for (const auto& d : ctx.getInputType(0)->tensor_type().shape().dim())
    if (d.has_dim_value() && __builtin_mul_overflow(product, d.dim_value(), &product))
      fail_shape_inference("the input's dims multiply past int64");
}

// Expand and ConstantOfShape give their output one dim per entry of a shape
// input; without constant data ONNX allocates that many from its length.
Check shape_input(int i) {
  return [i](onnx::InferenceContext& ctx) {
    const onnx::TypeProto* t = static_cast<size_t>(i) < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return;
    const auto& shape = t->tensor_type().shape();
    if (shape.dim_size() == 1 && shape.dim(0).has_dim_value() && shape.dim(0).dim_value() > kMaxInferredRank)
      fail_shape_inference("the shape input has ", shape.dim(0).dim_value(), " entries, more than ", kMaxInferredRank);
  };
}

// Conv and pools with auto_pad SAME_* (before opsets 11 and 12's rewrites)
// loop over the output positions of each spatial dim: bounded here.
Check bounded_auto_pad(Check inner) {
  return [inner](onnx::InferenceContext& ctx) {
    inner(ctx);
    const onnx::AttributeProto* a = ctx.getAttribute("auto_pad");
    if (!a || a->s() == "NOTSET" || a->s() == "VALID" || rank_of(ctx, 0) < 3) return;
    constexpr int64_t kMaxPositions = int64_t(1) << 26;
    const auto& shape = ctx.getInputType(0)->tensor_type().shape();
    for (int k = 2; k < shape.dim_size(); ++k)
      if (shape.dim(k).has_dim_value() && shape.dim(k).dim_value() > kMaxPositions)
        fail_shape_inference("spatial dim ", shape.dim(k).dim_value(), " with auto_pad ", a->s(), " is over ",
                             kMaxPositions);
  };
}

const std::unordered_map<std::string, Check>& checks() {
  static const std::unordered_map<std::string, Check> table = {
      {"Conv", bounded_auto_pad(conv_like(0, 1))},
      {"MaxPool", bounded_auto_pad(conv_like(0, -1))},
      {"AveragePool", bounded_auto_pad(conv_like(0, -1))},
      {"GlobalAveragePool", conv_like(0, -1)},
      {"GlobalMaxPool", conv_like(0, -1)},
      // Gemm before opset 11 reads dim(1) of A and B whatever their rank.
      {"Gemm", exact_ranks({0, 1}, 2)},
      {"Reshape", check_reshape},
      {"Expand", shape_input(1)},
      {"ConstantOfShape", shape_input(0)},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& inferred_ops() {
  static const std::vector<std::string> ops = {
      "Abs", "Add", "AveragePool", "BatchNormalization", "Cast", "Clip", "Concat", "Constant", "ConstantOfShape",
      "Conv", "Div", "Equal", "Erf", "Exp", "Expand", "Flatten", "Gather", "Gemm", "GlobalAveragePool",
      "GlobalMaxPool", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu", "Log", "LogSoftmax", "MatMul", "Max",
      "MaxPool", "Min", "Mul", "Neg", "Pow", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceMax", "ReduceMean",
      "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Shape", "Sigmoid", "Slice",
      "Softmax", "Softplus", "Split", "Sqrt", "Squeeze", "Sub", "Tanh", "Tile", "Transpose", "Unsqueeze", "Where"};
  return ops;
}

void install_inference_guards() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::unordered_map<std::string, bool> inferred;
    for (const std::string& op : inferred_ops()) inferred[op] = true;
    for (const onnx::OpSchema& copy : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(copy.Name(), copy.SinceVersion(), copy.domain());
      if (!s || s->SinceVersion() != copy.SinceVersion()) continue;
      auto* schema = const_cast<onnx::OpSchema*>(s);
      const bool standard = s->domain().empty() || s->domain() == "ai.onnx";
      if (!standard || !inferred.count(s->Name())) {
        schema->TypeAndShapeInferenceFunction([](onnx::InferenceContext&) {});
        continue;
      }
      if (!s->has_type_and_shape_inference_function()) continue;
      auto found = checks().find(s->Name());
      Check check = found == checks().end() ? Check() : found->second;
      onnx::InferenceFunction inner = s->GetTypeAndShapeInferenceFunction();
      schema->TypeAndShapeInferenceFunction([inner, check](onnx::InferenceContext& ctx) {
        check_inputs(ctx);
        if (check) check(ctx);
        inner(ctx);
      });
    }
  });
}

}  // namespace batchconv::io

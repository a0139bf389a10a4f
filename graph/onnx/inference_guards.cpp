// Which of ONNX 1.12's inference functions run on files from strangers, and
// the checks in front of them. Those functions index shapes and attribute
// vectors by the ranks they expect without checking them (Gemm at opset 6 with
// a rank-0 B, STFT with a scalar signal, a Conv whose X rank is only known
// after inference: each a crash, not an exception). So:
//  - only the ops the project reads keep their inference function
//    (kInferredOps; a test keeps it equal to the interpreter's ops), each
//    read for what it assumes, with a check (kChecks) in front where it
//    assumes what it does not check. A failed check is an InferenceError,
//    which inference in error mode 0 records and skips; the importer then
//    reports the node by name (check_ranks) or leaves its types unknown;
//  - every other op's function (every version, every domain) is replaced by
//    one that infers nothing: such outputs keep the types the file states.
//    The compiler refuses those ops anyway, and the rewrites pass them through.
// Installed once per process, in ONNX's schema registry (whose entries are
// ordinary objects handed out as const).
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

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

const std::unordered_map<std::string, Check>& checks() {
  static const std::unordered_map<std::string, Check> table = {
      {"Conv", conv_like(0, 1)},
      {"MaxPool", conv_like(0, -1)},
      {"AveragePool", conv_like(0, -1)},
      {"GlobalAveragePool", conv_like(0, -1)},
      {"GlobalMaxPool", conv_like(0, -1)},
      // Gemm before opset 11 reads dim(1) of A and B whatever their rank.
      {"Gemm", exact_ranks({0, 1}, 2)},
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
      auto check = checks().find(s->Name());
      if (check == checks().end() || !s->has_type_and_shape_inference_function()) continue;
      onnx::InferenceFunction inner = s->GetTypeAndShapeInferenceFunction();
      schema->TypeAndShapeInferenceFunction([inner, check = check->second](onnx::InferenceContext& ctx) {
        check(ctx);
        inner(ctx);
      });
    }
  });
}

}  // namespace batchconv::io

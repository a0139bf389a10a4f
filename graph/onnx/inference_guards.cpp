// Guards around ONNX 1.12's conv/pool shape inference, which indexes its
// attribute vectors by the rank of W or kernel_shape without checking that
// they agree with the rank of X (an out-of-bounds read, then a crash, when X's
// rank is only known during inference, e.g. x of rank 3 through a Relu into a
// Conv with a 4-D W). Each schema's inference function is wrapped once by a
// check that fails inference for that node (an InferenceError, which
// inference in error mode 0 records and skips) when the ranks disagree; the
// importer then reports the node by name (check_ranks).
#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <mutex>
#include <set>
#include <string>

#include "onnx/convert.h"

namespace batchconv::io {

namespace {

struct Guarded {
  const char* op;
  int x;  // input index of X
  int w;  // input index of W, or -1
};

constexpr Guarded kGuarded[] = {
    {"Conv", 0, 1},        {"ConvTranspose", 0, 1}, {"ConvInteger", 0, 1}, {"QLinearConv", 0, 3},
    {"MaxPool", 0, -1},    {"AveragePool", 0, -1},  {"LpPool", 0, -1},     {"MaxUnpool", 0, -1},
    {"GlobalAveragePool", 0, -1}, {"GlobalMaxPool", 0, -1}, {"GlobalLpPool", 0, -1}};

int rank_of(onnx::InferenceContext& ctx, int i) {
  if (i < 0 || static_cast<size_t>(i) >= ctx.getNumInputs()) return -1;
  const onnx::TypeProto* t = ctx.getInputType(static_cast<size_t>(i));
  if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

void check(onnx::InferenceContext& ctx, const Guarded& g) {
  const int rx = rank_of(ctx, g.x), rw = rank_of(ctx, g.w);
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
}

}  // namespace

void install_inference_guards() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::set<const onnx::OpSchema*> done;
    const int max_opset = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
    for (const Guarded& g : kGuarded) {
      for (int v = 1; v <= max_opset; ++v) {
        const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(g.op, v, "");
        if (!s || !done.insert(s).second || !s->has_type_and_shape_inference_function()) continue;
        onnx::InferenceFunction inner = s->GetTypeAndShapeInferenceFunction();
        // The registry hands out const schemas; its entries are ordinary objects.
        const_cast<onnx::OpSchema*>(s)->TypeAndShapeInferenceFunction(
            [inner, g](onnx::InferenceContext& ctx) {
              check(ctx, g);
              inner(ctx);
            });
      }
    }
  });
}

}  // namespace batchconv::io

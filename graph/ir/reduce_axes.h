// The ONNX Reduce* ops, written once for the interpreter and the compiler:
// their names, how each combines values, and where its axes come from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace batchconv::ir {

enum class ReduceKind { Mean, Sum, Max, Min, Prod, SumSquare, L1, L2 };

struct ReduceOp {
  const char* name;  // "ReduceMean"
  ReduceKind kind;
};
const std::vector<ReduceOp>& reduce_ops();
const ReduceOp* find_reduce_op(const std::string& op_type);

// ReduceSum takes its axes as the second input from opset 13, the other
// Reduce ops from opset 18; before that, as the `axes` attribute.
bool reduce_axes_are_input(const std::string& op_type, int64_t opset);

// The accumulation in double: acc = init; acc = step(acc, v) per value;
// result = finish(acc, count of values).
double reduce_init(ReduceKind k);
double reduce_step(ReduceKind k, double acc, double v);
double reduce_finish(ReduceKind k, double acc, int64_t count);

}  // namespace batchconv::ir

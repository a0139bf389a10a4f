#include "ir/reduce_axes.h"

#include <cmath>
#include <limits>

namespace batchconv::ir {

const std::vector<ReduceOp>& reduce_ops() {
  static const std::vector<ReduceOp> ops = {
      {"ReduceMean", ReduceKind::Mean}, {"ReduceSum", ReduceKind::Sum},
      {"ReduceMax", ReduceKind::Max},   {"ReduceMin", ReduceKind::Min},
      {"ReduceProd", ReduceKind::Prod}, {"ReduceSumSquare", ReduceKind::SumSquare},
      {"ReduceL1", ReduceKind::L1},     {"ReduceL2", ReduceKind::L2},
  };
  return ops;
}

const ReduceOp* find_reduce_op(const std::string& op_type) {
  for (const ReduceOp& op : reduce_ops())
    if (op_type == op.name) return &op;
  return nullptr;
}

bool reduce_axes_are_input(const std::string& op_type, int64_t opset) {
  return opset >= (op_type == "ReduceSum" ? 13 : 18);
}

double reduce_init(ReduceKind k) {
  switch (k) {
    case ReduceKind::Max: return -std::numeric_limits<double>::infinity();
    case ReduceKind::Min: return std::numeric_limits<double>::infinity();
    case ReduceKind::Prod: return 1.0;
    default: return 0.0;
  }
}

double reduce_step(ReduceKind k, double acc, double v) {
  switch (k) {
    case ReduceKind::Max: return std::fmax(acc, v);
    case ReduceKind::Min: return std::fmin(acc, v);
    case ReduceKind::Prod: return acc * v;
    case ReduceKind::SumSquare:
    case ReduceKind::L2: return acc + v * v;
    case ReduceKind::L1: return acc + std::fabs(v);
    default: return acc + v;
  }
}

double reduce_finish(ReduceKind k, double acc, int64_t count) {
  switch (k) {
    case ReduceKind::Mean: return count > 0 ? acc / static_cast<double>(count) : std::nan("");
    case ReduceKind::L2: return std::sqrt(acc);
    default: return acc;
  }
}

}  // namespace batchconv::ir

// The elementwise ops' arithmetic, shared by their own lowering
// (ops_elementwise.cpp) and by a conv's epilogue (fusion_plan.h): binary
// arithmetic with numpy broadcasting, activations, Clip and inference-mode
// BatchNormalization (a per-channel affine map).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lowering_context.h"

namespace batchconv::compiler {

// One element of an elementwise node's output.
struct ElementwiseOp {
  // Inputs 0 .. operands-1 are read at the element (numpy broadcasting);
  // the rest are parameters the op reads itself (Clip's bounds, the
  // BatchNormalization statistics).
  size_t operands = 1;
  // values: the operands at the element; idx: the element's ONNX index.
  std::function<Halide::Expr(const std::vector<Halide::Expr>& values, const std::vector<Halide::Expr>& idx)> at;
};

// Whether n is an op elementwise_op lowers (by op type alone: the fusion
// plan asks before any input is lowered).
bool is_elementwise(const ir::Node& n);
// Every op type is_elementwise accepts.
std::vector<std::string> elementwise_op_types();
// Its inputs read per element (the others are parameters).
size_t elementwise_operands(const ir::Node& n);

// The op's arithmetic; its parameters must be lowered. Fails naming the
// node on a bad parameter (Clip bounds that are not scalar constants, a
// BatchNormalization in training mode or with statistics of the wrong
// shape for `shape`, the output's).
ElementwiseOp elementwise_op(LoweringContext& cx, const ir::Node& n, const std::vector<int64_t>& shape);

}  // namespace batchconv::compiler

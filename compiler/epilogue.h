// A producer's epilogue as it is lowered: the elementwise nodes the fusion
// plan (fusion_plan.h) put after a conv, Gemm or MatMul, applied to each
// value the producer stores.
#pragma once

#include <string>
#include <vector>

#include "lowering_context.h"

namespace batchconv::compiler {

struct Epilogue {
  std::vector<const ir::Node*> nodes;
  const ir::Value* producer_value = nullptr;  // the producer's output, the chain's first value

  // The chain's arithmetic on `value`, the producer's element (each node
  // reads the chain's earlier values at the element: x * Sigmoid(x) too) at ONNX index
  // `idx` of its output of shape `shape`.
  Halide::Expr apply(LoweringContext& cx, Halide::Expr value, const std::vector<int64_t>& shape,
                     const std::vector<Halide::Expr>& idx) const;
  // What the graph reads: the producer's output, or the chain's last value.
  const ir::Value* result(const ir::Node& producer) const;
  // Defines every value of the chain, and the producer's own output, as t
  // (each is read only by the next node of the chain, which is skipped).
  void define(LoweringContext& cx, const ir::Node& producer, const LTensor& t) const;
  // "Add -> 'a', Relu -> 'y'", or "" without one.
  std::string description() const;
};

// The producer's planned epilogue, cut before the first node whose other
// operand would broadcast the producer's output (of `shape`) to a larger
// shape; the nodes cut off are lowered on their own.
Epilogue fitted_epilogue(LoweringContext& cx, const ir::Node& producer, const std::vector<int64_t>& shape);

}  // namespace batchconv::compiler

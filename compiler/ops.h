// The op lowerings: one function per ONNX op (or batchconv.* op), each
// reading its inputs' LTensors from the context and defining its outputs'.
// They are grouped by kind in ops_*.cpp; each file registers its ops here.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lowering_context.h"

namespace batchconv::compiler {

using OpLowering = std::function<void(LoweringContext&, const ir::Node&)>;
using OpRegistry = std::map<std::string, OpLowering>;  // key: "Op" or "domain.Op"

// nullptr when the op cannot be lowered.
const OpLowering* find_op_lowering(const std::string& domain, const std::string& op_type);
// Every op the compiler lowers, sorted ("Conv", "batchconv.BatchedWeightConv", ...).
std::vector<std::string> supported_ops();

void register_conv_ops(OpRegistry& r);         // Conv, batchconv.BatchedWeightConv
void register_elementwise_ops(OpRegistry& r);  // Add, Mul, Relu, ..., BatchNormalization
void register_shape_ops(OpRegistry& r);        // Reshape, Transpose, Concat, Slice, Tile, ...
void register_reduction_ops(OpRegistry& r);    // Gemm, MatMul, pools, Softmax
void register_reduce_axes_ops(OpRegistry& r);  // Reduce*, GlobalAveragePool, GlobalMaxPool

}  // namespace batchconv::compiler

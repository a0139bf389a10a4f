// Lowering an ir::Model (after the rewrite pipeline) to ONE Halide pipeline.
//
//   graph inputs  -> Halide::ImageParam with the model's static shapes
//   initializers  -> Halide::Buffer constants baked in, or (runtime weights)
//                    extra ImageParams after the inputs, in initializer order
//   each node     -> Funcs: conv through the shared algorithm and CPU schedule
//                    of generators/ (compute_root), matmul and reductions
//                    compute_root (vectorised, parallel), elementwise and
//                    shape ops inlined into their consumers
//   graph outputs -> the pipeline's outputs, in order
//
// Argument order of the compiled function: inputs, then runtime weights,
// then outputs. Every buffer is dense row-major float32 with the shape given
// in LoweredModel (a graph output that is a view of a conv's result is
// computed straight into the caller's memory through a higher-rank view: its
// internal_extents differ from its shape; the generated wrapper header
// builds that view).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "Halide.h"
#include "ir/graph.h"
#include "lowering_context.h"

namespace batchconv::compiler {

struct LoweredModel {
  Halide::Pipeline pipeline;
  std::vector<Halide::Argument> arguments;  // inputs then runtime weights (outputs follow implicitly)
  std::vector<ParamInfo> inputs, weights;
  std::vector<OutputInfo> outputs;
  std::vector<std::string> conv_schedules;  // one line per conv: what scheduled it
  std::vector<std::pair<std::string, batchconv_gen::ConvProblem>> conv_problems;  // node, problem
  std::vector<std::string> layout_explanations;  // one line per conv: how its result is stored, and why
  std::vector<std::string> epilogues;  // one line per conv, Gemm or MatMul with an epilogue: its nodes
  std::vector<std::string> linear_weights;  // one line per Gemm or MatMul whose B is stored for the tiles (or not)
  std::map<std::string, std::vector<int64_t>> value_shapes;  // every lowered value's shape, by name
  // Each conv's and pool's result (a compute_root stage), by value name:
  // true where the layout plan stores it channels innermost.
  std::map<std::string, bool> stored_values;
  // Values known at compile time (initializers, folded nodes), by name.
  std::set<std::string> constant_values;
  bool dynamic_batch = false;  // dim 0 of the batched arguments is the caller's (ParamInfo/OutputInfo)
};

// Binds symbolic or overridden input dims: name -> full shape. Fails (Error)
// naming the input and dim when a dim stays unknown, and on unknown names.
// Runs shape inference again when anything changed.
void bind_input_shapes(ir::Model& model, const std::string& origin,
                       const std::map<std::string, std::vector<int64_t>>& shapes);

// Nodes one pipeline may hold (LowerOptions::max_nodes); larger models are
// refused with a message naming the limit unless they are cut into parts.
constexpr size_t kMaxNodes = 1000;
// "model: 1234 nodes after rewrites; the compiler lowers at most 1000 ...".
std::string too_many_nodes(const std::string& origin, size_t live, size_t limit);

// Lowers the model. Throws Error naming the node and op for unsupported ops
// or attributes, `origin: node 'n' (Op): unsupported op`.
LoweredModel lower_model(const ir::Model& model, const std::string& origin, const LowerOptions& options);

}  // namespace batchconv::compiler

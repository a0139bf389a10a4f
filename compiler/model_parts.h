// A model compiled as several Halide pipelines ("parts"), one library.
//
// Halide's compile time grows faster than linearly with a pipeline's
// depth: MobileNetV2 (170 nodes) took 164 s as one pipeline and 51 s of CPU
// time in all as four parts of 40-45 nodes (docs/model-parts.md). So a CPU
// model with more nodes than one part holds is cut, after the rewrites, into
// consecutive runs of its topological order, each lowered and compiled on
// its own (in parallel), and the generated header calls them in order.
//
// A cut falls where at most two values cross it, none a graph output or a
// constant; the cheapest cut by the bytes crossing it, where a value that is
// the result of a conv or pool stage (a compute_root Func: nothing computed
// twice, no epilogue split) counts a quarter of another. A value the whole model's
// layout plan stores channels innermost crosses channels innermost: the
// earlier part writes it as a channels-last output, the later part reads
// it in place as a channels-innermost input (LowerOptions::stored_input_edges);
// the others cross NCHW. Each crossing value is a buffer the header
// allocates (through the Halide runtime's allocator, the header's pool) and
// frees after the call.
//
// With --dynamic-batch every part takes the run-time batch (each cut buffer
// holds that many images). Not split: GPU targets and runtime weights (one
// pipeline each: every part would take every original weight).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "lower.h"

namespace batchconv::compiler {

// A value crossing a cut: the buffer the header allocates for it.
struct CutValue {
  std::string name;            // the ONNX value
  std::vector<int64_t> shape;  // ONNX order
  bool channels_last = false;  // stored NHWC (else NCHW)
};

// One argument of a part's function: a model argument or a cut buffer.
struct PartArg {
  int model_input = -1;   // index into the whole model's inputs
  int model_output = -1;  // index into the whole model's outputs
  int cut = -1;           // index into ModelParts::cuts
  std::vector<int64_t> internal;  // the buffer the part takes, Halide order (innermost first)
  std::vector<int64_t> strides;   // its strides; empty: dense in that order
  int batch_dim = -1;             // the dim of `internal` that is the run-time batch (--dynamic-batch; -1: none)
};

struct ModelPart {
  std::unique_ptr<ir::Model> model;  // nodes [first, last) of the topological order
  size_t first = 0, last = 0;
  LowerOptions options;              // the whole model's, with this part's edges
  LoweredModel lowered;              // filled by lower_parts
  std::vector<PartArg> args;         // inputs then outputs, as the part's function takes them
};

struct ModelParts {
  std::vector<ModelPart> parts;  // empty: the model stays one pipeline
  std::vector<CutValue> cuts;
};

// Where the model (after rewrites; `whole` is its lowering with `options`)
// is cut into parts of about `part_nodes` nodes, and each part as a model.
// Empty when it has no more nodes than one part or no valid cut.
ModelParts split_model(const ir::Model& model, const LoweredModel& whole, const LowerOptions& options,
                       const std::string& origin, size_t part_nodes);

// Lowers every part and fills its arguments; `whole` gives the model's own
// inputs and outputs. Returns the interface the header wraps: the whole
// model's, with each output as the part that computes it takes it.
LoweredModel lower_parts(ModelParts& parts, const LoweredModel& whole, const std::string& origin);

// The header code of the static function <name>__parts, called in place of
// one pipeline's <name>_impl with the same arguments: allocates the cut
// buffers, calls <name>_impl_p0, _p1, ... in order, frees them.
std::string parts_function(const ModelParts& parts, const LoweredModel& iface, const std::string& name);

}  // namespace batchconv::compiler

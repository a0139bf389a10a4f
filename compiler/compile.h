// batchconv-compile's steps as a library: import an ONNX model, bind its
// input shapes, run the rewrite pipeline, lower to one Halide pipeline and
// AOT-compile it into <dir>/lib<name>.a, <dir>/<name>_impl.h (Halide's
// header for <name>_impl) and <dir>/<name>.h (the entry point <name>(), a
// static inline wrapper that checks the caller's buffers with clear messages
// and builds the internal views, plus <name>_f32() on raw arrays).
//
// Files are written atomically: everything is compiled into a temporary
// folder inside <dir> and renamed into place at the end; on any failure the
// temporary folder is removed and nothing in <dir> changes.
#pragma once

#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "Halide.h"
#include "ir/graph.h"
#include "lower.h"

namespace batchconv::compiler {

struct CompileOptions {
  std::string name;                 // C function name; default: the model file's stem
  std::string out_dir = ".";
  std::string target = "host";      // Halide target, or several separated by ',' (best first)
  bool run_rewrites = true;
  bool runtime_weights = false;
  std::map<std::string, std::vector<int64_t>> shapes;  // --shape name=d0xd1...
  std::string tuning_db;      // --tuning: schedule the convs it has records of with their points
  bool force_tuning = false;  // --force-tuning: also records of another machine or target
  LayoutPolicy layouts = LayoutPolicy::Auto;  // --layouts: how conv results are stored (layout_plan.h)
  bool explain_layouts = false;               // --explain-layouts: lower every target's variant for the summary
  std::set<std::string> channels_last_edges;  // --edge-layout name=nhwc
  int threads = 0;  // --threads: the cores the library will run on (0: this machine's)
  // --list-conv-problems: write the model's convs as batchconv-tune problems
  // ("label: --op=... --x=... --w=..." lines) instead of compiling it.
  std::string list_conv_problems;
  // --dynamic-batch: every input's dim 0 is given at run time (dynamic_batch.h).
  bool dynamic_batch = false;
  // --part-nodes: a CPU model of more nodes is cut into parts of about this
  // many, each its own Halide pipeline, compiled in parallel (model_parts.h); 0: one pipeline.
  size_t part_nodes = 12;
};

// What was compiled, for the tool's summary line.
struct CompileSummary {
  std::vector<std::string> files;       // written, full paths
  std::vector<std::string> passes;      // "fold_repeat_into_conv: 1" for passes that fired
  int nodes = 0;                        // nodes lowered
  std::vector<std::string> conv_schedules;  // per target, one line per conv: what scheduled it
  std::vector<std::string> layouts;         // per target, one line per conv: how its result is stored
  std::vector<std::string> epilogues;       // per target, one line per conv, Gemm or MatMul with an epilogue
  std::vector<std::string> linear_weights;  // per target, one line per Gemm or MatMul: how its B is stored
  std::vector<std::string> parts;           // one line per pipeline when the model is cut into parts
};

// Parses "host" / "x86-64-linux-avx2" / "a,b,c"; throws Error naming a bad one.
std::vector<Halide::Target> parse_targets(const std::string& s);
// Parses "20x16" (also "20,16"); throws Error.
std::vector<int64_t> parse_shape(const std::string& s);
// A valid C identifier from a file stem ("seed1_opset13").
std::string default_name(const std::string& model_path);

// Runs the default rewrite pipeline with the project's own ops enabled;
// returns "pass: fired" for passes that fired. With runtime_weights, no pass
// computes new weight values (they only rearrange them).
std::vector<std::string> run_rewrites(ir::Model& model, bool runtime_weights = false);

// Whole flow on a model file. Throws Error (or io::Error) with a clear message.
CompileSummary compile_model_file(const std::string& model_path, const CompileOptions& options);

// The wrapper header <name>.h for a lowered model.
// run_parts: the code of <name>__parts (model_parts.h) running `parts`
// pipelines, which the entry point then calls in place of <name>_impl.
std::string wrapper_header(const LoweredModel& m, const std::string& name, const std::string& origin,
                           const CompileOptions& options, const std::string& run_parts = "", int parts = 1);

}  // namespace batchconv::compiler

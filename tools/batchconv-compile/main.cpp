// batchconv-compile: an ONNX model AOT-compiled into one static library.
//
//   batchconv-compile model.onnx -o <dir> [--target=host|<halide target>[,<target>...]]
//       [--name=N] [--no-rewrites] [--weights=baked|runtime] [--shape name=d0xd1x...]...
//       [--tuning=<db.jsonl> [--force-tuning]] [--layouts=auto|nchw|nhwc] [--explain-layouts]
//       [--edge-layout <name>=nhwc]... [--threads=<n>] [--dynamic-batch] [--part-nodes=<n>]
//
// Writes <dir>/lib<N>.a, <dir>/<N>_impl.h (Halide's header) and <dir>/<N>.h
// (int N(halide_buffer_t* inputs..., weights..., outputs...), documented).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "compile.h"
#include "layout_plan.h"
#include "onnx/onnx_io.h"
#include "ops.h"

namespace {

const char* kUsage =
    "usage: batchconv-compile <model.onnx|.onnxtxt> -o <dir> [options]\n"
    "\n"
    "Imports the model, runs batchconv's rewrite pipeline, lowers the graph to\n"
    "Halide pipelines (one, or one per part: --part-nodes) and AOT-compiles them into\n"
    "<dir>/lib<name>.a, <dir>/<name>_impl.h and <dir>/<name>.h, whose C entry point is\n"
    "    int <name>(halide_buffer_t *inputs..., *weights..., *outputs...)\n"
    "(dense row-major float32 buffers with the model's static shapes; with\n"
    "--dynamic-batch, dim 0 is the caller's and <name>_f32 takes the batch first).\n"
    "\n"
    "options:\n"
    "  -o, --output=<dir>         folder for the files (must exist)\n"
    "  --target=<t>[,<t>...]      Halide target(s), best first (default: host); with several,\n"
    "                             one library picks the best at run time (each variant\n"
    "                             scheduled for its own target). GPU: one of host-cuda\n"
    "                             (PTX for sm_61 unless a cuda_capability is given) or\n"
    "                             host-opencl, alone; the whole model runs on the device\n"
    "                             and the entry point still takes host buffers\n"
    "  --name=<N>                 C function name (default: the model file's stem)\n"
    "  --no-rewrites              lower the model as it is (for A/B comparisons)\n"
    "  --weights=baked|runtime    bake initializers in (default) or take float\n"
    "                             initializers as extra buffer arguments after the inputs\n"
    "  --shape <input>=<d0xd1..>  bind (or override) an input's shape; repeatable\n"
    "  --tuning=<db.jsonl>        a tuning database (batchconv-tune): each conv it has a record\n"
    "                             of (same op and shape, this machine, the variant's target)\n"
    "                             is scheduled with the record's point instead of the chooser's;\n"
    "                             prints one line per conv and target saying which was used.\n"
    "                             A record of the conv made on another machine or for another\n"
    "                             target is an error\n"
    "  --force-tuning             use such records anyway\n"
    "  --layouts=auto|nchw|nhwc   how conv results are stored inside the pipeline: auto (default)\n"
    "                             keeps a result channels innermost where only channels-family\n"
    "                             convs read it (through elementwise ops, BatchNormalization and\n"
    "                             Concat) and NCHW elsewhere; nchw stores every result NCHW;\n"
    "                             nhwc every result that is not a graph output channels innermost.\n"
    "                             The interface stays NCHW either way\n"
    "  --threads=<n>              the cores the library will run on (default: this machine's):\n"
    "                             convs whose rows give each core fewer than 4 tasks are split\n"
    "                             into tasks of output channels too\n"
    "  --explain-layouts          print, per target and conv, its schedule and how its result is\n"
    "                             stored, and why; and the elementwise nodes each conv, Gemm and\n"
    "                             MatMul computes as it stores its result (its epilogue), and how\n"
    "                             each baked Gemm or MatMul weight is stored\n"
    "  --edge-layout <name>=nhwc  the caller passes graph input or output <name> channels-last:\n"
    "                             a 4-D (N, C, H, W) tensor as NHWC, a 3-D (N, C, W) one as NWC\n"
    "                             (PyTorch's channels_last); repeatable; `=nchw` is the default\n"
    "  --list-conv-problems=FILE  write the model's convs as batchconv-tune problems (one line\n"
    "                             each, identical convs once) instead of compiling it\n"
    "  --dynamic-batch            every input's dim 0 (the batch) is given at run time: one\n"
    "                             library serves any batch; schedules are chosen for batch 1;\n"
    "                             the other dims are the model's or --shape's (CPU targets)\n"
    "  --part-nodes=<n>           a CPU model of more than <n> nodes (after rewrites; default 12)\n"
    "                             is cut into parts of about <n> nodes, each its own pipeline,\n"
    "                             compiled in parallel into the one library (Halide's compile\n"
    "                             time grows faster than the pipeline's depth); cuts fall only\n"
    "                             between stored conv or pool results; 0: one pipeline. Not\n"
    "                             with --weights=runtime or a GPU target\n"
    "  --list-ops                 print the ops the compiler lowers and exit\n"
    "  --help, --version\n";

bool take(const std::string& arg, const std::string& flag, std::string& value) {
  if (arg.rfind(flag + "=", 0) == 0) {
    value = arg.substr(flag.size() + 1);
    return true;
  }
  return false;
}

// v as a whole number in [lo, hi] (lo >= 0), or -1.
long whole_number(const std::string& v, long lo, long hi) {
  char* end = nullptr;
  const long t = std::strtol(v.c_str(), &end, 10);
  return v.empty() || *end != '\0' || t < lo || t > hi ? -1 : t;
}

int usage_error(const std::string& msg) {
  std::cerr << "batchconv-compile: " << msg << "\n(see --help)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace batchconv;
  compiler::CompileOptions opt;
  std::string model;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k], v;
    auto next = [&](const std::string& flag) -> std::string {
      if (k + 1 >= argc) throw compiler::Error(flag + " needs a value");
      return argv[++k];
    };
    try {
      if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      } else if (a == "--version") {
        std::cout << "batchconv-compile " << BATCHCONV_VERSION << "\n";
        return 0;
      } else if (a == "--list-ops") {
        for (const std::string& op : compiler::supported_ops()) std::cout << op << "\n";
        return 0;
      } else if (a == "-o" || a == "--output") {
        opt.out_dir = next(a);
      } else if (take(a, "--output", v) || take(a, "-o", v)) {
        opt.out_dir = v;
      } else if (take(a, "--target", v)) {
        opt.target = v;
      } else if (a == "--target") {
        opt.target = next(a);
      } else if (take(a, "--name", v)) {
        opt.name = v;
      } else if (a == "--no-rewrites") {
        opt.run_rewrites = false;
      } else if (take(a, "--weights", v)) {
        if (v != "baked" && v != "runtime") return usage_error("--weights must be baked or runtime, not '" + v + "'");
        opt.runtime_weights = v == "runtime";
      } else if (take(a, "--tuning", v) || a == "--tuning") {
        if (a == "--tuning") v = next(a);
        if (v.empty()) return usage_error("--tuning needs a database file");
        opt.tuning_db = v;
      } else if (take(a, "--list-conv-problems", v)) {
        if (v.empty()) return usage_error("--list-conv-problems needs a file");
        opt.list_conv_problems = v;
      } else if (take(a, "--layouts", v)) {
        std::optional<compiler::LayoutPolicy> p = compiler::parse_layout_policy(v);
        if (!p) return usage_error("--layouts must be auto, nchw or nhwc, not '" + v + "'");
        opt.layouts = *p;
      } else if (a == "--edge-layout" || take(a, "--edge-layout", v)) {
        if (a == "--edge-layout") v = next(a);
        const size_t eq = v.find('=');
        const std::string layout = eq == std::string::npos ? "" : v.substr(eq + 1);
        if (eq == std::string::npos || eq == 0 || (layout != "nhwc" && layout != "nchw"))
          return usage_error("--edge-layout expects <input or output>=nhwc|nchw, got '" + v + "'");
        if (layout == "nhwc") opt.channels_last_edges.insert(v.substr(0, eq));
        else opt.channels_last_edges.erase(v.substr(0, eq));
      } else if (take(a, "--threads", v)) {
        const long t = whole_number(v, 1, 4096);
        if (t < 0) return usage_error("--threads expects a number of cores from 1 to 4096, got '" + v + "'");
        opt.threads = static_cast<int>(t);
      } else if (take(a, "--part-nodes", v)) {
        const long t = whole_number(v, 0, 1000000);
        if (t < 0) return usage_error("--part-nodes expects a number of nodes (0: one pipeline), got '" + v + "'");
        opt.part_nodes = static_cast<size_t>(t);
      } else if (a == "--dynamic-batch") {
        opt.dynamic_batch = true;
      } else if (a == "--explain-layouts") {
        opt.explain_layouts = true;
      } else if (a == "--force-tuning") {
        opt.force_tuning = true;
      } else if (a == "--shape" || take(a, "--shape", v)) {
        if (a == "--shape") v = next(a);
        const size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) return usage_error("--shape expects <input>=<d0xd1x...>, got '" + v + "'");
        opt.shapes[v.substr(0, eq)] = compiler::parse_shape(v.substr(eq + 1));
      } else if (!a.empty() && a[0] == '-') {
        return usage_error("unknown option '" + a + "'");
      } else if (model.empty()) {
        model = a;
      } else {
        return usage_error("more than one model given ('" + model + "', '" + a + "')");
      }
    } catch (const compiler::Error& e) {
      return usage_error(e.what());
    }
  }
  if (model.empty()) return usage_error("no model given");
  try {
    compiler::CompileSummary s = compiler::compile_model_file(model, opt);
    std::cout << "batchconv-compile: " << model << ": " << s.nodes << " nodes";
    if (opt.run_rewrites) {
      std::cout << ", rewrites fired: ";
      if (s.passes.empty()) std::cout << "none";
      for (size_t k = 0; k < s.passes.size(); ++k) std::cout << (k ? ", " : "") << s.passes[k];
    }
    std::cout << "\n";
    if (!opt.tuning_db.empty() || opt.explain_layouts)
      for (const std::string& c : s.conv_schedules) std::cout << "  conv " << c << "\n";
    if (opt.explain_layouts)
      for (const std::string& l : s.layouts) std::cout << "  layout " << l << "\n";
    if (opt.explain_layouts)
      for (const std::string& l : s.epilogues) std::cout << "  fused " << l << "\n";
    if (opt.explain_layouts)
      for (const std::string& l : s.linear_weights) std::cout << "  weights " << l << "\n";
    if (!s.parts.empty()) std::cout << "  " << s.parts.size() << " pipelines (--part-nodes=" << opt.part_nodes << "):\n";
    for (const std::string& p : s.parts) std::cout << "  part " << p << "\n";
    for (const std::string& f : s.files) std::cout << "  wrote " << f << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "batchconv-compile: error: " << e.what() << "\n";
    return 1;
  }
}

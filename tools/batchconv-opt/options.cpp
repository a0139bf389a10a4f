// batchconv-opt's command line.
#include "options.h"

#include <sstream>

namespace batchconv::opt {

std::string usage() {
  return R"(usage: batchconv-opt <in.onnx|in.onnxtxt> [-o <out.onnx|out.onnxtxt>] [options]

Rewrites an ONNX model so that repeat + grouped conv, batch slices + convs and
parallel convs use the shared-input forms (see --list-passes). Files ending in
.onnxtxt/.txt are ONNX text syntax; others are binary. Without -o (or with
-o -) the result is printed as text to stdout.

options:
  -o <file>               output model (written atomically; the input is never modified)
  --passes=a,b,...        run these passes in this order instead of the default pipeline
  --list-passes           list the passes of the default pipeline and exit
  --no-rewrites           run no pass: import and export only (A/B comparisons)
  --explain               for every candidate that did not fire: pass, node and reason (stderr)
  --print                 print the result in ONNX text syntax to stdout
  --emit=dot              write Graphviz files <prefix>.before.dot and <prefix>.after.dot
  --dot-prefix=<p>        prefix for --emit=dot (default: the output path without extension)
  --verify                run input and output models on random inputs through the reference
                          interpreter; exit non-zero on any relative difference > 1e-4
  --seed=<n>              seed of --verify's random inputs (default 1)
  --dim=<name>=<n>        value of a symbolic dimension for --verify (default 2), repeatable
  --stats                 per pass: rewrites fired, nodes removed, bytes of intermediates saved (stderr)
  --verbose               print the graph after each pass (stderr)
  --emit-batchconv-ops    emit the project's own ops (domain batchconv) where a pass can
  --split-input-file      split a text input at lines '// -----' (or '# -----'), process each
                          part on its own, print the results separated by '// -----'
  --print-full            print all initializer data (text on stdout shows '{...}' for
                          initializers over 64 elements; files written as text are complete)
  --no-check              do not run onnx::checker and shape inference on the output
                          (an output that fails them is refused, nothing written)
  --help, --version
exit status: 0 success, 1 error (bad model, failed pass, failed --verify, failed write), 2 usage
)";
}

namespace {

bool take_value(const std::string& arg, const std::string& flag, std::string* value) {
  if (arg.rfind(flag + "=", 0) != 0) return false;
  *value = arg.substr(flag.size() + 1);
  return true;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  std::string v;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    if (a == "-o") {
      if (k + 1 >= argc) throw UsageError("-o needs a file name");
      o.output = argv[++k];
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2 && a[2] != '-') {
      o.output = a.substr(2);
    } else if (take_value(a, "--passes", &v)) {
      o.passes = split_commas(v);
      o.passes_given = true;
    } else if (a == "--list-passes") {
      o.list_passes = true;
    } else if (a == "--no-rewrites") {
      o.no_rewrites = true;
    } else if (a == "--explain") {
      o.explain = true;
    } else if (a == "--print") {
      o.print = true;
    } else if (take_value(a, "--emit", &v)) {
      if (v != "dot") throw UsageError("--emit: unknown format '" + v + "' (expected dot)");
      o.emit_dot = true;
    } else if (take_value(a, "--dot-prefix", &v)) {
      o.dot_prefix = v;
    } else if (a == "--verify") {
      o.verify = true;
    } else if (take_value(a, "--seed", &v)) {
      try {
        o.seed = std::stoull(v);
      } catch (const std::exception&) {
        throw UsageError("--seed: '" + v + "' is not a number");
      }
    } else if (take_value(a, "--dim", &v)) {
      auto eq = v.find('=');
      try {
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument("");
        int64_t n = std::stoll(v.substr(eq + 1));
        if (n <= 0) throw std::invalid_argument("");
        o.dims[v.substr(0, eq)] = n;
      } catch (const std::exception&) {
        throw UsageError("--dim: expected <name>=<positive number>, got '" + v + "'");
      }
    } else if (a == "--stats") {
      o.stats = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--emit-batchconv-ops") {
      o.emit_batchconv_ops = true;
    } else if (a == "--split-input-file") {
      o.split_input_file = true;
    } else if (a == "--print-full") {
      o.print_full = true;
    } else if (a == "--no-check") {
      o.no_check = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a.size() > 1 && a[0] == '-') {
      throw UsageError("unknown option '" + a + "' (see --help)");
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      throw UsageError("more than one input file ('" + o.input + "' and '" + a + "')");
    }
  }
  if (!o.help && !o.version && !o.list_passes && o.input.empty()) throw UsageError("no input file (see --help)");
  if (o.no_rewrites && o.passes_given) throw UsageError("--no-rewrites and --passes exclude each other");
  return o;
}

}  // namespace batchconv::opt

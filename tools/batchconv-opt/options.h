// batchconv-opt's command line.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace batchconv::opt {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string input;                 // model file (.onnx binary, .onnxtxt/.txt text)
  std::string output;                // -o; empty or "-": text to stdout
  std::vector<std::string> passes;   // --passes=a,b; empty: the default pipeline
  bool passes_given = false;
  bool list_passes = false;
  bool no_rewrites = false;          // A/B: import and export only
  bool explain = false;
  bool print = false;                // text syntax to stdout
  bool emit_dot = false;             // --emit=dot
  std::string dot_prefix;            // --dot-prefix; default: output path without extension
  bool verify = false;
  uint64_t seed = 1;                 // --seed, for --verify's random inputs
  std::map<std::string, int64_t> dims;  // --dim N=4: values of symbolic dims for --verify
  bool stats = false;
  bool verbose = false;
  bool emit_batchconv_ops = false;
  bool split_input_file = false;
  bool no_check = false;             // skip onnx::checker on the output
  bool print_full = false;           // print every initializer's data (stdout text elides big ones)
  bool help = false;
  bool version = false;
};

Options parse_options(int argc, char** argv);
std::string usage();

}  // namespace batchconv::opt

#include "compile.h"

#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "onnx/onnx_io.h"
#include "pass.h"

namespace batchconv::compiler {

namespace fs = std::filesystem;

std::vector<Halide::Target> parse_targets(const std::string& s) {
  std::vector<Halide::Target> out;
  std::stringstream ss(s);
  std::string one;
  while (std::getline(ss, one, ',')) {
    if (one.empty()) continue;
    if (!Halide::Target::validate_target_string(one)) {
      throw Error("--target: '" + one + "' is not a Halide target (e.g. host, x86-64-linux-avx2-fma)");
    }
    Halide::Target t(one);
    if (t.has_gpu_feature()) throw Error("--target: '" + one + "': GPU targets are not supported by the model compiler yet");
    out.push_back(t);
  }
  if (out.empty()) throw Error("--target is empty");
  return out;
}

std::vector<int64_t> parse_shape(const std::string& s) {
  std::vector<int64_t> out;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) throw Error("bad shape '" + s + "': expected d0xd1x... with positive integers");
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(cur, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != cur.size() || v <= 0) throw Error("bad shape '" + s + "': '" + cur + "' is not a positive integer");
    out.push_back(v);
    cur.clear();
  };
  for (char c : s) {
    if (c == 'x' || c == 'X' || c == ',') flush();
    else cur += c;
  }
  flush();
  return out;
}

std::string default_name(const std::string& model_path) {
  std::string stem = fs::path(model_path).stem().string(), out;
  for (char c : stem) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "model_" + out;
  return out;
}

std::vector<std::string> run_rewrites(ir::Model& model) {
  rewrites::PassOptions opts;
  opts.emit_batchconv_ops = true;
  std::vector<std::string> fired;
  for (const rewrites::Pass& p : rewrites::default_pipeline()) {
    rewrites::PassResult r = p.run(model, opts);
    if (r.fired > 0) fired.push_back(p.name + ": " + std::to_string(r.fired));
  }
  return fired;
}

namespace {

bool valid_c_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A temporary folder inside `dir`, removed on destruction unless released.
struct TempDir {
  fs::path path;
  explicit TempDir(const fs::path& dir) {
    std::random_device rd;
    for (int k = 0; k < 100 && path.empty(); ++k) {
      fs::path p = dir / (".batchconv-compile." + std::to_string(getpid()) + "." + std::to_string(rd() % 1000000));
      if (fs::create_directory(p)) path = p;
    }
    if (path.empty()) throw Error("cannot create a temporary folder in " + dir.string());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

CompileSummary compile_model_file(const std::string& model_path, const CompileOptions& options) {
  const std::string name = options.name.empty() ? default_name(model_path) : options.name;
  if (!valid_c_name(name)) throw Error("--name '" + name + "' is not a C identifier");
  std::vector<Halide::Target> targets = parse_targets(options.target);
  const fs::path dir(options.out_dir.empty() ? "." : options.out_dir);
  if (!fs::is_directory(dir)) throw Error("-o " + dir.string() + ": no such folder");

  CompileSummary summary;
  std::unique_ptr<ir::Model> model = io::load_model(model_path);
  bind_input_shapes(*model, model_path, options.shapes);
  if (options.run_rewrites) summary.passes = run_rewrites(*model);
  for (const auto& n : model->graph.nodes())
    if (!n->dead) ++summary.nodes;

  LowerOptions lo;
  lo.runtime_weights = options.runtime_weights;
  lo.target = targets.front();  // schedules are chosen for the best target
  LoweredModel lowered = lower_model(*model, model_path, lo);

  TempDir tmp(dir);
  const std::string impl = name + "_impl";
  const fs::path prefix = tmp.path / impl;
  try {
    if (targets.size() == 1) {
      lowered.pipeline.compile_to_static_library(prefix.string(), lowered.arguments, impl, targets.front());
    } else {
      lowered.pipeline.compile_to_multitarget_static_library(prefix.string(), lowered.arguments, targets);
    }
  } catch (const Halide::Error& e) {
    throw Error(model_path + ": Halide failed to compile the lowered pipeline: " + e.what());
  }
  {
    std::ofstream h(tmp.path / (name + ".h"));
    h << wrapper_header(lowered, name, model_path, options);
    if (!h) throw Error("cannot write " + (tmp.path / (name + ".h")).string());
  }
  const std::vector<std::pair<fs::path, fs::path>> moves = {
      {tmp.path / (impl + ".a"), dir / ("lib" + name + ".a")},
      {tmp.path / (impl + ".h"), dir / (impl + ".h")},
      {tmp.path / (name + ".h"), dir / (name + ".h")},
  };
  for (const auto& [from, to] : moves) {
    if (!fs::exists(from)) throw Error("Halide did not write " + from.filename().string());
  }
  for (const auto& [from, to] : moves) {
    fs::rename(from, to);
    summary.files.push_back(to.string());
  }
  return summary;
}

}  // namespace batchconv::compiler

#include "compile.h"

#include <unistd.h>

#include <cctype>
#include <functional>
#include <map>
#include <set>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen.h"
#include "conv_tuning.h"
#include "dynamic_batch.h"
#include "onnx/onnx_io.h"
#include "pass.h"
#include "runtime_weights.h"
#include "host_target.h"
#include "model_parts.h"

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
    // "host" is this machine: only features it can run (target_facts.h).
    if (one.rfind("host", 0) == 0) t = batchconv_gen::usable_target(t);
    if (t.has_gpu_feature()) {
      // CUDA and OpenCL, the GPU APIs the project's schedules are written and tested for.
      const bool cuda = t.has_feature(Halide::Target::CUDA), opencl = t.has_feature(Halide::Target::OpenCL);
      if (!(cuda || opencl) || (cuda && opencl) || t.has_feature(Halide::Target::Metal) ||
          t.has_feature(Halide::Target::D3D12Compute) || t.has_feature(Halide::Target::OpenGLCompute)) {
        throw Error("--target: '" + one + "': the model compiler's GPU targets are CUDA or OpenCL, one of them "
                    "(e.g. host-cuda, host-opencl)");
      }
      // Halide's default CUDA capability (2.0) is older than any driver
      // still JITs; 6.1 is what the project's CUDA kernels are built for.
      if (cuda && t.get_cuda_capability_lower_bound() < 30) t = t.with_feature(Halide::Target::CUDACapability61);
    }
    out.push_back(t);
  }
  if (out.empty()) throw Error("--target is empty");
  if (out.size() > 1) {
    for (const Halide::Target& t : out)
      if (t.has_gpu_feature())
        throw Error("--target: '" + t.to_string() + "' is a GPU target; a GPU library has that one target "
                    "(a multi-target library picks its variant by CPU features, not by the GPU there)");
  }
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

std::vector<std::string> run_rewrites(ir::Model& model, bool runtime_weights) {
  rewrites::PassOptions opts;
  opts.emit_batchconv_ops = true;
  opts.compute_weight_values = !runtime_weights;
  std::vector<std::string> fired;
  for (const rewrites::Pass& p : rewrites::default_pipeline()) {
    rewrites::PassResult r = p.run(model, opts);
    if (r.fired > 0) fired.push_back(p.name + ": " + std::to_string(r.fired));
  }
  return fired;
}

namespace {

// Why `s` cannot name the generated C function (and its <s>_impl, <s>_f32, ...
// companions), or "" when it can.
std::string c_name_problem(const std::string& s) {
  static const std::set<std::string> kKeywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
      "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      "main", "errno", "stdin", "stdout", "stderr", "assert"};
  if (s.empty()) return "is empty";
  if (s.size() > 200) return "is longer than 200 characters";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) return "starts with a digit";
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return "has a character other than [A-Za-z0-9_]";
  if (kKeywords.count(s)) return "is a C/C++ keyword or standard name";
  if (s[0] == '_' || s.find("__") != std::string::npos) return "is reserved in C (leading '_' or a '__')";
  if (s.rfind("halide_", 0) == 0) return "would clash with the Halide runtime's halide_* symbols";
  return "";
}

// A temporary folder inside `dir`, removed on destruction unless released.
struct TempDir {
  fs::path path;
  explicit TempDir(const fs::path& dir) {
    std::random_device rd;
    for (int k = 0; k < 100 && path.empty(); ++k) {
      fs::path p = dir / (".batchconv-compile." + std::to_string(getpid()) + "." + std::to_string(rd() % 1000000));
      std::error_code ec;
      if (fs::create_directory(p, ec)) path = p;
      else if (ec) throw Error("-o " + dir.string() + ": cannot create a temporary folder there (" + ec.message() + ")");
    }
    if (path.empty()) throw Error("-o " + dir.string() + ": cannot create a temporary folder there");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};


// Outputs may replace earlier outputs, never the model itself or a non-regular file.
void check_destination(const fs::path& to, const std::string& model_path) {
  io::check_not_an_input(to.string(), {model_path});
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(to, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st))
    throw Error(to.string() + ": exists and is not a regular file; refusing to replace it");
}

}  // namespace

CompileSummary compile_model_file(const std::string& model_path, const CompileOptions& options) {
  std::string name = options.name.empty() ? default_name(model_path) : options.name;
  if (options.name.empty() && !c_name_problem(name).empty()) name = "model_" + name;
  if (std::string why = c_name_problem(name); !why.empty())
    throw Error("--name '" + name + "' " + why + "; expected a C identifier for the generated function");
  std::vector<Halide::Target> targets = parse_targets(options.target);
  const fs::path dir(options.out_dir.empty() ? "." : options.out_dir);
  if (!fs::is_directory(dir)) throw Error("-o " + dir.string() + ": no such folder");

  CompileSummary summary;
  // Loads the model, binds its inputs (every leading dim to `batch` when
  // positive) and runs the rewrites.
  auto prepare = [&](int64_t batch, RuntimeWeightPlan& plan, std::vector<std::string>* passes) {
    std::unique_ptr<ir::Model> m = io::load_model(model_path);
    bind_input_shapes(*m, model_path, batch > 0 ? shapes_at_batch(*m, model_path, options.shapes, batch) : options.shapes);
    if (options.runtime_weights) plan = plan_runtime_weights(m, model_path, options.run_rewrites, passes);
    else if (options.run_rewrites) *passes = run_rewrites(*m);
    return m;
  };
  RuntimeWeightPlan plan;
  std::unique_ptr<ir::Model> model = prepare(options.dynamic_batch ? 1 : 0, plan, &summary.passes);
  for (const auto& n : model->graph.nodes())
    if (!n->dead) ++summary.nodes;

  LowerOptions lo;
  ConvTuning tuning;
  if (!options.tuning_db.empty()) {
    tuning = load_conv_tuning(options.tuning_db, options.force_tuning);
    lo.tuning = &tuning;
  }
  lo.runtime_weights = options.runtime_weights;
  lo.layouts = options.layouts;
  lo.channels_last_edges = options.channels_last_edges;
  if (options.threads > 0) lo.threads = options.threads;
  if (options.runtime_weights) lo.weight_plan = &plan;
  // --dynamic-batch: the shapes at batch 2, which every batch-dependent
  // value's shape at batch 1 must match but for its leading dim.
  std::map<std::string, std::vector<int64_t>> batch2_shapes;
  if (options.dynamic_batch) {
    RuntimeWeightPlan plan2;
    std::vector<std::string> passes2;
    std::unique_ptr<ir::Model> model2 = prepare(2, plan2, &passes2);
    LowerOptions lo2 = lo;
    lo2.target = targets.front();
    lo2.weight_plan = options.runtime_weights ? &plan2 : nullptr;
    lo2.tuning = nullptr;
    if (!options.runtime_weights && options.part_nodes > 0) lo2.max_nodes = std::max<size_t>(lo.max_nodes, 100000);
    try {
      batch2_shapes = lower_model(*model2, model_path, lo2).value_shapes;
    } catch (const Error& e) {
      throw Error(std::string("--dynamic-batch: the model bound at batch 2 does not lower: ") + e.what());
    }
    lo.batch2_shapes = &batch2_shapes;
  }
  // The interface (and the header) come from the first target's lowering;
  // with several targets each variant is lowered again with its own target,
  // so the chooser sees that target's vector width and registers.
  lo.target = targets.front();
  // A CPU model of more nodes than a part holds is cut into parts
  // (model_parts.h): the whole model is lowered (not compiled) to find the
  // cuts, so it may hold more nodes than one pipeline.
  bool cpu = true;
  for (const Halide::Target& t : targets) cpu = cpu && !t.has_gpu_feature();
  const bool may_split = cpu && options.part_nodes > 0 && !options.runtime_weights && options.list_conv_problems.empty();
  LowerOptions whole_options = lo;
  if (may_split) whole_options.max_nodes = std::max<size_t>(lo.max_nodes, 100000);
  LoweredModel lowered = lower_model(*model, model_path, whole_options);
  ModelParts parts;
  if (may_split) parts = split_model(*model, lowered, lo, model_path, options.part_nodes);
  if (parts.parts.empty() && static_cast<size_t>(summary.nodes) > lo.max_nodes)
    throw Error(too_many_nodes(model_path, static_cast<size_t>(summary.nodes), lo.max_nodes));
  LoweredModel iface = parts.parts.empty() ? lowered : lower_parts(parts, lowered, model_path);
  for (size_t j = 0; j < parts.parts.size(); ++j) {
    const ModelPart& p = parts.parts[j];
    std::string line = name + "_impl_p" + std::to_string(j) + ": nodes " + std::to_string(p.first) + "-" +
                       std::to_string(p.last - 1) + " of the topological order; reads";
    std::string outs;
    for (const PartArg& a : p.args) {
      if (a.cut < 0) continue;
      const CutValue& c = parts.cuts[static_cast<size_t>(a.cut)];
      const bool is_input = &a - p.args.data() < static_cast<std::ptrdiff_t>(p.lowered.inputs.size());
      (is_input ? line : outs) += " '" + c.name + "'" + (c.channels_last ? " (NHWC)" : " (NCHW)");
    }
    if (j == 0) line += " the model's inputs";
    summary.parts.push_back(line + (outs.empty() ? "" : "; writes" + outs));
  }
  if (!parts.parts.empty()) {
    lowered.conv_schedules = iface.conv_schedules;
    lowered.layout_explanations = iface.layout_explanations;
    lowered.epilogues = iface.epilogues;
    lowered.linear_weights = iface.linear_weights;
  }
  summary.conv_schedules = lowered.conv_schedules;
  auto add_layouts = [&](const LoweredModel& m, const Halide::Target& t) {
    for (const std::string& l : m.layout_explanations) summary.layouts.push_back(tuning_target_name(t) + ": " + l);
    for (const std::string& l : m.epilogues) summary.epilogues.push_back(tuning_target_name(t) + ": " + l);
    for (const std::string& l : m.linear_weights) summary.linear_weights.push_back(tuning_target_name(t) + ": " + l);
  };
  add_layouts(lowered, targets.front());
  // With a tuning database every variant is lowered here too, so that a
  // refused record of any target is an error before code generation and
  // the summary says what scheduled each conv on each target (and, asked
  // to explain layouts, how each variant stores each conv's result).
  if (lo.tuning || options.explain_layouts) {
    for (size_t k = 1; k < targets.size(); ++k) {
      LowerOptions per_target = lo;
      per_target.target = targets[k];
      std::vector<LoweredModel> variants;
      if (parts.parts.empty()) variants.push_back(lower_model(*model, model_path, per_target));
      for (const ModelPart& p : parts.parts) {
        LowerOptions o = p.options;
        o.target = targets[k];
        variants.push_back(lower_model(*p.model, model_path, o));
      }
      for (const LoweredModel& v : variants) {
        summary.conv_schedules.insert(summary.conv_schedules.end(), v.conv_schedules.begin(), v.conv_schedules.end());
        add_layouts(v, targets[k]);
      }
    }
  }

  if (!options.list_conv_problems.empty()) {
    // The convs as tuning problems, one line each (identical convs once).
    std::vector<std::string> lines;
    for (const auto& [node, q] : lowered.conv_problems) {
      const std::string line = tuning_problem_line(model_path + " " + node, q);
      const std::string flags = line.substr(line.find(": "));
      bool seen = false;
      for (const std::string& l : lines) seen = seen || l.substr(l.find(": ")) == flags;
      if (!seen) lines.push_back(line);
    }
    const fs::path to(options.list_conv_problems);
    check_destination(to, model_path);
    const fs::path tmp_file = to.string() + ".tmp";
    {
      std::ofstream f(tmp_file, std::ios::trunc);
      f << "# the convs of " << model_path << " as batchconv-tune problems\n";
      for (const std::string& l : lines) f << l << "\n";
      if (!f.flush()) {
        fs::remove(tmp_file);
        throw Error(to.string() + ": cannot be written");
      }
    }
    fs::rename(tmp_file, to);
    summary.files.push_back(fs::absolute(to).string());
    return summary;
  }

  const std::string impl = name + "_impl";
  for (const std::string& f : {"lib" + name + ".a", impl + ".h", name + ".h"}) check_destination(dir / f, model_path);
  TempDir tmp(dir);
  const fs::path prefix = tmp.path / impl;
  if (!parts.parts.empty()) {
    compile_parts(parts, targets, model_path, tmp.path, impl);
    std::ofstream h(tmp.path / (name + ".h"));
    h << wrapper_header(iface, name, model_path, options, parts_function(parts, iface, name),
                           static_cast<int>(parts.parts.size()));
    if (!h) throw Error("cannot write " + (tmp.path / (name + ".h")).string());
  } else run_isolated([&] {
    try {
      if (targets.size() == 1) {
        lowered.pipeline.compile_to_static_library(prefix.string(), lowered.arguments, impl, targets.front());
      } else {
        const std::map<Halide::OutputFileType, std::string> outputs = {
            {Halide::OutputFileType::static_library, prefix.string() + ".a"},
            {Halide::OutputFileType::c_header, prefix.string() + ".h"}};
        Halide::compile_multitarget(impl, outputs, targets, {},
                                    [&](const std::string& fn_name, const Halide::Target& t) {
                                      LowerOptions per_target = lo;
                                      per_target.target = t;
                                      LoweredModel v = lower_model(*model, model_path, per_target);
                                      return v.pipeline.compile_to_module(v.arguments, fn_name, t);
                                    });
      }
    } catch (const Halide::Error& e) {
      throw Error(std::string("Halide failed to compile the lowered pipeline: ") + e.what());
    }
  }, model_path);
  if (parts.parts.empty()) {
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
    std::error_code ec;
    fs::rename(from, to, ec);
    if (ec) throw Error(to.string() + ": cannot move the compiled file into place (" + ec.message() + ")");
    summary.files.push_back(to.string());
  }
  return summary;
}

}  // namespace batchconv::compiler

// Compiling candidates: each one is the project's own generator executable
// (batchconv_generators, the AOT build's) run with the candidate's generator
// params in a process of its own with a time limit, then linked into a
// shared object that the measuring process loads. What the tuner times is
// therefore exactly what an AOT build with those params produces.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace batchconv_tune {

struct Tools {
  std::string generator_exe;  // batchconv_generators
  std::string cxx;            // links the objects into shared objects
  std::string plugin_dir;     // Halide's autoscheduler plugins (libautoschedule_*.so)
  std::string self;           // this executable (the measuring worker)
};

// Where the build put things, overridable by BATCHCONV_TUNE_GENERATOR / CXX.
Tools default_tools(const char* argv0);

struct CompileJob {
  std::string id;         // file stem, unique within `dir`
  std::string generator;  // grouped_conv, batched_weight_conv, broadcast_input_conv
  std::vector<std::string> params;  // generator params "name=value"
  std::string target;               // Halide target
  std::string autoscheduler;        // "" or Mullapudi2016 | Li2018 | Adams2019
  std::vector<std::pair<std::string, std::string>> env;  // e.g. HL_BEAM_SIZE for Adams2019
  std::string dir;
  double timeout_s = 120;
};

struct CompileResult {
  std::string status;  // "ok", "compile_error", "compile_timeout"
  std::string so_path;
  std::string message;  // the failure, with the tail of the compiler's output
  double seconds = 0;
};

// What a compiled object was built from: the generator executable (and its
// modification time), the job's generator, target and params. Written next
// to the object, so a later run reuses it only when all of them match.
std::string build_stamp(const CompileJob& j, const Tools& tools);
// The object of `j` from an earlier compile with the same stamp, or "".
std::string reusable_object(const CompileJob& j, const Tools& tools);

// Compiles every job, `parallel` at a time; results in job order.
// `on_done(done, total)` is called (under a lock) as each one finishes.
std::vector<CompileResult> compile_all(const std::vector<CompileJob>& jobs, int parallel,
                                       const Tools& tools,
                                       const std::function<void(size_t, size_t)>& on_done = {});

// The generator params an autoscheduler run needs (machine_params from this
// machine: cores, L2 bytes, the default balance).
std::vector<std::string> autoscheduler_params(const std::string& estimates_key);

}  // namespace batchconv_tune

#include "compile.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "processes.h"

#ifndef BATCHCONV_TUNE_GENERATOR_EXE
#define BATCHCONV_TUNE_GENERATOR_EXE "batchconv_generators"
#endif
#ifndef BATCHCONV_TUNE_CXX
#define BATCHCONV_TUNE_CXX "c++"
#endif
#ifndef BATCHCONV_TUNE_PLUGIN_DIR
#define BATCHCONV_TUNE_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/halide14"
#endif

namespace batchconv_tune {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

CompileResult compile_one(const CompileJob& j, const Tools& t) {
  CompileResult r;
  const double start = now_s();
  unlink((j.dir + "/" + j.id + ".stamp").c_str());  // an earlier object of this id is stale from here on
  std::vector<std::string> gen{t.generator_exe, "-g", j.generator, "-f", "cand", "-n", j.id,
                               "-o", j.dir, "-e", "object"};
  if (!j.autoscheduler.empty()) {
    gen.insert(gen.end(), {"-p", t.plugin_dir + "/libautoschedule_" + lower(j.autoscheduler) + ".so",
                           "-s", j.autoscheduler});
  }
  // No runtime of its own: the loaded kernel runs on the runtime library's
  // Halide runtime (its thread pool, allocator and error handler), as the
  // AOT build's kernels do.
  gen.push_back("target=" + j.target + "-no_runtime");
  gen.insert(gen.end(), j.params.begin(), j.params.end());
  std::map<std::string, std::string> env(j.env.begin(), j.env.end());
  env["HL_NUM_THREADS"] = "1";  // compiles run side by side
  const std::string log = j.dir + "/" + j.id + ".log";
  ProcResult g = run_process(gen, j.timeout_s, log, env);
  if (!g.ok()) {
    r.status = g.timed_out ? "compile_timeout" : "compile_error";
    r.message = "generator " + g.describe() + ": " + g.log_tail;
    r.seconds = now_s() - start;
    return r;
  }
  const std::string obj = j.dir + "/" + j.id + ".o", so = j.dir + "/" + j.id + ".so";
  ProcResult l = run_process({t.cxx, "-shared", "-o", so, obj, "-lpthread", "-ldl"},
                             std::max(30.0, j.timeout_s - g.seconds), j.dir + "/" + j.id + ".link.log");
  r.seconds = now_s() - start;
  if (!l.ok()) {
    r.status = l.timed_out ? "compile_timeout" : "compile_error";
    r.message = "link " + l.describe() + ": " + l.log_tail;
    return r;
  }
  unlink(obj.c_str());
  std::ofstream(j.dir + "/" + j.id + ".stamp", std::ios::trunc) << build_stamp(j, t);
  r.status = "ok";
  r.so_path = so;
  return r;
}

}  // namespace

std::string build_stamp(const CompileJob& j, const Tools& t) {
  struct stat st {};
  stat(t.generator_exe.c_str(), &st);
  std::string s = t.generator_exe + " " + std::to_string(static_cast<long long>(st.st_mtime)) + " " +
                  j.generator + " " + j.target + " " + j.autoscheduler;
  for (const std::string& p : j.params) s += " " + p;
  return s;
}

std::string reusable_object(const CompileJob& j, const Tools& t) {
  const std::string so = j.dir + "/" + j.id + ".so";
  std::ifstream in(j.dir + "/" + j.id + ".stamp");
  const std::string stamp((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return !stamp.empty() && stamp == build_stamp(j, t) && access(so.c_str(), R_OK) == 0 ? so : "";
}

Tools default_tools(const char* argv0) {
  Tools t;
  const char* g = std::getenv("BATCHCONV_TUNE_GENERATOR");
  t.generator_exe = g ? g : BATCHCONV_TUNE_GENERATOR_EXE;
  const char* cxx = std::getenv("CXX");
  t.cxx = cxx ? cxx : BATCHCONV_TUNE_CXX;
  t.plugin_dir = BATCHCONV_TUNE_PLUGIN_DIR;
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  t.self = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string(argv0);
  return t;
}

std::vector<CompileResult> compile_all(const std::vector<CompileJob>& jobs, int parallel,
                                       const Tools& tools,
                                       const std::function<void(size_t, size_t)>& on_done) {
  std::vector<CompileResult> out(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      out[i] = compile_one(jobs[i], tools);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (on_done) on_done(done, jobs.size());
    }
  };
  std::vector<std::thread> pool;
  for (int k = 0; k < std::max(1, parallel); ++k) pool.emplace_back(work);
  for (std::thread& th : pool) th.join();
  return out;
}

std::vector<std::string> autoscheduler_params(const std::string& estimates_key) {
  std::string est = estimates_key;  // a generator's command line takes no spaces or '=' in a value
  for (char& c : est) {
    if (c == ' ') c = ',';
    else if (c == '=') c = ':';
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return {"auto_schedule=true",
          "machine_params=" + std::to_string(cores > 0 ? cores : 1) + "," +
              std::to_string(l2 > 0 ? l2 : 1 << 20) + ",40",
          "estimates=" + est};
}

}  // namespace batchconv_tune

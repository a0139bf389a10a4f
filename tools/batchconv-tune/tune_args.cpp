#include "tune_args.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "args.h"
#include "batchconv/batchconv.h"
#include "processes.h"

namespace batchconv_tune {

namespace {

int to_int(const std::string& flag, const std::string& v, int lo, int hi) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi)
    throw TuneUsageError(flag + "=" + v + ": expected an integer in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
  return static_cast<int>(n);
}

double to_double(const std::string& flag, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(d >= lo && d <= hi))
    throw TuneUsageError(flag + "=" + v + ": expected a number in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
  return d;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Checks one problem's flags with batchconv-bench's own parser.
void check_problem(const std::string& where, const std::vector<std::string>& flags) {
  try {
    const bcbench::BenchArgs b = bcbench::parse_args(flags);
    if (b.spec.op == bcbench::Op::BatchedLinear)
      throw TuneUsageError(where + ": batched_linear has no conv schedule space to tune");
    if (b.spec.x_shape.empty() || b.spec.w_shape.empty())
      throw TuneUsageError(where + ": --x and --w are required");
  } catch (const bcbench::UsageError& e) {
    throw TuneUsageError(where + ": " + e.what());
  }
}

// "label: --op=... --x=..." lines ('#' starts a comment).
std::vector<std::pair<std::string, std::vector<std::string>>> read_problems(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TuneUsageError("--problems=" + path + ": cannot be read");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      throw TuneUsageError(path + ":" + std::to_string(n) + ": expected 'label: --op=... --x=... --w=...'");
    std::string label = line.substr(0, colon);
    label.erase(0, label.find_first_not_of(" \t"));
    while (!label.empty() && label.back() == ' ') label.pop_back();
    std::istringstream f(line.substr(colon + 1));
    std::vector<std::string> flags;
    std::string flag;
    while (f >> flag) flags.push_back(flag);
    check_problem(path + ":" + std::to_string(n), flags);
    out.push_back({label, flags});
  }
  if (out.empty()) throw TuneUsageError("--problems=" + path + ": no problems in it");
  return out;
}

#ifndef BATCHCONV_TUNE_COMPILE_EXE
#define BATCHCONV_TUNE_COMPILE_EXE ""
#endif

// Every conv of an ONNX model as the model compiler lowers it (after its
// rewrites), through batchconv-compile --list-conv-problems.
std::vector<std::pair<std::string, std::vector<std::string>>> model_problems(const std::string& model,
                                                                             const std::string& work) {
  const char* env = std::getenv("BATCHCONV_TUNE_COMPILE");
  const std::string tool = env ? env : BATCHCONV_TUNE_COMPILE_EXE;
  if (tool.empty()) throw TuneUsageError("--model: this build has no batchconv-compile (built with the rewriter)");
  std::string mkdir = work;
  for (size_t k = 1; k <= mkdir.size(); ++k)
    if (k == mkdir.size() || mkdir[k] == '/') ::mkdir(mkdir.substr(0, k).c_str(), 0755);
  const std::string list = work + "/model-problems.txt";
  const ProcResult r = run_process({tool, model, "--list-conv-problems=" + list}, 900, work + "/model-problems.log");
  if (!r.ok()) throw TuneUsageError("--model=" + model + ": batchconv-compile failed (" + r.describe() + "): " + r.log_tail);
  std::ifstream in(list);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) any = any || (!line.empty() && line[0] != '#');
  if (!any) throw TuneUsageError("--model=" + model + ": the model has no conv to tune");
  return read_problems(list);
}

}  // namespace

TuneArgs parse_tune_args(const std::vector<std::string>& argv) {
  TuneArgs a;
  std::vector<std::string> rest = argv;
  if (!rest.empty() && (rest[0] == "tune" || rest[0] == "merge" || rest[0] == "report")) {
    a.command = rest[0];
    rest.erase(rest.begin());
  }
  std::vector<std::string> problem_flags, targets;
  std::string problems_file, shard, model;
  bool budget_given = false;
  for (const std::string& arg : rest) {
    const size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    const std::string v = eq == std::string::npos ? "" : arg.substr(eq + 1);
    auto need = [&] {
      if (v.empty()) throw TuneUsageError(flag + " needs a value: " + flag + "=...");
    };
    TuneOptions& o = a.options;
    if (flag == "--help" || flag == "-h") a.help = true;
    else if (a.command == "merge" && (flag == "--out" || flag == "-o")) need(), a.out = v;
    else if (a.command == "merge" && arg.rfind("--", 0) != 0) a.inputs.push_back(arg);
    else if (flag == "--db") need(), o.db = v;
    else if (flag == "--report") need(), a.report = v;
    else if (flag == "--plot") need(), a.plot = v;
    else if (a.command != "tune") throw TuneUsageError("unknown flag '" + arg + "' for " + a.command);
    else if (flag == "--problems") need(), problems_file = v;
    else if (flag == "--model") need(), model = v;
    else if (flag == "--targets" || flag == "--target") need(), targets = split(v, ',');
    else if (flag == "--budget") need(), o.budget_s = 60 * to_double(flag, v, 0, 1e6), budget_given = true;
    else if (flag == "--jobs") need(), o.jobs = to_int(flag, v, 1, 256);
    else if (flag == "--seed") need(), o.seed = static_cast<uint64_t>(to_int(flag, v, 0, 1 << 30));
    else if (flag == "--population") need(), o.population = to_int(flag, v, 1, 1000);
    else if (flag == "--generations") need(), o.max_generations = to_int(flag, v, 1, 1000000);
    else if (flag == "--baselines") {
      need();
      o.baselines.clear();
      if (v != "none") {
        for (const std::string& b : split(v, ',')) {
          if (b != "Mullapudi2016" && b != "Li2018" && b != "Adams2019" && b != "Adams2019-greedy")
            throw TuneUsageError("--baselines: unknown autoscheduler '" + b +
                                 "'; expected Mullapudi2016, Li2018, Adams2019, Adams2019-greedy or none");
          o.baselines.push_back(b);
        }
      }
    } else if (flag == "--compile-timeout") need(), o.compile_timeout_s = to_double(flag, v, 1, 86400);
    else if (flag == "--run-timeout") need(), o.run_timeout_s = to_double(flag, v, 1, 86400);
    else if (flag == "--rounds") need(), o.rounds = to_int(flag, v, 1, 1000);
    else if (flag == "--min-sample-ms") need(), o.min_sample_ms = to_double(flag, v, 0, 1e5);
    else if (flag == "--threads") need(), o.threads = to_int(flag, v, 1, 1024);
    else if (flag == "--work-dir") need(), o.work_dir = v;
    else if (flag == "--no-peer") o.peer = false;
    else if (flag == "--shard") need(), shard = v;
    else if (flag == "--progress") {
      need();
      if (v == "bar") o.progress = ProgressMode::Bar;
      else if (v == "lines") o.progress = ProgressMode::Lines;
      else if (v == "quiet") o.progress = ProgressMode::Quiet;
      else throw TuneUsageError("--progress=" + v + ": expected bar, lines or quiet");
    } else problem_flags.push_back(arg);  // batchconv-bench's problem flags
  }
  (void)budget_given;
  if (a.help) return a;
  if (a.command == "merge") {
    if (a.out.empty()) throw TuneUsageError("merge needs --out=FILE");
    if (a.inputs.empty()) throw TuneUsageError("merge needs the databases to merge");
    return a;
  }
  if (a.options.db.empty()) throw TuneUsageError("--db=FILE is required");
  if (a.command == "report") return a;

  std::vector<std::pair<std::string, std::vector<std::string>>> problems;
  if (a.options.work_dir.empty()) a.options.work_dir = a.options.db + ".work";
  if (!model.empty()) {
    if (!problem_flags.empty() || !problems_file.empty())
      throw TuneUsageError("give one of --model, --problems or one problem's flags");
    problems = model_problems(model, a.options.work_dir);
  } else if (!problems_file.empty()) {
    if (!problem_flags.empty())
      throw TuneUsageError("give either --problems=FILE or one problem's flags, not both (" +
                           problem_flags[0] + ")");
    problems = read_problems(problems_file);
  } else {
    if (problem_flags.empty())
      throw TuneUsageError("nothing to tune: give a problem (--op=... --x=... --w=...) or --problems=FILE");
    check_problem("the problem", problem_flags);
    std::string label;
    for (const std::string& f : problem_flags) label += (label.empty() ? "" : " ") + f;
    problems.push_back({label, problem_flags});
  }
  if (targets.empty()) targets.push_back(batchconv::selected_target());
  for (const std::string& t : targets) {
    if (t == "host")
      throw TuneUsageError("--targets=host: name the target (this machine runs " + batchconv::selected_target() +
                           ")");
    if (t.find("cuda") != std::string::npos || t.find("opencl") != std::string::npos)
      throw TuneUsageError("--targets=" + t + ": GPU targets cannot be timed on this machine's CPU");
  }
  for (const auto& [label, flags] : problems)
    for (const std::string& t : targets)
      a.jobs.push_back({targets.size() > 1 ? label + " @" + t : label, flags, t});

  if (!shard.empty()) {
    const size_t slash = shard.find('/');
    if (slash == std::string::npos) throw TuneUsageError("--shard=" + shard + ": expected i/n or auto/n");
    a.shard_count = to_int("--shard", shard.substr(slash + 1), 1, 1 << 20);
    std::string i = shard.substr(0, slash);
    if (i == "auto") {
      const char* s = std::getenv("SLURM_ARRAY_TASK_ID");
      if (!s) s = std::getenv("JOB_COMPLETION_INDEX");
      if (!s)
        throw TuneUsageError("--shard=auto/n: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set");
      i = s;
    }
    a.shard_index = to_int("--shard index", i, 0, a.shard_count - 1);
  }
  if (a.options.work_dir.empty()) a.options.work_dir = a.options.db + ".work";
  if (a.options.jobs <= 0) a.options.jobs = 1;
  return a;
}

const char* tune_help_text() {
  return R"(batchconv-tune: autotunes batchconv's conv kernels for given shapes and targets.

  batchconv-tune --db=FILE [problem flags | --problems=FILE] [options]
  batchconv-tune merge --out=FILE IN.jsonl...
  batchconv-tune report --db=FILE [--report=TABLE.md] [--plot=PLOT.svg]

Problem (batchconv-bench's flags): --op=gconv|bwconv|biconv --x=... --w=...
  [--groups --stride --dilation --pad --pad-begin --pad-end --layout --bias --relu].
  --problems=FILE   one problem per line: "label: --op=... --x=... --w=..."
  --model=FILE.onnx every conv of a model, as batchconv-compile lowers it (after
                    its rewrites; static shapes)
Search:
  --targets=T,...   Halide targets (default: the one the runtime runs here)
  --budget=MIN      minutes per job, compiles and timing included (default 10)
  --jobs=N          parallel compiles (default: cores)
  --population=N    candidates per generation (default 8)
  --generations=N   stop after N generations (default: the budget decides)
  --seed=N          the search's seed (default 1): same seed, same candidates
  --baselines=LIST  Halide autoschedulers to run as baselines: Mullapudi2016,
                    Li2018, Adams2019, Adams2019-greedy (beam size 1), or none
  --compile-timeout=S, --run-timeout=S   limits per candidate (120 s, 60 s)
  --rounds=N        interleaved timing rounds (default 5; the final run 2N)
  --min-sample-ms=M each timing sample runs the op at least M ms (default 20)
  --threads=N       kernel threads while timing (default: all cores)
  --no-peer         skip timing oneDNN in the final run
  --shard=i/n       tune only jobs i, i+n, ... (auto/n: i from SLURM_ARRAY_TASK_ID
                    or JOB_COMPLETION_INDEX); merge the shards' databases after
  --work-dir=DIR    candidates' objects and logs (default: DB.work)
  --progress=bar|lines|quiet   (default: bar on a terminal, else lines)
Output:
  --db=FILE         the tuning database (JSON lines); trials are appended as they
                    finish, so a killed run resumes where it stopped
  --report=FILE.md  a Markdown table of the database's records
  --plot=FILE.svg   best time so far against trials (needs gnuplot)

Every candidate is compiled by the project's generator in its own process and
checked against the double-precision reference before it is timed; one that
fails to compile, crashes, hangs or is wrong is recorded and skipped. Use the
database with -DBATCHCONV_TUNING_DB=FILE (kernel library) or
batchconv-compile --tuning=FILE (models).
)";
}

}  // namespace batchconv_tune

#include "measure.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "batchconv/batchconv.h"
#include "batchconv/tuning.h"
#include "check.h"
#include "methods.h"
#include "processes.h"
#include "problem.h"
#include "runner.h"
#include "timing.h"

namespace batchconv_tune {

namespace {

void emit(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

const char* op_api_name(bcbench::Op op) {
  switch (op) {
    case bcbench::Op::GroupedConv: return "grouped_conv";
    case bcbench::Op::BatchedWeightConv: return "batched_weight_conv";
    case bcbench::Op::BroadcastInputConv: return "broadcast_input_conv";
    case bcbench::Op::BatchedLinear: return "batched_linear";
  }
  return "?";
}

// "batchconv_grouped_conv_channels" (or _channels_blocked, _lanes) -> "grouped_conv".
std::string generator_of_kernel(const std::string& kernel) {
  std::string g = kernel;
  if (g.rfind("batchconv_", 0) == 0) g = g.substr(10);
  for (const std::string suffix : {"_channels_blocked", "_channels", "_lanes"}) {
    if (g.size() > suffix.size() && g.compare(g.size() - suffix.size(), suffix.size(), suffix) == 0)
      g = g.substr(0, g.size() - suffix.size());
  }
  return g;
}

struct WorkerArgs {
  std::string candidates;
  int rounds = 5;
  double min_sample_ms = 20, tol = 1e-4;
  int threads = 0;
  bool peer = false;
  std::vector<std::string> problem;
};

WorkerArgs parse_worker(const std::vector<std::string>& args) {
  WorkerArgs w;
  for (const std::string& a : args) {
    auto val = [&](const char* f) -> const char* {
      const size_t n = std::strlen(f);
      return a.compare(0, n, f) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = val("--candidates=")) w.candidates = v;
    else if (const char* v2 = val("--rounds=")) w.rounds = std::atoi(v2);
    else if (const char* v3 = val("--min-sample-ms=")) w.min_sample_ms = std::atof(v3);
    else if (const char* v4 = val("--tol=")) w.tol = std::atof(v4);
    else if (const char* v5 = val("--worker-threads=")) w.threads = std::atoi(v5);
    else if (a == "--peer") w.peer = true;
    else w.problem.push_back(a);
  }
  return w;
}

struct Loaded {
  Candidate c;
  batchconv::ConvKernelFn fn = nullptr;
  int inner = 1;
  std::vector<double> samples;
  bool ok = true;
};

}  // namespace

int measure_worker_main(const std::vector<std::string>& args, bool probe_only) {
  try {
    const WorkerArgs w = parse_worker(args);
    const bcbench::BenchArgs b = bcbench::parse_args(w.problem);
    if (w.threads > 0) batchconv::set_num_threads(w.threads);
    auto p = bcbench::make_problem(b.spec, b.seed);
    bcbench::MethodList methods = bcbench::make_methods(*p);
    bcbench::Method* direct = nullptr;
    for (auto& m : methods)
      if (m->name == "batchconv") direct = m.get();
    if (!direct) throw std::runtime_error("no batchconv method for this problem");
    direct->setup(*p);
    const std::string op = op_api_name(b.spec.op);

    if (probe_only) {
      batchconv::clear_tuned_conv_kernels();
      direct->run(*p);
      emit("key " + batchconv::last_conv_shape_key());
      emit("default " + batchconv::last_conv_family());
      for (auto [f, name] : {std::pair{batchconv::ScheduleFamily::Rows, "rows"},
                             std::pair{batchconv::ScheduleFamily::Channels, "channels"}}) {
        batchconv::set_schedule_family(f);
        direct->run(*p);
        emit(std::string("probe ") + name + " " + generator_of_kernel(batchconv::last_conv_kernel()));
      }
      batchconv::set_schedule_family(batchconv::ScheduleFamily::Auto);
      emit("done");
      return 0;
    }

    const bcbench::CheckPlan plan = bcbench::plan_check(*p, bcbench::CheckMode::Auto);
    batchconv::clear_tuned_conv_kernels();
    direct->run(*p);
    const std::string key = batchconv::last_conv_shape_key();
    emit("key " + key);

    std::vector<Loaded> cands;
    {
      std::ifstream in(w.candidates);
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream f(line);
        Loaded l;
        f >> l.c.id >> l.c.so_path >> l.c.generator >> l.c.family;
        if (l.c.so_path == "-") l.c.so_path.clear();
        if (!l.c.id.empty()) cands.push_back(l);
      }
    }
    auto use = [&](const Loaded& l) {
      batchconv::clear_tuned_conv_kernels();
      if (!l.fn) return;
      batchconv::TunedConvKernel k;
      k.op = op;
      k.shape_key = key;
      k.generator = l.c.generator;
      k.family = l.c.family;
      k.fn = l.fn;
      k.name = l.c.id;
      batchconv::register_tuned_conv_kernel(k);
    };
    // Load, check, calibrate.
    for (Loaded& l : cands) {
      emit("begin " + l.c.id);
      if (!l.c.so_path.empty()) {
        void* h = dlopen(l.c.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        l.fn = reinterpret_cast<batchconv::ConvKernelFn>(dlsym(h, "cand"));
        if (!l.fn) throw std::runtime_error("no function 'cand' in " + l.c.so_path);
      }
      use(l);
      bcbench::poison_output(*p);
      direct->run(*p);
      if (l.fn && batchconv::last_conv_kernel() != l.c.id) {
        emit("wrong " + l.c.id + " inf the call ran " + batchconv::last_conv_kernel() + ", not the candidate");
        l.ok = false;
        continue;
      }
      const double err = bcbench::check_output(*p, plan);
      if (!(err <= w.tol)) {
        emit("wrong " + l.c.id + " max relative error " + fmt(err) + " against the double reference (tolerance " +
             fmt(w.tol) + ")");
        l.ok = false;
        continue;
      }
      emit("checked " + l.c.id + " " + fmt(err));
      const double t0 = bcbench::now_seconds();
      direct->run(*p);
      const double once_ms = std::max(1e-3, (bcbench::now_seconds() - t0) * 1e3);
      l.inner = std::clamp(static_cast<int>(std::ceil(w.min_sample_ms / once_ms)), 1, 10000);
    }
    // One untimed round first (the first runs after loading pay for cold
    // caches and pages), then interleaved rounds, the order rotated each round.
    for (Loaded& l : cands) {
      if (!l.ok) continue;
      emit("begin " + l.c.id);
      use(l);
      direct->run(*p);
    }
    for (int r = 0; r < w.rounds; ++r) {
      for (size_t k = 0; k < cands.size(); ++k) {
        Loaded& l = cands[(k + static_cast<size_t>(r)) % cands.size()];
        if (!l.ok) continue;
        emit("begin " + l.c.id);
        use(l);
        const double t0 = bcbench::now_seconds();
        for (int i = 0; i < l.inner; ++i) direct->run(*p);
        const double ms = (bcbench::now_seconds() - t0) * 1e3 / l.inner;
        emit("sample " + l.c.id + " " + fmt(ms));
      }
    }
    batchconv::clear_tuned_conv_kernels();
    if (w.peer) {
      emit("begin peer");
      bcbench::RunOptions ro;
      ro.only = {"onednn"};
      ro.timing.min_reps = std::max(3, w.rounds);
      ro.timing.max_seconds = 5;
      try {
        const auto results = bcbench::run_methods(*p, plan, ro);
        if (const bcbench::MethodResult* best = bcbench::best_onednn(results))
          emit("peer " + best->name + " " + fmt(best->timing.median_ms));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "oneDNN peer: %s\n", e.what());
      }
    }
    emit("done");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "measure worker: %s\n", e.what());
    return 2;
  }
}

namespace {

std::vector<std::string> worker_argv(const std::string& self, const char* mode,
                                     const MeasureOptions& o) {
  std::vector<std::string> a{self, mode, "--rounds=" + std::to_string(o.rounds),
                             "--min-sample-ms=" + fmt(o.min_sample_ms), "--tol=" + fmt(o.tol)};
  if (o.threads > 0) a.push_back("--worker-threads=" + std::to_string(o.threads));
  if (o.peer) a.push_back("--peer");
  a.insert(a.end(), o.problem_flags.begin(), o.problem_flags.end());
  return a;
}

}  // namespace

Probe probe(const MeasureOptions& o, const std::string& self, const std::string& work_dir) {
  Probe pr;
  LineProcess w(worker_argv(self, "--probe-worker", o), work_dir + "/probe.log");
  std::string line;
  while (w.read_line(&line, 600)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "key") pr.shape_key = line.substr(4);
    else if (kind == "default") in >> pr.default_family;
    else if (kind == "probe") {
      std::string fam, gen;
      in >> fam >> gen;
      pr.generator_of_family[fam] = gen;
    }
  }
  const ProcResult r = w.wait();
  if (!r.ok() || pr.shape_key.empty() || pr.generator_of_family.size() != 2)
    pr.error = "the problem cannot run (" + r.describe() + "): " + r.log_tail;
  return pr;
}

MeasureResult measure(const std::vector<Candidate>& cands_in, const MeasureOptions& o,
                      const std::string& self, const std::string& work_dir) {
  MeasureResult res;
  std::vector<Candidate> left = cands_in;
  for (int attempt = 0; !left.empty() && attempt <= static_cast<int>(cands_in.size()); ++attempt) {
    const std::string list = work_dir + "/candidates.txt";
    {
      std::ofstream f(list, std::ios::trunc);
      for (const Candidate& c : left)
        f << c.id << " " << (c.so_path.empty() ? "-" : c.so_path) << " "
          << (c.generator.empty() ? "-" : c.generator) << " " << c.family << "\n";
    }
    std::vector<std::string> argv = worker_argv(self, "--measure-worker", o);
    argv.insert(argv.begin() + 2, "--candidates=" + list);
    LineProcess w(argv, work_dir + "/measure.log");
    std::map<std::string, std::vector<double>> samples;
    std::map<std::string, Measured> verdict;
    std::string current, line;
    bool done = false;
    // The first line waits for the reference; later ones for one candidate.
    double timeout = o.line_timeout_s + 600;
    while (w.read_line(&line, timeout)) {
      timeout = o.line_timeout_s;
      std::istringstream in(line);
      std::string kind, id;
      in >> kind >> id;
      if (kind == "begin") current = id;
      else if (kind == "checked") {
        double err = 0;
        in >> err;
        verdict[id].max_rel_err = err;
        if (!(err <= o.tol)) {
          verdict[id].status = "wrong";
          verdict[id].message = "max relative error " + fmt(err) + " against the double reference";
        }
      } else if (kind == "wrong") {
        verdict[id].status = "wrong";
        std::string rest;
        std::getline(in, rest);
        verdict[id].message = rest.empty() ? rest : rest.substr(1);
      } else if (kind == "sample") {
        double ms = 0;
        in >> ms;
        samples[id].push_back(ms);
      } else if (kind == "peer") {
        res.peer_name = id;
        in >> res.peer_ms;
      } else if (kind == "done") {
        done = true;
      }
    }
    const bool hung = w.timed_out();
    if (hung) w.kill();
    const ProcResult r = w.wait();
    for (auto& [id, m] : verdict) {
      if (m.status != "ok") res.by_id[id] = m;
    }
    if (done && r.ok()) {
      for (const Candidate& c : left) {
        if (res.by_id.count(c.id)) continue;
        Measured m = verdict[c.id];
        if (samples[c.id].empty()) {
          m.status = "crash";
          m.message = "no timing";
        } else {
          m.median_ms = bcbench::median(samples[c.id]);
        }
        res.by_id[c.id] = m;
      }
      return res;
    }
    // Blame the candidate that was running; measure the rest again.
    if (current.empty() || current == "peer") {
      for (const Candidate& c : left) {
        if (res.by_id.count(c.id)) continue;
        res.by_id[c.id] = {"crash", "the measuring worker failed before any candidate ran (" +
                                        r.describe() + "): " + r.log_tail};
      }
      return res;
    }
    Measured& blamed = res.by_id[current];
    blamed.status = hung ? "timeout" : "crash";
    blamed.message = hung ? "no progress for " + fmt(o.line_timeout_s) + " s"
                          : "the measuring worker died (" + r.describe() + "): " + r.log_tail;
    std::vector<Candidate> rest;
    for (const Candidate& c : left)
      if (!res.by_id.count(c.id)) rest.push_back(c);
    left = rest;
  }
  return res;
}

}  // namespace batchconv_tune

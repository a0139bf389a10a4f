// seed-workloads: the seed workloads through batchconv, oneDNN and the
// naive formulations (and PyTorch, when available), in one run, as one
// markdown table. usage: seed-workloads [--quick] [--no-torch] [--only=ID,...]
//                                      [--threads=T] [--help]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "onednn_conv.h"
#include "parallel.h"
#include "report.h"
#include "runner.h"
#include "torch_column.h"
#include "workloads.h"

#ifdef BCBENCH_HAVE_OPENMP
#include <omp.h>
#endif

namespace bcbench {
namespace {

const char kUsage[] =
    "usage: seed-workloads [--quick] [--no-torch] [--only=ID[,ID...]] [--threads=T]\n"
    "  Runs the seed workloads (W1..W4) through batchconv, oneDNN (same NCHW memory)\n"
    "  and the naive formulations in the same run and prints one markdown table:\n"
    "  median ms, GFLOP/s, share of the binding machine limit (peak FMA, or the\n"
    "  bandwidth floor = bytes of inputs+output / copy bandwidth), peak extra memory\n"
    "  (heap high-water mark beyond inputs+output, see batchconv-bench --help), speed\n"
    "  vs the fastest full-op oneDNN method, and the max relative error against the\n"
    "  double-precision reference on sampled sub-problems.\n"
    "  --quick     small shapes, 2 timed runs each: a smoke test (seconds)\n"
    "  --no-torch  skip the PyTorch column (benchmarks/torch_peer.py via /usr/bin/python3)\n"
    "  --only=ID   run only workloads whose id starts with one of the given prefixes (W1, W2, W3 B=1...)\n"
    "  --threads=T threads for every method (default: all cores)\n"
    "  --peak-gflops=G --sgemm-gflops=G --bw-gbs=B  use these limits instead of measuring them\n"
    "              (e.g. from an earlier measure-peak on a quiet machine)\n";

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string load_average() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[128] = "?";
  if (f) {
    if (!std::fgets(buf, sizeof buf, f)) buf[0] = 0;
    std::fclose(f);
  }
  std::string s(buf);
  const size_t third = s.find(' ', s.find(' ', s.find(' ') + 1) + 1);
  return s.substr(0, third);
}

struct Options {
  bool quick = false, torch = true;
  double peak = 0, sgemm = 0, bw = 0;  // given limits
  std::vector<std::string> only;
  int threads = 0;
};

bool selected(const Workload& w, const Options& o) {
  if (o.only.empty()) return true;
  for (const auto& s : o.only)
    if (w.id.rfind(s, 0) == 0) return true;
  return false;
}

int run(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return std::fputs(kUsage, stdout), 0;
    if (a == "--quick") o.quick = true;
    else if (a == "--no-torch") o.torch = false;
    else if (a.rfind("--only=", 0) == 0) {
      std::string v = a.substr(7);
      size_t s = 0;
      while (true) {
        size_t e = v.find(',', s);
        o.only.push_back(v.substr(s, e - s));
        if (e == std::string::npos) break;
        s = e + 1;
      }
    } else if (a.rfind("--peak-gflops=", 0) == 0) {
      o.peak = std::atof(a.c_str() + 14);
    } else if (a.rfind("--sgemm-gflops=", 0) == 0) {
      o.sgemm = std::atof(a.c_str() + 15);
    } else if (a.rfind("--bw-gbs=", 0) == 0) {
      o.bw = std::atof(a.c_str() + 9);
    } else if (a.rfind("--threads=", 0) == 0) {
      o.threads = std::atoi(a.c_str() + 10);
      if (o.threads < 1) return std::fprintf(stderr, "seed-workloads: --threads needs a positive integer\n"), 2;
    } else {
      std::fprintf(stderr, "seed-workloads: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }
  if (o.threads > 0) {
    batchconv::set_num_threads(o.threads);
#ifdef BCBENCH_HAVE_OPENMP
    omp_set_num_threads(o.threads);
#endif
  }
  set_bench_threads(o.threads);
  const int threads = bench_threads();
  const double t_start = now_seconds();

  if (o.peak < 0 || o.sgemm < 0 || o.bw < 0)
    return std::fprintf(stderr, "seed-workloads: limits must be positive numbers\n"), 2;
  const bool given = o.peak > 0 && o.bw > 0;
  MachineLimits lim;
  if (given) {
    lim.fma_gflops = o.peak, lim.sgemm_gflops = o.sgemm, lim.copy_gbs = o.bw, lim.fma_isa = "-";
  } else {
    lim = measure_machine_limits(threads, o.quick);
  }
  std::printf("## batchconv seed workloads%s\n\n", o.quick ? " (--quick: small shapes, smoke test only)" : "");
  std::printf("- machine: %s; %d threads used\n", cpu_description().c_str(), threads);
  std::printf("- versions: Halide %s, oneDNN %s, compiler %s\n", BCBENCH_HALIDE_VERSION,
              dnnl_version_string().c_str(), BCBENCH_COMPILER);
  std::printf("- batchconv kernel target selected: %s\n", batchconv::selected_target().c_str());
  std::printf("- %s limits: peak FMA %.0f GFLOP/s (%d threads, %s FMAs), oneDNN sgemm %.0f GFLOP/s, "
              "copy bandwidth %.1f GB/s (read+write, reused buffer)\n",
              given ? "given" : "measured", lim.fma_gflops, threads, lim.fma_isa.c_str(), lim.sgemm_gflops, lim.copy_gbs);
  std::printf("- load average when starting: %s (figures are only comparable within one run on a busy machine)\n",
              load_average().c_str());
  std::printf("- share = time of the binding limit / median: \"fma\" = flops / peak FMA, \"bw\" = bytes of "
              "inputs+output / copy bandwidth (the bandwidth floor)\n");
  std::printf("- vs oneDNN = median of the fastest oneDNN method that computes the whole op from the NCHW "
              "tensors / this median (>1: faster than oneDNN); conv-only rows exclude layout changes\n");
  std::printf("- extra mem = heap high-water mark above inputs+output during setup + first run (all "
              "malloc calls counted)\n\n");
  std::fflush(stdout);

  const std::vector<Workload> all = seed_workloads(o.quick);
  std::vector<Workload> ws;
  for (const auto& w : all)
    if (selected(w, o)) ws.push_back(w);

  std::printf("| workload | method | median ms | min ms | GFLOP/s | share | extra mem | vs oneDNN | max rel err |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<std::string> notes, failures;
  std::vector<std::pair<std::string, double>> onednn_ms;  // for the torch rows' ratio
  std::vector<std::pair<std::string, double>> workload_flops;
  for (const auto& w : ws) {
    std::fprintf(stderr, "seed-workloads: %s ...\n", w.id.c_str());
    std::unique_ptr<Problem> p;
    try {
      p = make_problem(w.spec, 1);
    } catch (const std::exception& e) {
      std::printf("| %s | (invalid) | %s | | | | | | |\n", w.id.c_str(), e.what());
      continue;
    }
    const CheckPlan plan = plan_check(*p, CheckMode::Sample);
    RunOptions ro;
    ro.timing = w.timing;
    ro.slow_run_seconds = 2.0;  // a method slower than 2 s per run is timed once (marked "1 run")
    const std::vector<MethodResult> res = run_methods(*p, plan, ro);
    const MethodResult* peer = best_onednn(res);
    if (peer) onednn_ms.emplace_back(w.id, peer->timing.median_ms);
    workload_flops.emplace_back(w.id, p->flops);
    std::string bound, impls;
    const double floor = floor_ms(*p, lim, &bound);
    std::printf("| **%s** %s | limit floor (%s) | %.3f | | | 100%% %s | | | |\n", w.id.c_str(), w.title.c_str(),
                bound.c_str(), floor, bound.c_str());
    for (const auto& m : res) {
      if (!m.error.empty()) {
        std::printf("| %s | %s | error: %s | | | | | | |\n", w.id.c_str(), m.name.c_str(), m.error.c_str());
        failures.push_back(w.id + " " + m.name + ": " + m.error);
        continue;
      }
      if (m.checked && !m.pass) failures.push_back(w.id + " " + m.name + ": max rel err " + fmt("%.2e", m.max_rel_err));
      const std::string ms = fmt("%.3f", m.timing.median_ms) + (m.timing.ms.size() < 2 ? " (1 run)" : "");
      std::printf("| %s | %s | %s | %.3f | %.1f | %s | %s | %s | %s |\n", w.id.c_str(),
                  (m.family == Family::Batchconv ? "**" + m.name + "**" : m.name).c_str(), ms.c_str(),
                  m.timing.min_ms,
                  m.gflops, share_of_limit(*p, lim, m.timing.median_ms).c_str(),
                  human_bytes(static_cast<double>(m.extra_bytes)).c_str(),
                  peer ? fmt("%.2fx", peer->timing.median_ms / m.timing.median_ms).c_str() : "-",
                  m.checked ? fmt("%.1e", m.max_rel_err).c_str() : "-");
      if (!m.impl.empty()) impls += (impls.empty() ? "" : ", ") + m.name + " " + m.impl;
    }
    notes.push_back(w.id + ": checked on " + plan.how + (impls.empty() ? "" : "; oneDNN kernels: " + impls));
    std::fflush(stdout);
  }

  if (o.torch) {
    std::fprintf(stderr, "seed-workloads: PyTorch column ...\n");
    TorchResults t = run_torch_peer(BCBENCH_TORCH_PEER, ws, o.quick ? 1 : 2);
    if (!t.skipped.empty()) {
      notes.push_back("PyTorch column skipped: " + t.skipped);
    } else {
      for (const auto& r : t.rows) {
        double peer = 0;
        for (const auto& [id, ms] : onednn_ms)
          if (id == r.id) peer = ms;
        auto flops_of = [&](const std::string& id) {
          for (const auto& [fid, f] : workload_flops)
            if (fid == id) return f;
          return 0.0;
        };
        if (r.median_ms < 0) {
          std::printf("| %s | %s | %s | | | | | | |\n", r.id.c_str(), r.method.c_str(), r.note.c_str());
          continue;
        }
        std::printf("| %s | %s | %.3f%s | %.3f | %.1f | | n/a | %s | |\n", r.id.c_str(), r.method.c_str(),
                    r.median_ms, r.note.empty() ? "" : (" (" + r.note + ")").c_str(), r.min_ms,
                    flops_of(r.id) / (r.median_ms * 1e6), peer > 0 ? fmt("%.2fx", peer / r.median_ms).c_str() : "-");
      }
      notes.push_back("torch rows: PyTorch 1.13 (/usr/bin/python3, torch.set_num_threads(2)), median of " +
                      std::to_string(o.quick ? 1 : 2) + " runs after a warm-up; outputs allocated per call");
      notes.insert(notes.end(), t.notes.begin(), t.notes.end());
    }
  }
  std::printf("\nNotes:\n");
  for (const auto& n : notes) std::printf("- %s\n", n.c_str());
  std::printf("- total wall time %.0f s\n", now_seconds() - t_start);
  if (!failures.empty()) {
    std::printf("\nFAILURES (wrong results or errors):\n");
    for (const auto& f : failures) std::printf("- %s\n", f.c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace bcbench

int main(int argc, char** argv) { return bcbench::run(argc, argv); }

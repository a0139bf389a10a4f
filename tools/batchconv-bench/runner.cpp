#include "runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "alloc_counter.h"
#include "onednn_conv.h"

namespace bcbench {

bool method_selected(const Method& m, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  static const char* fam[] = {"batchconv", "onednn", "naive"};
  for (const auto& s : only)
    if (s == m.name || s == fam[static_cast<int>(m.family)]) return true;
  return false;
}

void check_methods_exist(Problem& p, const std::vector<std::string>& only) {
  if (only.empty()) return;
  MethodList methods = make_methods(p);
  for (const auto& s : only) {
    bool found = false;
    for (const auto& m : methods) found |= method_selected(*m, {s});
    if (found) continue;
    std::string names = "batchconv, onednn, naive";
    for (const auto& m : methods) names += ", " + m->name;
    throw std::invalid_argument("--methods: '" + s + "' names no method of " + op_name(p.spec.op) +
                                " at these shapes (known: " + names + ")");
  }
}

// One-time library start-up (oneDNN's engine and CPU detection, the OpenMP
// and Halide thread pools) allocates memory that belongs to no method; do it
// once here so that it is not charged to whichever method happens to run first.
void warm_up_libraries() {
  static bool done = false;
  if (done) return;
  done = true;
  ConvGeom g;
  g.n = 2, g.cin = 4, g.h = 6, g.w = 6, g.cout = 4, g.kh = 3, g.kw = 3, g.oh = 4, g.ow = 4;
  Buffer x(2 * 4 * 36), w(4 * 4 * 9), y(2 * 4 * 16);
  try {
    OnednnConv(g, false, OnednnConv::Layout::Plain).execute(x.data(), w.data(), nullptr, y.data());
    batchconv::grouped_conv(batchconv::TensorView(x.data(), {2, 4, 6, 6}),
                            batchconv::TensorView(w.data(), {4, 4, 3, 3}), nullptr,
                            batchconv::TensorView(y.data(), {2, 4, 4, 4}), batchconv::ConvDesc());
  } catch (const std::exception&) {
    // A broken library shows up in the methods' own results.
  }
}

std::vector<MethodResult> run_methods(Problem& p, const CheckPlan& plan, const RunOptions& o) {
  warm_up_libraries();
  std::vector<MethodResult> out;
  MethodList methods = make_methods(p);
  for (auto& mp : methods) {
    Method& m = *mp;
    if (!method_selected(m, o.only)) continue;
    MethodResult r;
    r.name = m.name;
    r.what = m.what;
    r.family = m.family;
    r.full_op = m.full_op;
    if (o.verbose) std::fprintf(stderr, "  running %s ...\n", m.name.c_str());
    poison_output(p);
    mem::trim();
    mem::reset_rss_peak();
    const int64_t rss0 = mem::rss_bytes(), live0 = mem::live_bytes();
    mem::reset_peak();
    try {
      m.setup(p);
      const double t0 = now_seconds();
      m.run(p);  // first run: part of the memory measurement, and the first warm-up
      const double first = now_seconds() - t0;
      r.extra_bytes = mem::peak_bytes() - live0;
      r.rss_extra_bytes = std::max<int64_t>(0, mem::rss_peak_bytes() - rss0);
      TimingPolicy tp = o.timing;
      tp.warmup = std::max(0, tp.warmup - 1);
      if (first > o.slow_run_seconds) tp.warmup = 0, tp.min_reps = tp.max_reps = 1;
      r.timing = time_runs([&] { m.run(p); }, tp);
      m.finish(p);
      r.impl = m.impl;
      r.gflops = p.flops / (r.timing.median_ms * 1e6);
      if (!plan.samples.empty()) {
        r.checked = true;
        r.max_rel_err = check_output(p, plan);
        r.pass = r.max_rel_err <= o.tol;
      }
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    mp.reset();  // free the method's buffers before the next one is measured
    out.push_back(std::move(r));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let spinning pools idle
  }
  return out;
}

double floor_ms(const Problem& p, const MachineLimits& m, std::string* bound) {
  if (m.fma_gflops <= 0 || m.copy_gbs <= 0) return 0;
  const double fma = p.flops / (m.fma_gflops * 1e6);
  const double bw = p.io_bytes / (m.copy_gbs * 1e6);
  if (bound) *bound = fma >= bw ? "fma" : "bw";
  return std::max(fma, bw);
}

const MethodResult* best_onednn(const std::vector<MethodResult>& r) {
  const MethodResult* best = nullptr;
  for (const auto& m : r)
    if (m.family == Family::Onednn && m.full_op && m.error.empty() &&
        (!best || m.timing.median_ms < best->timing.median_ms))
      best = &m;
  return best;
}

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (std::fabs(b) >= 1024 && u < 3) b /= 1024, ++u;
  char s[32];
  std::snprintf(s, sizeof s, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
  return s;
}

}  // namespace bcbench

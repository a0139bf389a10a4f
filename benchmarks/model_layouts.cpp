// model-layouts: whole models compiled by the model compiler (Halide JIT, the
// same lowering and code generation as batchconv-compile's libraries) with
// the layout plan's default policy (auto: conv results channels innermost
// between channels-family convs) and with every conv result NCHW, timed in
// the same run, interleaved, on preallocated buffers, with the pipeline's
// peak heap beside each. Prints a Markdown table and each model's plan.
//
//   model-layouts [--reps=N] [--only=<model>[,<model>...]] [--profile] [--fit-rows=0] [--epilogues=relu]
//                 [--pool-layouts=0] [--weights=runtime] [--nchw=rows]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>
#include <vector>

#include "Halide.h"
#include "host_target.h"
#include "layout_plan.h"
#include "lower.h"
#include "machine_limits.h"
#include "model_peers.h"
#include "model_specs.h"
#include "onnx/onnx_io.h"

namespace {

using batchconv::compiler::LayoutPolicy;
using namespace model_layouts;

// Peak heap of the pipeline (its compute_root intermediates), through Halide's JIT allocator hook.
// Parallel tasks allocate concurrently, so the counters are atomic (a plain counter once lost updates
// and wrapped below zero).
std::atomic<size_t> g_live{0}, g_peak{0};
void* counting_malloc(Halide::JITUserContext*, size_t n) {
  char* p = static_cast<char*>(std::aligned_alloc(128, (n + 128 + 127) / 128 * 128));
  if (!p) return nullptr;
  std::memcpy(p, &n, sizeof n);
  const size_t live = g_live.fetch_add(n) + n;
  size_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p + 128;
}
void counting_free(Halide::JITUserContext*, void* q) {
  if (!q) return;
  char* p = static_cast<char*>(q) - 128;
  size_t n;
  std::memcpy(&n, p, sizeof n);
  g_live.fetch_sub(n);
  std::free(p);
}

struct Compiled {
  batchconv::compiler::LoweredModel low;
  std::vector<Halide::Buffer<float>> ins, outs, weights;  // weights: with --weights=runtime
  double flops = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  // oneDNN's OpenMP threads spin after each primitive (libgomp's default
  // wait policy), taking the cores from the Halide call timed next; libgomp
  // reads the policy when it loads, so the process restarts itself with it.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
  }
  int reps = 9;
  bool profile = false, fit_rows = true, relu_epilogues_only = false, pool_layouts = true, runtime_weights = false;
  bool nchw_rows = false;
  std::vector<std::string> only;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    if (a.rfind("--reps=", 0) == 0) {
      reps = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--epilogues=relu" || a == "--epilogues=chains") {
      relu_epilogues_only = a == "--epilogues=relu";
    } else if (a == "--fit-rows=0" || a == "--fit-rows=1") {
      fit_rows = a.back() == '1';
    } else if (a == "--nchw=rows" || a == "--nchw=chooser") {
      nchw_rows = a == "--nchw=rows";
    } else if (a == "--weights=runtime" || a == "--weights=baked") {
      runtime_weights = a == "--weights=runtime";
    } else if (a == "--pool-layouts=0" || a == "--pool-layouts=1") {
      pool_layouts = a.back() == '1';
    } else if (a.rfind("--only=", 0) == 0) {
      std::stringstream ss(a.substr(7));
      for (std::string m; std::getline(ss, m, ',');) only.push_back(m);
    } else {
      std::fprintf(stderr, "usage: model-layouts [--reps=N] [--only=<model>[,...]] [--profile] [--fit-rows=0]\n"
                           "                     [--epilogues=relu] [--pool-layouts=0] [--weights=runtime] [--nchw=rows]\n"
                           "  --profile: Halide's profiler in the pipelines (time per stage, printed at exit;\n"
                           "             the timings then include its sampling)\n"
                           "  --fit-rows=0: channels convs without tiles fitted to the row (the runtime's point)\n"
                           "  --epilogues=relu: a conv's epilogue is at most one Relu (the fusion plan before\n"
                           "             elementwise chains); default: chains after convs, Gemms and MatMuls\n"
                           "  --pool-layouts=0: pools store NCHW and a conv read by one stays NCHW (the layout\n"
                           "             plan before pools took channels innermost)\n"
                           "  --weights=runtime: the weights are arguments of the pipelines, not baked in\n"
                           "  --nchw=rows: the NCHW-only build also puts every conv on the rows family (x vectors),\n"
                           "             as the compiler did before the chooser's families and the layout plan\n");
      return 2;
    }
  }
  // Halide's JIT thread pool has one thread per core (HL_NUM_THREADS overrides).
  const char* env = std::getenv("HL_NUM_THREADS");
  const int threads = env ? std::max(1, std::atoi(env)) : static_cast<int>(std::thread::hardware_concurrency());
  const bcbench::MachineLimits lim = bcbench::measure_machine_limits(threads, false);
  std::printf("# model-layouts\n\n%s, %d threads; peak FMA %.0f GFLOP/s (%s), copy %.1f GB/s, measured in this run.\n"
              "Halide %s JIT, target %s. Median ms of %d interleaved calls each (auto and NCHW in\n"
              "alternating order), preallocated buffers;\n"
              "OMP_WAIT_POLICY=%s.\n\n",
              bcbench::cpu_description().c_str(), threads, lim.fma_gflops, lim.fma_isa.c_str(), lim.copy_gbs,
              BCBENCH_HALIDE_VERSION, batchconv_gen::host_target().to_string().c_str(), reps,
              std::getenv("OMP_WAIT_POLICY"));
  if (nchw_rows) std::printf("NCHW only: every conv also on the rows family (--nchw=rows).\n\n");
  if (runtime_weights) std::printf("Weights: arguments of the pipelines (--weights=runtime).\n\n");
  std::vector<ModelSpec> specs = benchmark_models();
  std::printf("oneDNN %s, layer by layer in its blocked layouts (reorders at the edges and where layouts differ);\n"
              "PyTorch layer by layer (benchmarks/model_peer.py, NCHW, no_grad, 2 threads), after the others.\n\n",
              bcbench::dnnl_version_string().c_str());
  struct Row {
    std::string name;
    double auto_ms, nchw_ms, onednn_ms, share;
    size_t auto_heap, nchw_heap;
  };
  std::vector<Row> rows;
  std::vector<ModelSpec> timed;
  std::vector<std::string> plans;
  Halide::Target jit_target = batchconv_gen::host_target();
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const ModelSpec& spec : specs) {
    if (!only.empty() && std::find(only.begin(), only.end(), spec.name) == only.end()) continue;
    std::unique_ptr<batchconv::ir::Model> model = batchconv::io::parse_model(spec.text, spec.name + ".onnxtxt");
    // Weights become baked initializers (random, scaled to keep activations finite).
    for (batchconv::ir::Value* v : model->graph.inputs) {
      if (v->name == "x") continue;
      auto t = std::make_shared<batchconv::ir::Tensor>();
      t->dtype = batchconv::ir::DType::Float;
      for (const batchconv::ir::Dim& d : *v->type.shape) t->shape.push_back(d.value);
      t->f.resize(static_cast<size_t>(t->numel()));
      // Weights: 1 / sqrt(fan-in) (per task for the batched op's leading dim); biases 0.1.
      int64_t outs = t->shape[0] * (t->shape.size() == 5 ? t->shape[1] : 1);
      const float scale = v->name[0] == 'w' ? 1.0f / std::sqrt(static_cast<float>(t->numel() / outs)) : 0.1f;
      for (float& f : t->f) f = nd(rng) * scale;
      v->constant = t;
    }
    std::vector<Compiled> variants(2);
    const LayoutPolicy policies[2] = {LayoutPolicy::Auto, LayoutPolicy::Nchw};
    for (int k = 0; k < 2; ++k) {
      batchconv::compiler::LowerOptions o;
      o.layouts = policies[k];
      o.fit_rows = fit_rows;
      o.relu_epilogues_only = relu_epilogues_only;
      o.pool_layouts = pool_layouts;
      o.runtime_weights = runtime_weights;
      o.rows_family_only = nchw_rows && k == 1;
      Compiled& c = variants[k];
      c.low = batchconv::compiler::lower_model(*model, spec.name, o);
      for (batchconv::compiler::ParamInfo& p : c.low.inputs) {
        std::vector<int> ext(p.shape.rbegin(), p.shape.rend());
        c.ins.emplace_back(ext);
        c.ins.back().for_each_value([&](float& f) { f = nd(rng); });
        p.param.set(c.ins.back());
      }
      for (batchconv::compiler::ParamInfo& p : c.low.weights) {
        const batchconv::ir::Tensor& w = *model->graph.find_value(p.onnx_name)->constant;
        std::vector<int> ext(p.shape.rbegin(), p.shape.rend());
        c.weights.emplace_back(ext);
        std::copy(w.f.begin(), w.f.end(), c.weights.back().data());
        p.param.set(c.weights.back());
      }
      for (const batchconv::compiler::OutputInfo& out : c.low.outputs) {
        std::vector<int> ext(out.internal_extents.begin(), out.internal_extents.end());
        c.outs.emplace_back(ext);
        c.outs.back().fill(0.f);
      }
      c.low.pipeline.jit_handlers().custom_malloc = counting_malloc;
      c.low.pipeline.jit_handlers().custom_free = counting_free;
      Halide::Target target = batchconv_gen::host_target();
      if (profile) target = target.with_feature(Halide::Target::Profile);
      jit_target = target;
      c.low.pipeline.compile_jit(target);
      for (const auto& [node, q] : c.low.conv_problems)
        c.flops += 2.0 * q.batch * q.n * q.groups * q.cout_g * q.out_h * q.out_w * q.cin_g * q.kernel_h * q.kernel_w;
      for (const GemmLayer& g : spec.gemms) c.flops += 2.0 * g.rows * g.k * g.n;
      if (k == 0) {
        plans.push_back("**" + spec.name + "** (" + spec.what + "):");
        for (const std::string& l : c.low.layout_explanations) plans.push_back("- " + l);
      }
    }
    // Same inputs for both; check they agree.
    for (size_t i = 0; i < variants[0].ins.size(); ++i) variants[1].ins[i].copy_from(variants[0].ins[i]);
    std::unique_ptr<OnednnPeer> conv_peer;
    std::unique_ptr<SgemmPeer> gemm_peer;
    if (spec.gemms.empty()) conv_peer = std::make_unique<OnednnPeer>(spec, *model, threads);
    else gemm_peer = std::make_unique<SgemmPeer>(spec, *model, threads);
    std::vector<float> peer_out(variants[0].outs[0].number_of_elements());
    std::vector<double> t[2], tp;
    size_t peak[2] = {0, 0};
    for (int r = 0; r < reps + 2; ++r) {
      {
        const auto t0 = std::chrono::steady_clock::now();
        if (conv_peer) conv_peer->run(variants[0].ins[0].data(), peer_out.data());
        else gemm_peer->run(variants[0].ins[0].data(), peer_out.data());
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r >= 2) tp.push_back(ms);
      }
      // The two orders alternate: the call right after oneDNN's ran up to
      // 12% slower (same pipeline twice on seed 1).
      for (int j = 0; j < 2; ++j) {
        const int k = (r + j) % 2;
        Compiled& c = variants[k];
        std::vector<Halide::Buffer<>> outs(c.outs.begin(), c.outs.end());
        const size_t live0 = g_live.load();
        g_peak.store(live0);
        const auto t0 = std::chrono::steady_clock::now();
        c.low.pipeline.realize(Halide::Realization(outs), jit_target);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        peak[k] = std::max(peak[k], g_peak.load() - live0);
        if (r >= 2) t[k].push_back(ms);  // two warmups
      }
    }
    double maxdiff = 0, maxabs = 0;
    for (size_t i = 0; i < variants[0].outs.size(); ++i) {
      const Halide::Buffer<float>& a = variants[0].outs[i];
      const Halide::Buffer<float>& b = variants[1].outs[i];
      for (size_t e = 0; e < a.number_of_elements(); ++e) {
        maxdiff = std::max(maxdiff, static_cast<double>(std::fabs(a.data()[e] - b.data()[e])));
        maxabs = std::max(maxabs, static_cast<double>(std::fabs(b.data()[e])));
      }
    }
    double peer_diff = 0;
    for (size_t e = 0; e < peer_out.size(); ++e)
      peer_diff = std::max(peer_diff, static_cast<double>(std::fabs(peer_out[e] - variants[0].outs[0].data()[e])));
    if (maxdiff > 1e-4 * std::max(1.0, maxabs) || peer_diff > 1e-3 * std::max(1.0, maxabs)) {
      std::fprintf(stderr, "model-layouts: %s: results disagree (auto vs nchw %g, vs oneDNN %g, max |y| %g)\n",
                   spec.name.c_str(), maxdiff, peer_diff, maxabs);
      return 1;
    }
    const double ma = median(t[0]), mn = median(t[1]), mp = median(tp);
    rows.push_back({spec.name, ma, mn, mp, 100.0 * variants[0].flops / (ma * 1e6) / lim.fma_gflops, peak[0], peak[1]});
    std::fprintf(stderr, "model-layouts: %s: auto %.2f ms, nchw %.2f ms, oneDNN %.2f ms\n", spec.name.c_str(), ma, mn, mp);
    plans.push_back("  oneDNN: " + (conv_peer ? conv_peer->impls() : gemm_peer->impls()));
    timed.push_back(spec);
    std::fflush(stdout);
  }
  // PyTorch, in its own process once ours are done.
  std::string torch_note;
  std::map<std::string, double> torch_ms = run_torch_peer(BCBENCH_MODEL_PEER, timed, reps, &torch_note);
  std::printf("| model | layouts auto (ms) | peak heap (MiB) | NCHW only (ms) | peak heap (MiB) | auto vs NCHW | "
              "oneDNN (ms) | auto vs oneDNN | PyTorch (ms) | auto vs PyTorch | auto, share of FMA peak |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %.2f | %.1f | %.2f | %.1f | %.2fx | %.2f | %.2fx |", r.name.c_str(), r.auto_ms,
                r.auto_heap / 1048576.0, r.nchw_ms, r.nchw_heap / 1048576.0, r.nchw_ms / r.auto_ms, r.onednn_ms,
                r.onednn_ms / r.auto_ms);
    if (torch_ms.count(r.name)) std::printf(" %.2f | %.2fx |", torch_ms[r.name], torch_ms[r.name] / r.auto_ms);
    else std::printf(" - | - |");
    std::printf(" %.0f%% |\n", r.share);
  }
  if (!torch_note.empty()) std::printf("\nPyTorch: %s\n", torch_note.c_str());
  std::printf("\nThe plan (auto):\n\n");
  for (const std::string& l : plans) std::printf("%s\n", l.c_str());
  return 0;
}

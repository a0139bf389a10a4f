// seed1_memory: the seed-1 program (x (N, 16) -> x.t().repeat(4, 1) ->
// Conv1d(64, 64, 1, groups=4)) at N = 1e6, compiled by batchconv-compile
// with rewrites (seed1_big_r) and without (seed1_big_nr). For each, in a
// child process of its own, it prints
//   - inputs + weights + output bytes (the floor),
//   - the peak of the compiled pipeline's own heap allocations (Halide's
//     malloc hook) and the peak resident-set growth of the process over the
//     call (VmHWM after - VmRSS before allocating x and y),
//   - the median time of 5 calls into reused, pre-touched buffers.
// Both results are compared with each other (max relative difference). A
// third row runs the unrewritten model once through the reference
// interpreter (plain loops, materialising every intermediate, the repeat
// included), in its own child process.
//
//   seed1_memory [reps] [--with-interpreter]   (the interpreter row takes about a minute)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "lower.h"
#include "onnx/onnx_io.h"
#include "seed1_big_nr.h"
#include "seed1_big_r.h"

namespace {

constexpr int64_t kN = 1000000, kCin = 16, kCout = 64;

std::atomic<int64_t> g_live{0}, g_peak{0};

void* counting_malloc(void*, size_t n) {
  // Halide expects its allocations aligned (to 128 bytes at most); the size lives in front.
  void* p = std::aligned_alloc(128, (n + 128 + 127) / 128 * 128);
  if (!p) return nullptr;
  *static_cast<size_t*>(p) = n;
  int64_t live = g_live += static_cast<int64_t>(n);
  int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return static_cast<char*>(p) + 128;
}

void counting_free(void*, void* p) {
  if (!p) return;
  char* base = static_cast<char*>(p) - 128;
  g_live -= static_cast<int64_t>(*reinterpret_cast<size_t*>(base));
  std::free(base);
}

// kB from /proc/self/status.
int64_t status_kb(const char* key) {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  int64_t v = -1;
  while (f && std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, std::strlen(key)) == 0) v = std::atoll(line + std::strlen(key) + 1);
  }
  if (f) std::fclose(f);
  return v;
}

struct Result {
  double ms = 0, heap_peak_mb = 0, rss_growth_mb = 0, checksum = 0;
  int rc = 0;
};

using Fn = int (*)(const float*, float*);

// Runs in a child process; writes the Result and y into the pipe / file.
Result measure(Fn fn, int reps, std::vector<float>* y_out) {
  Result r;
  const int64_t rss0 = status_kb("VmRSS:");
  std::vector<float> x(kN * kCin), y(kCout * kN);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : x) v = u(rng);
  std::fill(y.begin(), y.end(), 0.0f);  // touch every page before timing
  g_live = 0;
  g_peak = 0;
  auto t_first = std::chrono::steady_clock::now();
  r.rc = fn(x.data(), y.data());
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_first).count();
  std::vector<double> times;
  for (int k = 0; k < reps && r.rc == 0; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    r.rc = fn(x.data(), y.data());
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  r.ms = times.empty() ? first_ms : times[times.size() / 2];
  r.heap_peak_mb = g_peak.load() / 1e6;
  r.rss_growth_mb = (status_kb("VmHWM:") - rss0) * 1024.0 / 1e6;
  for (size_t k = 0; k < y.size(); k += 997) r.checksum += y[k];
  if (y_out) *y_out = std::move(y);
  return r;
}

// The reference interpreter on the unrewritten model at N = 1e6 (one call).
int interpreter_f32(const float* x, float* y) {
  static std::unique_ptr<batchconv::ir::Model> model;
  if (!model) {
    model = batchconv::io::load_model(BATCHCONV_SEED1_MODEL);
    batchconv::compiler::bind_input_shapes(*model, BATCHCONV_SEED1_MODEL, {{"x", {kN, kCin}}});
  }
  batchconv::interp::TensorMap in;
  batchconv::ir::Tensor& t = in["x"];
  t.shape = {kN, kCin};
  t.f.assign(x, x + kN * kCin);
  batchconv::interp::TensorMap out = batchconv::interp::run(*model, in);
  std::copy(out.at("y").f.begin(), out.at("y").f.end(), y);
  return 0;
}

Result in_child(Fn fn, int reps, const std::string& y_path) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::vector<float> y;
    Result r = measure(fn, reps, &y);
    FILE* f = std::fopen(y_path.c_str(), "wb");
    if (f) std::fwrite(y.data(), sizeof(float), y.size(), f), std::fclose(f);
    if (write(fds[1], &r, sizeof r) != sizeof r) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Result r;
  if (read(fds[0], &r, sizeof r) != sizeof r) r.rc = -999;
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool with_interpreter = false;
  for (int k = 1; k < argc; ++k) {
    if (std::string(argv[k]) == "--with-interpreter") with_interpreter = true;
    else reps = std::max(1, std::atoi(argv[k]));
  }
  halide_set_custom_malloc(counting_malloc);
  halide_set_custom_free(counting_free);

  double weight_bytes = 0;
  std::unique_ptr<batchconv::ir::Model> model = batchconv::io::load_model(BATCHCONV_SEED1_MODEL);
  for (const auto& v : model->graph.values()) {
    if (v->constant && !v->producer && !v->uses.empty() && v->constant->is_float()) weight_bytes += 4.0 * v->constant->numel();
  }
  const double in_mb = 4.0 * kN * kCin / 1e6, out_mb = 4.0 * kN * kCout / 1e6, w_mb = weight_bytes / 1e6;
  const double floor_mb = in_mb + out_mb + w_mb;
  const std::string tmp = "/tmp/seed1_memory." + std::to_string(getpid());
  Result r = in_child(seed1_big_r_f32, reps, tmp + ".r");
  Result nr = in_child(seed1_big_nr_f32, reps, tmp + ".nr");
  Result ref;
  if (with_interpreter) ref = in_child(interpreter_f32, 0, tmp + ".ref");
  std::remove((tmp + ".ref").c_str());
  if (r.rc != 0 || nr.rc != 0 || ref.rc != 0) {
    std::fprintf(stderr, "seed1_memory: a compiled model failed (rc %d, %d)\n", r.rc, nr.rc);
    return 1;
  }
  // Same numbers from both libraries.
  double max_rel = 0;
  {
    std::vector<float> a(kCout * kN), b(kCout * kN);
    FILE* fa = std::fopen((tmp + ".r").c_str(), "rb");
    FILE* fb = std::fopen((tmp + ".nr").c_str(), "rb");
    if (!fa || !fb || std::fread(a.data(), 4, a.size(), fa) != a.size() || std::fread(b.data(), 4, b.size(), fb) != b.size()) {
      std::fprintf(stderr, "seed1_memory: cannot read back the outputs\n");
      return 1;
    }
    std::fclose(fa);
    std::fclose(fb);
    for (size_t k = 0; k < a.size(); ++k) max_rel = std::max(max_rel, std::fabs(double(a[k]) - b[k]) / std::max(1.0, std::fabs(double(b[k]))));
    std::remove((tmp + ".r").c_str());
    std::remove((tmp + ".nr").c_str());
  }
  // Bytes moved at least once: read x, write y.
  const double floor_gb = (in_mb + out_mb) / 1e3;
  std::printf("seed 1 at N = %lld: x (%lld, 16) -> y (64, %lld), float32; inputs %.1f MB + weights %.4f MB + output %.1f MB = %.1f MB\n",
              (long long)kN, (long long)kN, (long long)kN, in_mb, w_mb, out_mb, floor_mb);
  std::printf("| compiled model | time (ms, median of %d) | GB/s (x read + y written) | Halide heap peak (MB) | peak RSS growth (MB) | RSS / (in+w+out) |\n", reps);
  std::printf("|---|---|---|---|---|---|\n");
  auto row = [&](const char* name, const Result& x) {
    std::printf("| %s | %.2f | %.1f | %.3f | %.1f | %.3f |\n", name, x.ms, floor_gb / (x.ms / 1e3), x.heap_peak_mb,
                x.rss_growth_mb, x.rss_growth_mb / floor_mb);
  };
  row("rewritten (batchconv-compile)", r);
  row("not rewritten (--no-rewrites)", nr);
  if (with_interpreter) row("reference interpreter, not rewritten (1 call, incl. its allocations)", ref);
  std::printf("max relative difference between the two outputs: %.3g\n", max_rel);
  return max_rel <= 1e-4 ? 0 : 1;
}

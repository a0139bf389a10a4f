// batchconv-bench: see --help (args.cpp) and README.md.
#include <cstdio>
#include <cstring>

#include "alloc_counter.h"
#include "args.h"
#include "npy.h"
#include "parallel.h"
#include "report.h"

#ifdef BCBENCH_HAVE_OPENMP
#include <omp.h>
#endif

namespace bcbench {
namespace {

// Loads a .npy input: its shape becomes the spec's (which must agree with a
// shape also given by flag).
void load_shape(const std::string& path, const char* what, std::vector<int64_t>* shape, NpyArray* arr) {
  *arr = read_npy(path);
  if (!shape->empty() && *shape != arr->shape)
    throw UsageError(std::string(what) + ": " + path + " has shape " + shape_str(arr->shape) +
                     " but the flag says " + shape_str(*shape));
  *shape = arr->shape;
}

int run(int argc, char** argv) {
  BenchArgs a;
  try {
    a = parse_args(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "batchconv-bench: %s\n", e.what());
    return 2;
  }
  if (a.help) {
    std::fputs(help_text(), stdout);
    return 0;
  }
  if (a.threads > 0) {
    batchconv::set_num_threads(a.threads);
#ifdef BCBENCH_HAVE_OPENMP
    omp_set_num_threads(a.threads);
#endif
  }
  set_bench_threads(a.threads);

  std::unique_ptr<Problem> p;
  NpyArray xa, wa, ba;
  try {
    if (!a.x_npy.empty()) load_shape(a.x_npy, "--x-npy", &a.spec.x_shape, &xa);
    if (!a.w_npy.empty()) load_shape(a.w_npy, "--w-npy", &a.spec.w_shape, &wa);
    if (!a.bias_npy.empty()) ba = read_npy(a.bias_npy);
    check_flags_apply(a);
    p = make_problem(a.spec, a.seed);
    check_methods_exist(*p, a.run.only);
    if (!a.bias_npy.empty() && ba.shape != p->bv.shape)
      throw UsageError("--bias-npy: " + a.bias_npy + " has shape " + shape_str(ba.shape) + "; expected " +
                       shape_str(p->bv.shape));
    auto copy_in = [](const NpyArray& arr, Buffer& b) {
      if (!arr.data.empty()) std::memcpy(b.data(), arr.data.data(), arr.data.size() * sizeof(float));
    };
    copy_in(xa, p->x);
    copy_in(wa, p->w);
    copy_in(ba, p->b);
  } catch (const std::exception& e) {  // usage, .npy and shape errors
    std::fprintf(stderr, "batchconv-bench: %s\n", e.what());
    return 2;
  }

  ReportContext ctx;
  ctx.problem = p.get();
  ctx.threads = a.threads > 0 ? a.threads : bench_threads();
  ctx.tol = a.run.tol;
  ctx.target = batchconv::selected_target();
  if (a.peak_gflops > 0 || a.bw_gbs > 0) {
    ctx.limits.fma_gflops = a.peak_gflops;
    ctx.limits.copy_gbs = a.bw_gbs;
    ctx.limits.fma_isa = "given";
  } else if (a.measure_limits) {
    ctx.limits.fma_gflops = measure_fma_gflops(ctx.threads, &ctx.limits.fma_isa);
    ctx.limits.copy_gbs = measure_copy_gbs(ctx.threads, size_t(64) << 20);
  }
  if (!mem::counting_active()) std::fprintf(stderr, "batchconv-bench: warning: allocation counter inactive\n");

  const CheckPlan plan = plan_check(*p, a.check);
  ctx.plan = &plan;
  std::vector<MethodResult> results = run_methods(*p, plan, a.run);
  if (a.json) print_json(ctx, results);
  else print_text(ctx, results);

  int status = 0;
  for (const auto& r : results) {
    if (!r.error.empty() && r.family == Family::Batchconv) status = 1;
    if (r.checked && !r.pass) {
      std::fprintf(stderr, "batchconv-bench: %s: max relative error %.3g exceeds tolerance %.3g\n",
                   r.name.c_str(), r.max_rel_err, a.run.tol);
      status = 1;
    }
  }
  if (!a.y_npy.empty()) {  // batchconv's own output, recomputed after the other methods ran
    try {
      poison_output(*p);
      for (auto& m : make_methods(*p))
        if (m->name == "batchconv") m->setup(*p), m->run(*p);
      write_npy(a.y_npy, p->y_shape, p->y.data());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "batchconv-bench: --y-npy: %s\n", e.what());
      status = 1;
    }
  }
  return status;
}

}  // namespace
}  // namespace bcbench

int main(int argc, char** argv) { return bcbench::run(argc, argv); }

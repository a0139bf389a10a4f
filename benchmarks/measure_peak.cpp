// measure-peak: this machine's limits, measured (see machine_limits.h):
// peak FMA rate, oneDNN sgemm rate and copy bandwidth.
// usage: measure-peak [--threads=T] [--json]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "machine_limits.h"
#include "onednn_conv.h"
#include "parallel.h"

#ifdef BCBENCH_HAVE_OPENMP
#include <omp.h>
#endif

int main(int argc, char** argv) {
  int threads = 0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") json = true;
    else if (a.rfind("--threads=", 0) == 0 && std::atoi(a.c_str() + 10) > 0) threads = std::atoi(a.c_str() + 10);
    else {
      std::fprintf(stderr,
                   "usage: measure-peak [--threads=T] [--json]\n"
                   "  peak FMA (T threads of AVX-512 FMA chains), oneDNN sgemm 1536^3, copy bandwidth\n"
                   "  (T threads memcpy, 64 MiB windows of reused, pre-touched 256 MiB pools, cache-cold, read+write counted); best of several runs\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (threads > 0) {
#ifdef BCBENCH_HAVE_OPENMP
    omp_set_num_threads(threads);
#endif
  }
  bcbench::set_bench_threads(threads);
  const int t = bcbench::bench_threads();
  const bcbench::MachineLimits m = bcbench::measure_machine_limits(t, false);
  if (json) {
    std::printf("{\"cpu\": \"%s\", \"threads\": %d, \"fma_isa\": \"%s\", \"fma_gflops\": %.1f, "
                "\"sgemm_gflops\": %.1f, \"copy_gbs\": %.2f, \"onednn\": \"%s\"}\n",
                bcbench::cpu_description().c_str(), t, m.fma_isa.c_str(), m.fma_gflops, m.sgemm_gflops,
                m.copy_gbs, bcbench::dnnl_version_string().c_str());
  } else {
    std::printf("machine: %s, %d threads\n", bcbench::cpu_description().c_str(), t);
    std::printf("peak FMA (%s): %.1f GFLOP/s\n", m.fma_isa.c_str(), m.fma_gflops);
    std::printf("oneDNN %s sgemm 1536^3: %.1f GFLOP/s (%.0f%% of peak FMA)\n",
                bcbench::dnnl_version_string().c_str(), m.sgemm_gflops, 100 * m.sgemm_gflops / m.fma_gflops);
    std::printf("copy bandwidth (read+write): %.1f GB/s\n", m.copy_gbs);
  }
  return 0;
}

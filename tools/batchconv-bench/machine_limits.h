// This machine's limits, measured here (not taken from a data sheet):
//  - peak FMA rate: `threads` threads each running a loop of independent
//    AVX-512 (else AVX2/FMA3) fused multiply-adds, 2 flops per lane;
//  - oneDNN sgemm rate: dnnl_sgemm on a square n x n x n problem, 2*n^3 flops;
//  - copy bandwidth: `threads` threads memcpy-ing halves of a buffer into a
//    second, REUSED (already touched) buffer; bytes read + bytes written.
// Each is the best of several timed runs (a limit, not a typical rate).
#pragma once

#include <string>

namespace bcbench {

struct MachineLimits {
  double fma_gflops = 0;    // peak FMA rate, GFLOP/s
  double sgemm_gflops = 0;  // oneDNN sgemm, GFLOP/s
  double copy_gbs = 0;      // copy bandwidth, GB/s (read + write)
  std::string fma_isa;      // "avx512" or "avx2"
  int threads = 0;
};

double measure_fma_gflops(int threads, std::string* isa);
double measure_sgemm_gflops(int n);
double measure_copy_gbs(int threads, size_t bytes_per_buffer);
// All three; quick = smaller problems and fewer runs (~0.5 s instead of ~2 s).
MachineLimits measure_machine_limits(int threads, bool quick);

// "AMD EPYC (2 cores)" from /proc/cpuinfo and the online CPU count.
std::string cpu_description();

}  // namespace bcbench

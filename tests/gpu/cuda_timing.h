// What the CUDA timing tools (device_time.cpp, gpu_points_time.cpp) share:
// the seed workloads (benchmarks/workloads.cpp's W1-W4 shapes), the driver
// entry points for device memory, the primary context every call runs on,
// and the median of timed runs. The driver is opened here, never linked.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "batchconv/device.h"

namespace batchconv::cuda_timing {

enum class WorkOp { Grouped, Batched, Broadcast };  // broadcast: concatenated y

struct Work {
  const char* id;
  WorkOp op;
  std::vector<int64_t> x, w;
  int pad, groups;
};

inline const std::vector<Work>& seed_workloads() {
  static const std::vector<Work> works = {
      {"W1", WorkOp::Broadcast, {1, 16, 1000000}, {4, 16, 16, 1}, 0, 1},
      {"W2_G=1", WorkOp::Batched, {1, 128, 3, 28, 28}, {1, 64, 3, 7, 7}, 0, 1},
      {"W2_G=16", WorkOp::Batched, {16, 8, 3, 28, 28}, {16, 64, 3, 7, 7}, 0, 1},
      {"W2_G=128", WorkOp::Batched, {128, 1, 3, 28, 28}, {128, 64, 3, 7, 7}, 0, 1},
      {"W3_seed3", WorkOp::Batched, {100, 50, 3, 32, 32}, {100, 64, 3, 3, 3}, 0, 1},
      {"W3_MAML", WorkOp::Batched, {32, 80, 64, 42, 42}, {32, 64, 64, 3, 3}, 1, 1},
      {"W3_B=1", WorkOp::Batched, {1, 128, 64, 56, 56}, {1, 64, 64, 3, 3}, 1, 1},
      {"W4_ResNeXt", WorkOp::Grouped, {8, 128, 56, 56}, {128, 4, 3, 3}, 1, 32},
      {"W4_depthwise", WorkOp::Grouped, {8, 256, 56, 56}, {256, 1, 3, 3}, 1, 256},
  };
  return works;
}

// All workloads when no ID is named on the command line, else those named.
inline bool wanted(const Work& k, int argc, char** argv) {
  bool yes = argc < 2;
  for (int a = 1; a < argc; ++a) yes = yes || std::string(argv[a]) == k.id;
  return yes;
}

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

inline ConvDesc desc(const Work& k) {
  ConvDesc d = ConvDesc::with_padding(k.pad);
  d.groups = k.groups;
  return d;
}

inline std::vector<int64_t> output_shape(const Work& k) {
  static float shape_only;  // the shape functions check a view's pointer, never read it
  const TensorView xs(&shape_only, k.x), ws(&shape_only, k.w);
  const ConvDesc d = desc(k);
  return k.op == WorkOp::Grouped   ? grouped_conv_output_shape(xs, ws, d)
         : k.op == WorkOp::Batched ? batched_weight_conv_output_shape(xs, ws, d)
                                   : broadcast_input_conv_output_shape(xs, ws, d, BroadcastLayout::Concatenated);
}

// Two flops per multiply-add: every output sums one filter's taps.
inline double flops(const Work& k, const std::vector<int64_t>& ys) {
  const int64_t taps = numel(k.w) / (k.op == WorkOp::Grouped ? k.w[0] : k.w[0] * k.w[1]);
  return 2.0 * numel(ys) * taps;
}

// The driver's memory entry points, and device 0's primary context made
// current on this thread and passed to every call, as an app such as
// PyTorch passes its own. `error` says why not when it could not be.
struct Driver {
  using CUresult = int;
  CUresult (*mem_alloc)(unsigned long long*, size_t) = nullptr;
  CUresult (*mem_free)(unsigned long long) = nullptr;
  CUresult (*memset_d32)(unsigned long long, unsigned, size_t) = nullptr;
  CUresult (*copy_htod)(unsigned long long, const void*, size_t) = nullptr;
  CUresult (*copy_dtoh)(void*, unsigned long long, size_t) = nullptr;
  DeviceContext ctx;
  std::string error;

  Driver() {
    error = cuda::unavailable_reason();
    if (!error.empty()) return;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    auto sym = [&](auto& f, const char* name) { f = reinterpret_cast<std::decay_t<decltype(f)>>(dlsym(lib, name)); };
    CUresult (*retain)(void**, int) = nullptr;
    CUresult (*set_current)(void*) = nullptr;
    sym(mem_alloc, "cuMemAlloc_v2");
    sym(mem_free, "cuMemFree_v2");
    sym(memset_d32, "cuMemsetD32_v2");
    sym(copy_htod, "cuMemcpyHtoD_v2");
    sym(copy_dtoh, "cuMemcpyDtoH_v2");
    sym(retain, "cuDevicePrimaryCtxRetain");
    sym(set_current, "cuCtxSetCurrent");
    if (!mem_alloc || !mem_free || !memset_d32 || !copy_htod || !copy_dtoh || !retain || !set_current ||
        retain(&ctx.cuda_context, 0) != 0 || set_current(ctx.cuda_context) != 0) {
      error = "the primary CUDA context could not be made current";
    }
  }
  unsigned long long alloc(int64_t floats) const {
    unsigned long long p = 0;
    if (mem_alloc(&p, static_cast<size_t>(floats) * 4) != 0) throw Error("cuMemAlloc failed");
    return p;
  }
};

// Median ms of 10 calls of `run` (each a call and its synchronize), after 3
// warm-ups, by the wall clock.
template <typename Run>
double median_ms(Run run) {
  std::vector<double> ms;
  for (int i = 0; i < 13; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace batchconv::cuda_timing

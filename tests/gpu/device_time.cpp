// Times the seed workloads (benchmarks/workloads.cpp's W1-W4 shapes) on the
// CUDA library, on device memory allocated here through the driver, with
// the primary context's default stream: median of 10 runs after 3 warm-ups, each run ended
// by batchconv::cuda::synchronize(). One line per workload:
//   <id> <ms> <GFLOP/s> <GB/s>
// scripts/device-check.sh prints them beside PyTorch's cuDNN. Not a test.
// Usage: batchconv_device_time [ID...]   (all workloads, or those named)
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "batchconv/device.h"

using namespace batchconv;

namespace {

using CUresult = int;
CUresult (*mem_alloc)(unsigned long long*, size_t) = nullptr;
CUresult (*memset_d32)(unsigned long long, unsigned, size_t) = nullptr;

struct Work {
  const char* id;
  int op;  // 0 grouped, 1 batched, 2 broadcast (concatenated y)
  std::vector<int64_t> x, w;
  int pad, groups;
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

unsigned long long alloc(int64_t n) {
  unsigned long long p = 0;
  if (mem_alloc(&p, static_cast<size_t>(n) * 4) != 0) throw Error("cuMemAlloc failed");
  memset_d32(p, 0x3c23d70a, static_cast<size_t>(n));  // 0.01f
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string why = cuda::unavailable_reason();
  if (!why.empty()) {
    std::printf("no timings: %s\n", why.c_str());
    return 0;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  mem_alloc = reinterpret_cast<decltype(mem_alloc)>(dlsym(lib, "cuMemAlloc_v2"));
  // The primary context of device 0, current on this thread (the memory
  // is allocated in it) and passed to every call, as an app such as
  // PyTorch passes its own.
  auto retain = reinterpret_cast<CUresult (*)(void**, int)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<CUresult (*)(void*)>(dlsym(lib, "cuCtxSetCurrent"));
  DeviceContext ctx;
  if (!retain || retain(&ctx.cuda_context, 0) != 0 || set_current(ctx.cuda_context) != 0) {
    std::printf("no timings: the primary CUDA context could not be made current\n");
    return 1;
  }
  memset_d32 = reinterpret_cast<decltype(memset_d32)>(dlsym(lib, "cuMemsetD32_v2"));
  std::printf("# device: %s\n", cuda::device_name(ctx).c_str());
  const std::vector<Work> works = {
      {"W1", 2, {1, 16, 1000000}, {4, 16, 16, 1}, 0, 1},
      {"W2_G=1", 1, {1, 128, 3, 28, 28}, {1, 64, 3, 7, 7}, 0, 1},
      {"W2_G=16", 1, {16, 8, 3, 28, 28}, {16, 64, 3, 7, 7}, 0, 1},
      {"W2_G=128", 1, {128, 1, 3, 28, 28}, {128, 64, 3, 7, 7}, 0, 1},
      {"W3_seed3", 1, {100, 50, 3, 32, 32}, {100, 64, 3, 3, 3}, 0, 1},
      {"W3_MAML", 1, {32, 80, 64, 42, 42}, {32, 64, 64, 3, 3}, 1, 1},
      {"W3_B=1", 1, {1, 128, 64, 56, 56}, {1, 64, 64, 3, 3}, 1, 1},
      {"W4_ResNeXt", 0, {8, 128, 56, 56}, {128, 4, 3, 3}, 1, 32},
      {"W4_depthwise", 0, {8, 256, 56, 56}, {256, 1, 3, 3}, 1, 256},
  };
  for (const Work& k : works) {
    bool wanted = argc < 2;
    for (int a = 1; a < argc; ++a) wanted = wanted || std::string(argv[a]) == k.id;
    if (!wanted) continue;
    try {
      ConvDesc d = ConvDesc::with_padding(k.pad);
      d.groups = k.groups;
      static float shape_only;  // the shape functions check a view's pointer, never read it
      TensorView xs(&shape_only, k.x), ws(&shape_only, k.w);
      const std::vector<int64_t> ys =
          k.op == 0 ? grouped_conv_output_shape(xs, ws, d)
          : k.op == 1 ? batched_weight_conv_output_shape(xs, ws, d)
                      : broadcast_input_conv_output_shape(xs, ws, d, BroadcastLayout::Concatenated);
      DeviceTensor x(alloc(numel(k.x)), k.x), w(alloc(numel(k.w)), k.w), y(alloc(numel(ys)), ys);
      auto run = [&] {
        if (k.op == 0) cuda::grouped_conv(x, w, nullptr, y, d, ctx);
        if (k.op == 1) cuda::batched_weight_conv(x, w, nullptr, y, d, ctx);
        if (k.op == 2) cuda::broadcast_input_conv(x, w, nullptr, y, d, BroadcastLayout::Concatenated, ctx);
      };
      std::vector<double> ms;
      for (int i = 0; i < 13; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        cuda::synchronize(ctx);
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      const double med = ms[ms.size() / 2];
      const int64_t taps = numel(k.w) / (k.op == 0 ? k.w[0] : k.w[0] * k.w[1]);
      const double flops = 2.0 * numel(ys) * taps;
      const double bytes = 4.0 * (numel(k.x) + numel(k.w) + numel(ys));
      std::printf("%s %.4f %.1f %.1f\n", k.id, med, flops / med / 1e6, bytes / med / 1e6);
    } catch (const std::exception& e) {
      std::printf("%s error %s\n", k.id, e.what());
    }
  }
  return 0;
}

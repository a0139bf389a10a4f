// Times points of the gpu schedule family (tests/gpu/CMakeLists.txt's
// gpu_points, each an AOT kernel of its own) on the seed workloads
// (device_time.cpp's shapes) on a CUDA device: random data in device
// memory, each point's output compared with the default point's (largest
// difference relative to the largest output), median of 10 runs after 3
// warm-ups, each run ended by a synchronize. One line per (workload, point):
//   <workload> <point> <ms> <GFLOP/s> <max rel diff> <params>
// Not a test: scripts/device-check.sh runs it on a GPU.
// Usage: gpu_points_time [WORKLOAD...]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "batchconv/device.h"
#include "device_cuda.h"
#include "gpu_points_registry.h"

using namespace batchconv;
namespace dev = batchconv::detail::device;

namespace {

using CUresult = int;
CUresult (*mem_alloc)(unsigned long long*, size_t) = nullptr;
CUresult (*mem_free)(unsigned long long) = nullptr;
CUresult (*copy_htod)(unsigned long long, const void*, size_t) = nullptr;
CUresult (*copy_dtoh)(void*, unsigned long long, size_t) = nullptr;

struct Work {
  const char* id;
  dev::ConvKernel op;
  std::vector<int64_t> x, w;
  int pad, groups;
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// Device memory holding n random floats in [-1, 1].
struct DeviceData {
  unsigned long long ptr = 0;
  int64_t n;
  explicit DeviceData(int64_t count, std::mt19937& rng) : n(count) {
    if (mem_alloc(&ptr, static_cast<size_t>(n) * 4) != 0) throw Error("cuMemAlloc failed");
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> host(static_cast<size_t>(n));
    for (float& f : host) f = u(rng);
    copy_htod(ptr, host.data(), host.size() * 4);
  }
  ~DeviceData() { mem_free(ptr); }
  std::vector<float> read() const {
    std::vector<float> host(static_cast<size_t>(n));
    copy_dtoh(host.data(), ptr, host.size() * 4);
    return host;
  }
};

const char* op_name(dev::ConvKernel k) {
  return k == dev::ConvKernel::Grouped ? "grouped_conv" : "batched_weight_conv";
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
  mem_free = reinterpret_cast<decltype(mem_free)>(dlsym(lib, "cuMemFree_v2"));
  copy_htod = reinterpret_cast<decltype(copy_htod)>(dlsym(lib, "cuMemcpyHtoD_v2"));
  copy_dtoh = reinterpret_cast<decltype(copy_dtoh)>(dlsym(lib, "cuMemcpyDtoH_v2"));
  std::printf("# device: %s; %zu points\n", cuda::device_name(ctx).c_str(), sizeof kGpuPoints / sizeof kGpuPoints[0]);
  using K = dev::ConvKernel;
  const std::vector<Work> works = {
      {"W2_G=1", K::BatchedWeight, {1, 128, 3, 28, 28}, {1, 64, 3, 7, 7}, 0, 1},
      {"W2_G=16", K::BatchedWeight, {16, 8, 3, 28, 28}, {16, 64, 3, 7, 7}, 0, 1},
      {"W3_seed3", K::BatchedWeight, {100, 50, 3, 32, 32}, {100, 64, 3, 3, 3}, 0, 1},
      {"W3_MAML", K::BatchedWeight, {32, 80, 64, 42, 42}, {32, 64, 64, 3, 3}, 1, 1},
      {"W3_B=1", K::BatchedWeight, {1, 128, 64, 56, 56}, {1, 64, 64, 3, 3}, 1, 1},
      {"W4_ResNeXt", K::Grouped, {8, 128, 56, 56}, {128, 4, 3, 3}, 1, 32},
      {"W4_depthwise", K::Grouped, {8, 256, 56, 56}, {256, 1, 3, 3}, 1, 256},
  };
  std::mt19937 rng(7);
  for (const Work& k : works) {
    bool wanted = argc < 2;
    for (int a = 1; a < argc; ++a) wanted = wanted || std::string(argv[a]) == k.id;
    if (!wanted) continue;
    try {
      ConvDesc d = ConvDesc::with_padding(k.pad);
      d.groups = k.groups;
      static float shape_only;  // the shape functions check a view's pointer, never read it
      TensorView xs(&shape_only, k.x), ws(&shape_only, k.w);
      const std::vector<int64_t> ys = k.op == K::Grouped ? grouped_conv_output_shape(xs, ws, d)
                                                         : batched_weight_conv_output_shape(xs, ws, d);
      DeviceData x(numel(k.x), rng), w(numel(k.w), rng), y(numel(ys), rng);
      DeviceTensor xd(x.ptr, k.x), wd(w.ptr, k.w), yd(y.ptr, ys);
      const int64_t taps = numel(k.w) / (k.op == K::Grouped ? k.w[0] : k.w[0] * k.w[1]);
      const double flops = 2.0 * numel(ys) * taps;
      std::vector<float> want;
      for (const GpuPoint& p : kGpuPoints) {
        if (std::strcmp(p.op, op_name(k.op)) != 0) continue;
        std::unique_ptr<dev::Backend> be = dev::make_cuda_backend(
            dev::CudaKernels{p.kernel, p.kernel, p.kernel, nullptr});
        auto run = [&] {
          dev::conv(*be, k.op, xd, wd, nullptr, yd, d, BroadcastLayout::Concatenated, ctx);
        };
        try {
          std::vector<double> ms;
          for (int i = 0; i < 13; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            run();
            be->synchronize(ctx);
            const auto t1 = std::chrono::steady_clock::now();
            if (i >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
          }
          std::sort(ms.begin(), ms.end());
          const double med = ms[ms.size() / 2];
          const std::vector<float> got = y.read();
          if (want.empty()) want = got;  // the first point of the op is its default
          double largest = 0.0, diff = 0.0;
          for (size_t i = 0; i < got.size(); ++i) {
            largest = std::max(largest, std::fabs(double(want[i])));
            diff = std::max(diff, std::fabs(double(got[i]) - double(want[i])));
          }
          std::printf("%s %s %.4f %.1f %.2e %s\n", k.id, p.name, med, flops / med / 1e6,
                      largest > 0 ? diff / largest : diff, p.params[0] ? p.params : "(default)");
        } catch (const std::exception& e) {
          std::printf("%s %s error %s\n", k.id, p.name, e.what());
        }
        std::fflush(stdout);
      }
    } catch (const std::exception& e) {
      std::printf("%s error %s\n", k.id, e.what());
    }
  }
  return 0;
}

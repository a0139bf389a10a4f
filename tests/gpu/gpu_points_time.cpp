// Times points of the gpu schedule family (tests/gpu/CMakeLists.txt's
// gpu_points, each an AOT kernel of its own) on the grouped and
// batched-weight seed workloads (cuda_timing.h) on a CUDA device: random
// data in device memory, each point's output compared with the default point's (largest
// difference relative to the largest output), median of 10 runs after 3
// warm-ups, each run ended by a synchronize. One line per (workload, point):
//   <workload> <point> <ms> <GFLOP/s> <max rel diff> <params>
// Not a test: scripts/device-check.sh runs it on a GPU.
// Usage: gpu_points_time [WORKLOAD...]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "batchconv/device.h"
#include "cuda_timing.h"
#include "device_cuda.h"
#include "gpu_points_registry.h"

using namespace batchconv;
using namespace batchconv::cuda_timing;
namespace dev = batchconv::detail::device;

namespace {

// Device memory holding n random floats in [-1, 1].
struct DeviceData {
  const Driver& drv;
  unsigned long long ptr;
  int64_t n;
  DeviceData(const Driver& d, int64_t count, std::mt19937& rng) : drv(d), ptr(d.alloc(count)), n(count) {
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> host(static_cast<size_t>(n));
    for (float& f : host) f = u(rng);
    drv.copy_htod(ptr, host.data(), host.size() * 4);
  }
  DeviceData(const DeviceData&) = delete;
  DeviceData& operator=(const DeviceData&) = delete;
  ~DeviceData() { drv.mem_free(ptr); }
  std::vector<float> read() const {
    std::vector<float> host(static_cast<size_t>(n));
    drv.copy_dtoh(host.data(), ptr, host.size() * 4);
    return host;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Driver drv;
  if (!drv.error.empty()) {
    std::printf("no timings: %s\n", drv.error.c_str());
    return drv.error == cuda::unavailable_reason() ? 0 : 1;
  }
  const DeviceContext& ctx = drv.ctx;
  std::printf("# device: %s; %zu points\n", cuda::device_name(ctx).c_str(), sizeof kGpuPoints / sizeof kGpuPoints[0]);
  std::mt19937 rng(7);
  for (const Work& k : seed_workloads()) {
    if (k.op == WorkOp::Broadcast || !wanted(k, argc, argv)) continue;
    const dev::ConvKernel op = k.op == WorkOp::Grouped ? dev::ConvKernel::Grouped : dev::ConvKernel::BatchedWeight;
    const char* op_name = k.op == WorkOp::Grouped ? "grouped_conv" : "batched_weight_conv";
    try {
      const ConvDesc d = desc(k);
      const std::vector<int64_t> ys = output_shape(k);
      DeviceData x(drv, numel(k.x), rng), w(drv, numel(k.w), rng), y(drv, numel(ys), rng);
      DeviceTensor xd(x.ptr, k.x), wd(w.ptr, k.w), yd(y.ptr, ys);
      std::vector<float> want;
      for (const GpuPoint& p : kGpuPoints) {
        if (std::strcmp(p.op, op_name) != 0) continue;
        std::unique_ptr<dev::Backend> be = dev::make_cuda_backend(
            dev::CudaKernels{p.kernel, p.kernel, p.kernel, nullptr});
        try {
          const double med = median_ms([&] {
            dev::conv(*be, op, xd, wd, nullptr, yd, d, BroadcastLayout::Concatenated, ctx);
            be->synchronize(ctx);
          });
          const std::vector<float> got = y.read();
          if (want.empty()) want = got;  // the first point of the op is its default
          double largest = 0.0, diff = 0.0;
          for (size_t i = 0; i < got.size(); ++i) {
            largest = std::max(largest, std::fabs(double(want[i])));
            diff = std::max(diff, std::fabs(double(got[i]) - double(want[i])));
          }
          std::printf("%s %s %.4f %.1f %.2e %s\n", k.id, p.name, med, flops(k, ys) / med / 1e6,
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

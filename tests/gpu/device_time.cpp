// Times the seed workloads (cuda_timing.h) on the CUDA library, on device
// memory allocated here through the driver, with the primary context's
// default stream: median of 10 runs after 3 warm-ups, each run ended by
// batchconv::cuda::synchronize(). One line per workload:
//   <id> <ms> <GFLOP/s> <GB/s>
// scripts/device-check.sh prints them beside PyTorch's cuDNN. Not a test.
// Usage: batchconv_device_time [ID...]   (all workloads, or those named)
#include <cstdio>
#include <string>
#include <vector>

#include "batchconv/device.h"
#include "cuda_timing.h"

using namespace batchconv;
using namespace batchconv::cuda_timing;

int main(int argc, char** argv) {
  const Driver drv;
  if (!drv.error.empty()) {
    std::printf("no timings: %s\n", drv.error.c_str());
    return drv.error == cuda::unavailable_reason() ? 0 : 1;
  }
  const DeviceContext& ctx = drv.ctx;
  std::printf("# device: %s\n", cuda::device_name(ctx).c_str());
  for (const Work& k : seed_workloads()) {
    if (!wanted(k, argc, argv)) continue;
    try {
      const ConvDesc d = desc(k);
      const std::vector<int64_t> ys = output_shape(k);
      auto filled = [&](int64_t n) {
        const unsigned long long p = drv.alloc(n);
        drv.memset_d32(p, 0x3c23d70a, static_cast<size_t>(n));  // 0.01f
        return p;
      };
      DeviceTensor x(filled(numel(k.x)), k.x), w(filled(numel(k.w)), k.w), y(filled(numel(ys)), ys);
      const double med = median_ms([&] {
        if (k.op == WorkOp::Grouped) cuda::grouped_conv(x, w, nullptr, y, d, ctx);
        if (k.op == WorkOp::Batched) cuda::batched_weight_conv(x, w, nullptr, y, d, ctx);
        if (k.op == WorkOp::Broadcast) {
          cuda::broadcast_input_conv(x, w, nullptr, y, d, BroadcastLayout::Concatenated, ctx);
        }
        cuda::synchronize(ctx);
      });
      const double bytes = 4.0 * (numel(k.x) + numel(k.w) + numel(ys));
      std::printf("%s %.4f %.1f %.1f\n", k.id, med, flops(k, ys) / med / 1e6, bytes / med / 1e6);
    } catch (const std::exception& e) {
      std::printf("%s error %s\n", k.id, e.what());
    }
  }
  return 0;
}

// An app outside the tree: a depthwise-with-multiplier grouped conv through the
// installed library, checked against a plain loop; and a bad shape must throw.
#include <batchconv/batchconv.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  const int N = 2, C = 4, H = 9, W = 11, M = 8, K = 3, G = 4;  // Cout = 2 per group
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(N * C * H * W), w(M * (C / G) * K * K), y(N * M * H * W);
  for (auto& v : x) v = u(rng);
  for (auto& v : w) v = u(rng);
  batchconv::ConvDesc d = batchconv::ConvDesc::with_padding(1);
  d.groups = G;
  batchconv::grouped_conv({x.data(), {N, C, H, W}}, {w.data(), {M, C / G, K, K}}, nullptr,
                          {y.data(), {N, M, H, W}}, d);
  double worst = 0;
  for (int n = 0; n < N; n++)
    for (int m = 0; m < M; m++)
      for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
          double acc = 0;
          const int c = m / (M / G);  // one input channel per group
          for (int a = 0; a < K; a++)
            for (int b = 0; b < K; b++) {
              const int ii = i + a - 1, jj = j + b - 1;
              if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
              acc += double(x[((n * C + c) * H + ii) * W + jj]) * w[(m * K + a) * K + b];
            }
          worst = std::fmax(worst, std::fabs(acc - y[((n * M + m) * H + i) * W + j]));
        }
  std::printf("package_app: target %s, max abs error %.3g\n", batchconv::selected_target().c_str(),
              worst);
  if (!(worst < 1e-5)) return 1;
  try {
    batchconv::grouped_conv({x.data(), {N, C, H, W}}, {w.data(), {M, 3, K, K}}, nullptr,
                            {y.data(), {N, M, H, W}}, d);
    std::printf("package_app: a wrong weight shape was accepted\n");
    return 1;
  } catch (const batchconv::Error& e) {
    std::printf("package_app: bad shape rejected: %s\n", e.what());
  }
  return 0;
}

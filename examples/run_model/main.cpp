// run_model: runs the compiled seed-1 model (x (20, 16) -> y (64, 20)) on an
// input and prints the output checksum and the time per call.
//
//   run_model [input.f32]   (raw little-endian float32, 20*16 values;
//                            default: x[i] = sin(i))
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "seed1.h"

int main(int argc, char** argv) {
  const size_t n_in = 20 * 16, n_out = 64 * 20;
  std::vector<float> x(n_in), y(n_out);
  if (argc > 1) {
    FILE* f = std::fopen(argv[1], "rb");
    if (!f || std::fread(x.data(), sizeof(float), n_in, f) != n_in) {
      std::fprintf(stderr, "run_model: %s: expected %zu float32 values\n", argv[1], n_in);
      if (f) std::fclose(f);
      return 1;
    }
    std::fclose(f);
  } else {
    for (size_t i = 0; i < n_in; ++i) x[i] = std::sin(static_cast<float>(i));
  }
  if (seed1_f32(x.data(), y.data()) != 0) return 1;  // the model reports what was wrong
  const int reps = 100;
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) seed1_f32(x.data(), y.data());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
  double sum = 0, abs_sum = 0;
  for (float v : y) sum += v, abs_sum += std::fabs(v);
  std::printf("seed1: y (64, 20) checksum sum=%.6f sum|y|=%.6f y[0]=%.6f; %.4f ms per call\n", sum, abs_sum, y[0], ms);
  return 0;
}

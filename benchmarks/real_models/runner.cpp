// The batchconv side of the real-model benchmark: one compiled model, run
// through its generated header's entry point (<name>_f32 on dense arrays).
//
// Built by real_models.py against the model's lib<name>.a with
//   -include <name>.h -DMODEL_F32=<name>_f32 -DIN_COUNT=<floats> -DOUT_COUNT=<floats>
// (and -DMODEL_BATCH=<n> for a library compiled with --dynamic-batch: the batch it is called with)
//
//   runner <input.f32> <expected.f64> <reps>
//
// Prints one line "err <max |y - ref| / max |ref|>" and one line "times <ms> <ms> ..."
// (each call timed, after one warm-up call into the same reused buffers).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef MODEL_BATCH
#define CALL_MODEL(x, y) MODEL_F32(MODEL_BATCH, x, y)
#else
#define CALL_MODEL(x, y) MODEL_F32(x, y)
#endif

namespace {

template <typename T>
bool read_all(const char* path, std::vector<T>& v) {
  FILE* f = std::fopen(path, "rb");
  if (!f) return false;
  const size_t got = std::fread(v.data(), sizeof(T), v.size(), f);
  const bool at_end = std::fgetc(f) == EOF;
  std::fclose(f);
  return got == v.size() && at_end;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: runner <input.f32> <expected.f64> <reps>\n");
    return 2;
  }
  std::vector<float> x(IN_COUNT), y(OUT_COUNT);
  std::vector<double> ref(OUT_COUNT);
  if (!read_all(argv[1], x) || !read_all(argv[2], ref)) {
    std::fprintf(stderr, "runner: %s or %s does not hold %d float32 / %d float64 values\n", argv[1], argv[2],
                 IN_COUNT, OUT_COUNT);
    return 2;
  }
  const int reps = std::atoi(argv[3]);
  if (CALL_MODEL(x.data(), y.data()) != 0) return 1;  // the model printed what was wrong
  double worst = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    worst = std::fmax(worst, std::fabs(y[i] - ref[i]));
    scale = std::fmax(scale, std::fabs(ref[i]));
  }
  std::printf("err %.3e\n", scale > 0 ? worst / scale : worst);
  std::printf("times");
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (CALL_MODEL(x.data(), y.data()) != 0) return 1;
    std::printf(" %.4f", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("\n");
  return 0;
}

// bundled_times: each bundled seed model (tests/models/*_opset17.onnx, its
// stored input) compiled by batchconv-compile with rewrites and without,
// timed beside the reference interpreter (plain loops) in the same run, and
// checked against the model's stored PyTorch output. Prints a Markdown table.
//
//   bundled_times [min_ms_per_measurement]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "bundled_models.h"
#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "onnx/onnx_pb.h"

namespace {

using batchconv::ir::Tensor;

Tensor read_pb(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!f || !t.ParseFromString(ss.str())) {
    std::fprintf(stderr, "bundled_times: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return batchconv::io::tensor_from_proto(t, path);
}

// Median ms per call, repeating until about min_ms has passed (at least 3 calls).
double time_ms(const std::function<void()>& fn, double min_ms) {
  std::vector<double> t;
  double total = 0;
  while (t.size() < 3 || (total < min_ms && t.size() < 10000)) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    total += t.back();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Buffer {
  std::vector<float> data;
  std::vector<halide_dimension_t> dims;
  halide_buffer_t buf{};
  Buffer(const int64_t* shape, int rank, const std::vector<float>& values) {
    int64_t n = 1;
    for (int k = 0; k < rank; ++k) n *= shape[k];
    data = values.empty() ? std::vector<float>(n, 0.0f) : values;
    int32_t stride = 1;
    for (int k = rank; k-- > 0;) {
      dims.push_back({0, static_cast<int32_t>(shape[k]), stride, 0});
      stride *= static_cast<int32_t>(shape[k]);
    }
    buf.host = reinterpret_cast<uint8_t*>(data.data());
    buf.type = halide_type_t(halide_type_float, 32, 1);
    buf.dimensions = rank;
    buf.dim = dims.data();
  }
};

double max_rel(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t k = 0; k < a.size(); ++k) m = std::max(m, std::fabs(double(a[k]) - b[k]) / std::max(1.0, std::fabs(double(b[k]))));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const double min_ms = argc > 1 ? std::atof(argv[1]) : 200.0;
  std::printf("| model (bundled shapes) | compiled, rewritten (ms) | compiled, no rewrites (ms) | reference interpreter (ms) | max rel. error vs PyTorch |\n");
  std::printf("|---|---|---|---|---|\n");
  int failures = 0;
  for (size_t i = 0; i + 1 < sizeof kBundled / sizeof kBundled[0]; i += 2) {
    const std::string stem = kBundled[i].stem;
    const std::string base = std::string(BATCHCONV_MODELS_DIR) + "/" + stem;
    std::unique_ptr<batchconv::ir::Model> model = batchconv::io::load_model(base + ".onnx");
    batchconv::interp::TensorMap inputs;
    for (size_t k = 0; k < model->graph.inputs.size(); ++k) {
      inputs[model->graph.inputs[k]->name] = read_pb(base + ".input_" + std::to_string(k) + ".pb");
    }
    const Tensor want = read_pb(base + ".output_0.pb");
    double ms[2] = {0, 0}, err = 0;
    for (int m = 0; m < 2; ++m) {
      const BundledModel& bm = kBundled[i + m];
      std::vector<std::unique_ptr<Buffer>> bufs;
      std::vector<halide_buffer_t*> args;
      const int64_t* d = bm.dims;
      for (int k = 0; k < bm.num_args; ++k) {
        std::vector<float> values;
        if (k < bm.num_inputs) values = inputs.at(model->graph.inputs[k]->name).f;
        bufs.push_back(std::make_unique<Buffer>(d, bm.ranks[k], values));
        args.push_back(&bufs.back()->buf);
        d += bm.ranks[k];
      }
      if (bm.argv(args.data()) != 0) {
        std::fprintf(stderr, "bundled_times: %s_%s failed\n", bm.stem, bm.mode);
        return 1;
      }
      err = std::max(err, max_rel(bufs[bm.num_inputs]->data, want.f));
      ms[m] = time_ms([&] { bm.argv(args.data()); }, min_ms);
    }
    const double interp_ms = time_ms([&] { batchconv::interp::run(*model, inputs); }, min_ms);
    std::printf("| %s | %.4f | %.4f | %.3f | %.2g |\n", stem.c_str(), ms[0], ms[1], interp_ms, err);
    if (err > 1e-4) ++failures;
  }
  return failures == 0 ? 0 : 1;
}

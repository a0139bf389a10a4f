// libFuzzer target for the importer (built with -DBATCHCONV_FUZZ=ON and clang):
// any bytes -> parse as ModelProto -> import -> default pipeline -> export.
// Everything may refuse the input with an exception; nothing may crash.
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
//     -DBATCHCONV_FUZZ=ON -DBATCHCONV_BUILD_KERNELS=OFF -DBATCHCONV_BUILD_BENCHMARKS=OFF
//   cmake --build build-fuzz --target fuzz_import && build-fuzz/tests/rewrites/fuzz_import -max_total_time=60
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

#include "onnx/onnx_io.h"
#include "pass.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto p;
  if (size > (1u << 20) || !p.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    auto m = batchconv::io::import_model(std::move(p), "fuzz");
    for (const auto& pass : batchconv::rewrites::default_pipeline()) pass.run(*m, {});
    batchconv::io::export_model(*m);
  } catch (const std::exception&) {
  }
  return 0;
}

// The bundled models compiled for a GPU by batchconv-compile, built twice:
// for OpenCL (--target=host-opencl, run on PoCL in CI) and for CUDA
// (--target=host-cuda, BATCHCONV_TEST_CUDA; run on a GPU by
// scripts/device-check.sh, every test skipping, saying why, where no CUDA
// driver or device is present). Each model must match its stored PyTorch
// outputs and the reference interpreter on fresh random inputs (and fresh
// runtime weights) to 1e-4, the checks the CPU-compiled models pass. Also
// the GPU library's call contract: host buffers in and out, nothing left on
// the device, a second call the same as the first; device buffers used in
// place. This process links no libHalide (PoCL's LLVM and Halide's cannot
// share one).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "compiled_model_checks.h"
#include "model_data.h"

#if defined(BATCHCONV_TEST_CUDA)
#include "HalideRuntimeCuda.h"
#include "gpu_models_registry_cuda.h"
#define SEED1(suffix) seed1_opset17_cuda##suffix
#define DEVICE_INTERFACE halide_cuda_device_interface
#define DEVICE_NAME CUDA
#else
#include "HalideRuntimeOpenCL.h"
#include "gpu_models_registry.h"
#define SEED1(suffix) seed1_opset17_r_ocl##suffix
#define DEVICE_INTERFACE halide_opencl_device_interface
#define DEVICE_NAME OpenCL
#endif

namespace batchconv::testing {
namespace {

// Why no model can run here ("" when one can): CUDA needs a driver and a
// device; OpenCL tests always run (PoCL is a test dependency).
std::string unavailable_reason() {
#if defined(BATCHCONV_TEST_CUDA)
  static const std::string why = [] {
    // Loaded globally, so Halide's CUDA runtime finds the driver's symbols.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) return std::string("no CUDA driver: libcuda.so.1 not found");
    auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(lib, "cuInit"));
    auto count = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuDeviceGetCount"));
    int n = 0;
    if (!init || !count || init(0) != 0 || count(&n) != 0 || n == 0) return std::string("no CUDA device");
    return std::string();
  }();
  return why;
#else
  return "";
#endif
}

#define SKIP_WITHOUT_DEVICE()                                 \
  do {                                                        \
    const std::string why = unavailable_reason();             \
    if (!why.empty()) GTEST_SKIP() << "skipped: " << why;     \
  } while (0)

class GpuCompiledModels : public ::testing::TestWithParam<CompiledModel> {
 protected:
  void SetUp() override { SKIP_WITHOUT_DEVICE(); }
};

TEST_P(GpuCompiledModels, MatchesPyTorchStoredOutputs) { expect_matches_stored_outputs(GetParam()); }

TEST_P(GpuCompiledModels, MatchesInterpreterOnRandomInputs) { expect_matches_interpreter(GetParam()); }

INSTANTIATE_TEST_SUITE_P(DEVICE_NAME, GpuCompiledModels, ::testing::ValuesIn(kCompiledModels),
                         [](const ::testing::TestParamInfo<CompiledModel>& i) {
                           return std::string(i.param.stem) + "_" + i.param.mode;
                         });

TEST(GpuCompiledModelCall, HostBuffersComeBackWithNoDeviceMemoryLeft) {
  SKIP_WITHOUT_DEVICE();
  // seed 1: x (20, 16) -> y (64, 20).
  HostBuffer x({20, 16}), y({64, 20}), y2({64, 20});
  for (size_t k = 0; k < x.data.size(); ++k) x.data[k] = static_cast<float>(k % 7) - 3.0f;
  HalideErrors errors;
  ASSERT_EQ(SEED1()(&x.buf, &y.buf), 0) << HalideErrors::text();
  EXPECT_EQ(x.buf.device, 0u);
  EXPECT_EQ(y.buf.device, 0u);
  EXPECT_FALSE(y.buf.flags & 2) << "device_dirty left set";  // halide_buffer_flag_device_dirty
  ASSERT_EQ(SEED1()(&x.buf, &y2.buf), 0) << HalideErrors::text();
  EXPECT_EQ(y.data, y2.data);
  float largest = 0.0f;
  for (float v : y.data) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 0.0f) << "the output was never copied back";
}

TEST(GpuCompiledModelCall, DeviceBuffersAreUsedInPlace) {
  SKIP_WITHOUT_DEVICE();
  const halide_device_interface_t* dev = DEVICE_INTERFACE();
  HostBuffer x({20, 16}), want({64, 20}), y({64, 20});
  for (size_t k = 0; k < x.data.size(); ++k) x.data[k] = static_cast<float>(k % 5) - 2.0f;
  HalideErrors errors;
  ASSERT_EQ(SEED1()(&x.buf, &want.buf), 0) << HalideErrors::text();
  // x on the device only, y allocated there.
  x.buf.flags |= halide_buffer_flag_host_dirty;
  ASSERT_EQ(halide_copy_to_device(nullptr, &x.buf, dev), 0);
  uint8_t* x_host = x.buf.host;
  x.buf.host = nullptr;
  ASSERT_EQ(halide_device_malloc(nullptr, &y.buf, dev), 0);
  ASSERT_EQ(SEED1()(&x.buf, &y.buf), 0) << HalideErrors::text();
  EXPECT_NE(y.buf.device, 0u) << "the caller's device allocation was freed";
  EXPECT_TRUE(y.buf.flags & halide_buffer_flag_device_dirty) << "the output is not flagged as on the device";
  for (float v : y.data) ASSERT_EQ(v, 0.0f) << "a device output was copied to the host unasked";
  ASSERT_EQ(halide_copy_to_host(nullptr, &y.buf), 0);
  EXPECT_EQ(y.data, want.data);
  x.buf.host = x_host;
  EXPECT_EQ(halide_device_free(nullptr, &x.buf), 0);
  EXPECT_EQ(halide_device_free(nullptr, &y.buf), 0);
}

TEST(GpuCompiledModelCall, NoHostNorDeviceMemoryIsAnError) {
  HalideErrors errors;
  HostBuffer x({20, 16}), y({64, 20});
  x.buf.host = nullptr;
  EXPECT_NE(SEED1()(&x.buf, &y.buf), 0);
  EXPECT_NE(std::string(SEED1(_last_error)()).find("host or device buffer of shape (20, 16); got no host or device memory"),
            std::string::npos)
      << SEED1(_last_error)();
}

TEST(GpuCompiledModelCall, WrongShapeIsAnErrorNamingTheInput) {
  HalideErrors errors;
  HostBuffer x({20, 15}), y({64, 20});
  EXPECT_NE(SEED1()(&x.buf, &y.buf), 0);
  EXPECT_NE(std::string(SEED1(_last_error)()).find("input 'x' must be a dense float32 host or device buffer"),
            std::string::npos)
      << SEED1(_last_error)();
}

}  // namespace
}  // namespace batchconv::testing

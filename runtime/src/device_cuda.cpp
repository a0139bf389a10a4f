// The CUDA device library (libbatchconv_cuda.so): Backend over the
// batchconv_<op>_cuda kernels and Halide's CUDA runtime. The driver
// (libcuda.so.1) is opened on first use, never linked; the caller's
// CUcontext and CUstream (DeviceContext) reach Halide through its context
// and stream hooks, so kernels queue on the caller's stream.
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <sstream>

#include "HalideRuntimeCuda.h"
#include "batchconv_batched_linear_cuda.h"
#include "batchconv_batched_weight_conv_cuda.h"
#include "batchconv_broadcast_input_conv_cuda.h"
#include "batchconv_grouped_conv_cuda.h"
#include "device_common.h"
#include "device_cuda.h"

namespace batchconv {
namespace detail::device {
namespace {

// The driver entry points used here (cuda.h's values, to need no headers).
using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr int kAttrContext = 1, kAttrMemoryType = 2, kMemoryTypeHost = 1;

struct CuApi {
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGetName)(char*, int, int) = nullptr;
  CUresult (*CtxGetDevice)(int*) = nullptr;
  CUresult (*CtxPushCurrent)(void*) = nullptr;
  CUresult (*CtxPopCurrent)(void**) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*StreamSynchronize)(void*) = nullptr;
  CUresult (*PointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  CUresult (*MemGetAddressRange)(CUdeviceptr*, size_t*, CUdeviceptr) = nullptr;
  std::string error;
};

halide_cuda_acquire_context_t g_default_acquire = nullptr;
halide_cuda_release_context_t g_default_release = nullptr;
halide_cuda_get_stream_t g_default_stream = nullptr;

const DeviceContext* caller(void* uc) {
  const CallContext* cc = static_cast<const CallContext*>(uc);
  return cc && cc->ctx && cc->ctx->cuda_context ? cc->ctx : nullptr;
}
int acquire(void* uc, void** ctx, bool create) {
  if (const DeviceContext* c = caller(uc)) {
    *ctx = c->cuda_context;
    return 0;
  }
  return g_default_acquire(uc, ctx, create);
}
int release(void* uc) { return caller(uc) ? 0 : g_default_release(uc); }
int get_stream(void* uc, void* ctx, void** stream) {
  const CallContext* cc = static_cast<const CallContext*>(uc);
  if (cc && cc->ctx && (cc->ctx->cuda_context || cc->ctx->cuda_stream)) {
    *stream = cc->ctx->cuda_stream;
    return 0;
  }
  return g_default_stream(uc, ctx, stream);
}

const CuApi& cu() {
  static CuApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    install_error_capture();
    g_default_acquire = halide_set_cuda_acquire_context(acquire);
    g_default_release = halide_set_cuda_release_context(release);
    g_default_stream = halide_set_cuda_get_stream(get_stream);
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      api.error = "no CUDA driver: libcuda.so.1 not found (no NVIDIA driver on this machine)";
      return;
    }
    auto sym = [&](auto& f, const char* name) { f = reinterpret_cast<std::decay_t<decltype(f)>>(dlsym(lib, name)); };
    sym(api.Init, "cuInit");
    sym(api.DeviceGetCount, "cuDeviceGetCount");
    sym(api.DeviceGetName, "cuDeviceGetName");
    sym(api.CtxGetDevice, "cuCtxGetDevice");
    sym(api.CtxPushCurrent, "cuCtxPushCurrent_v2");
    sym(api.CtxPopCurrent, "cuCtxPopCurrent_v2");
    sym(api.CtxSynchronize, "cuCtxSynchronize");
    sym(api.StreamSynchronize, "cuStreamSynchronize");
    sym(api.PointerGetAttribute, "cuPointerGetAttribute");
    sym(api.MemGetAddressRange, "cuMemGetAddressRange_v2");
    if (!api.Init || !api.DeviceGetCount || !api.PointerGetAttribute || !api.MemGetAddressRange ||
        !api.CtxPushCurrent || !api.CtxPopCurrent || !api.CtxSynchronize || !api.StreamSynchronize) {
      api.error = "no usable CUDA driver: libcuda.so.1 lacks driver API entry points";
      return;
    }
    int n = 0;
    const CUresult r = api.Init(0);
    if (r != 0) {
      api.error = "no CUDA device: cuInit failed (CUresult " + std::to_string(r) + ")";
    } else if (api.DeviceGetCount(&n) != 0 || n == 0) {
      api.error = "no CUDA device: the driver reports none";
    }
  });
  return api;
}

// The context a call runs on (the caller's or Halide's), for the scope.
struct Acquired {
  void* ctx = nullptr;
  int code;
  explicit Acquired(void* uc) : uc_(uc) { code = acquire(uc, &ctx, true); }
  ~Acquired() { release(uc_); }
  void* uc_;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const CudaKernels& k) : k_(k) {}
  const char* name() const override { return "cuda"; }
  std::string unavailable_reason() override { return cu().error; }

  void check_handle(const char* op, const char* what, uint64_t handle, int64_t bytes,
                    const DeviceContext& ctx) override {
    std::ostringstream where;
    where << op << ": " << what << " (0x" << std::hex << handle << ")";
    if (handle == 0) throw Error(std::string(op) + ": " + what + " is a null device pointer");
    unsigned memtype = 0;
    if (cu().PointerGetAttribute(&memtype, kAttrMemoryType, handle) != 0) {
      throw Error(where.str() + " is not CUDA device memory (a host pointer? host memory goes through the "
                                "TensorView overloads)");
    }
    if (memtype == kMemoryTypeHost) throw Error(where.str() + " is pinned host memory, not device memory");
    CallContext cc{&ctx};
    Acquired a(&cc);
    void* owner = nullptr;
    if (a.code == 0 && cu().PointerGetAttribute(&owner, kAttrContext, handle) == 0 && owner && owner != a.ctx) {
      throw Error(where.str() + " belongs to another CUDA context (another device?) than the call's "
                                "(DeviceContext::cuda_context)");
    }
    CUdeviceptr base = 0;
    size_t size = 0;
    if (cu().MemGetAddressRange(&base, &size, handle) == 0 &&
        static_cast<int64_t>(base + size - handle) < bytes) {
      throw Error(where.str() + ": its allocation ends " + std::to_string(base + size - handle) +
                  " bytes after it; its shape and strides need " + std::to_string(bytes));
    }
  }
  int wrap(void* uc, halide_buffer_t* buf, uint64_t handle) override {
    return halide_cuda_wrap_device_ptr(uc, buf, handle);
  }
  int detach(void* uc, halide_buffer_t* buf) override { return halide_cuda_detach_device_ptr(uc, buf); }
  int copy_to_host(void* uc, halide_buffer_t* buf) override { return halide_copy_to_host(uc, buf); }
  int device_free(void* uc, halide_buffer_t* buf) override { return halide_device_free(uc, buf); }
  void synchronize(const DeviceContext& ctx) override {
    if (!cu().error.empty()) throw Error("cuda: synchronize: " + cu().error);
    if (ctx.cuda_stream) {
      cu().StreamSynchronize(ctx.cuda_stream);
      return;
    }
    CallContext cc{&ctx};
    Acquired a(&cc);
    if (a.code != 0 || !a.ctx) return;
    cu().CtxPushCurrent(a.ctx);
    cu().CtxSynchronize();
    void* popped = nullptr;
    cu().CtxPopCurrent(&popped);
  }
  std::string device_name(const DeviceContext& ctx) override {
    if (!cu().error.empty() || !cu().DeviceGetName || !cu().CtxGetDevice) return "";
    CallContext cc{&ctx};
    Acquired a(&cc);
    if (a.code != 0 || !a.ctx) return "";
    int dev = 0;
    char name[256] = {0};
    cu().CtxPushCurrent(a.ctx);
    cu().CtxGetDevice(&dev);
    void* popped = nullptr;
    cu().CtxPopCurrent(&popped);
    if (cu().DeviceGetName(name, sizeof name - 1, dev) != 0) return "";
    return name;
  }
  int conv(ConvKernel k, void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias,
           const ConvArgs& a, halide_buffer_t* y) override {
    auto f = k == ConvKernel::Grouped ? k_.grouped : k == ConvKernel::BatchedWeight ? k_.batched_weight
                                                                                    : k_.broadcast_input;
    return f(uc, x, w, bias, a.stride_x, a.stride_y, a.dilation_x, a.dilation_y, a.pad_x, a.pad_y, a.relu, y);
  }
  int linear(void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias, bool relu,
             halide_buffer_t* y) override {
    return k_.linear(uc, x, w, bias, relu, y);
  }

 private:
  CudaKernels k_;
};

CudaBackend& backend() {
  static CudaBackend b(CudaKernels{batchconv_grouped_conv_cuda, batchconv_batched_weight_conv_cuda,
                                   batchconv_broadcast_input_conv_cuda, batchconv_batched_linear_cuda});
  cu();  // installs the context hooks before any kernel runs
  return b;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const CudaKernels& kernels) {
  cu();
  return std::make_unique<CudaBackend>(kernels);
}

}  // namespace detail::device

namespace cuda {
using detail::device::backend;
using detail::device::ConvKernel;

std::string unavailable_reason() { return backend().unavailable_reason(); }
std::string device_name(const DeviceContext& ctx) { return backend().device_name(ctx); }
void synchronize(const DeviceContext& ctx) { backend().synchronize(ctx); }

#include "device_entry_points.inc"
}  // namespace cuda
}  // namespace batchconv

// The OpenCL device library (libbatchconv_opencl.so): Backend over the
// batchconv_<op>_opencl kernels and Halide's OpenCL runtime. The driver
// (libOpenCL.so.1, an ICD loader) is opened on first use, never linked.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <sstream>

#include "batchconv_batched_linear_opencl.h"
#include "batchconv_batched_weight_conv_opencl.h"
#include "batchconv_broadcast_input_conv_opencl.h"
#include "batchconv_grouped_conv_opencl.h"
#include "HalideRuntimeOpenCL.h"
#include "device_common.h"

extern "C" int halide_acquire_cl_context(void* user_context, void** ctx, void** queue, bool create);
extern "C" int halide_release_cl_context(void* user_context);

namespace batchconv {
namespace detail::device {
namespace {

// The few OpenCL entry points used here (cl.h's values, to need no headers).
using cl_int = int32_t;
using cl_uint = uint32_t;
constexpr cl_uint kMemSize = 0x1102, kMemContext = 0x1106, kQueueDevice = 0x1091, kDeviceName = 0x102B;

struct ClApi {
  cl_int (*GetPlatformIDs)(cl_uint, void**, cl_uint*) = nullptr;
  cl_int (*GetMemObjectInfo)(void*, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_int (*GetCommandQueueInfo)(void*, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_int (*GetDeviceInfo)(void*, cl_uint, size_t, void*, size_t*) = nullptr;
  cl_int (*Finish)(void*) = nullptr;
  std::string error;  // why OpenCL cannot run here ("" when it can)
};

const ClApi& cl() {
  static ClApi api;
  static std::once_flag once;
  std::call_once(once, [] {
    // RTLD_GLOBAL: Halide's runtime then finds the same entry points.
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      api.error = "no OpenCL driver: libOpenCL.so.1 not found (install an ICD loader and a driver, e.g. "
                  "ocl-icd-libopencl1 and pocl-opencl-icd)";
      return;
    }
    api.GetPlatformIDs = reinterpret_cast<decltype(api.GetPlatformIDs)>(dlsym(lib, "clGetPlatformIDs"));
    api.GetMemObjectInfo = reinterpret_cast<decltype(api.GetMemObjectInfo)>(dlsym(lib, "clGetMemObjectInfo"));
    api.GetCommandQueueInfo =
        reinterpret_cast<decltype(api.GetCommandQueueInfo)>(dlsym(lib, "clGetCommandQueueInfo"));
    api.GetDeviceInfo = reinterpret_cast<decltype(api.GetDeviceInfo)>(dlsym(lib, "clGetDeviceInfo"));
    api.Finish = reinterpret_cast<decltype(api.Finish)>(dlsym(lib, "clFinish"));
    if (!api.GetPlatformIDs || !api.GetMemObjectInfo || !api.GetCommandQueueInfo || !api.GetDeviceInfo ||
        !api.Finish) {
      api.error = "no usable OpenCL driver: libOpenCL.so.1 lacks OpenCL 1.2 entry points";
      return;
    }
    cl_uint n = 0;
    if (api.GetPlatformIDs(0, nullptr, &n) != 0 || n == 0) {
      api.error = "no OpenCL platform: the ICD loader found no driver (e.g. install pocl-opencl-icd, or check "
                  "OCL_ICD_VENDORS)";
    }
  });
  return api;
}

// Halide's runtime opens the driver in its device calls, not in
// halide_acquire_cl_context: one tiny allocation first, once.
void load_driver_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    install_error_capture();
    float one = 0.0f;
    halide_dimension_t dim{0, 1, 1, 0};
    halide_buffer_t b{};
    b.host = reinterpret_cast<uint8_t*>(&one);
    b.type = halide_type_t(halide_type_float, 32, 1);
    b.dimensions = 1;
    b.dim = &dim;
    if (halide_device_malloc(nullptr, &b, halide_opencl_device_interface()) == 0) halide_device_free(nullptr, &b);
  });
}

// Halide's context and queue, acquired for the scope.
struct Acquired {
  void* ctx = nullptr;
  void* queue = nullptr;
  int code;
  explicit Acquired(void* uc) : uc_(uc) {
    load_driver_once();
    code = halide_acquire_cl_context(uc, &ctx, &queue, true);
  }
  ~Acquired() { halide_release_cl_context(uc_); }
  void* uc_;
};

class OpenClBackend final : public Backend {
 public:
  const char* name() const override { return "opencl"; }
  std::string unavailable_reason() override { return cl().error; }

  void check_handle(const char* op, const char* what, uint64_t handle, int64_t bytes,
                    const DeviceContext& /*ctx*/) override {
    std::ostringstream where;
    where << op << ": " << what << " (0x" << std::hex << handle << ")";
    if (handle == 0) throw Error(std::string(op) + ": " + what + " is a null cl_mem");
    Acquired a(nullptr);
    if (a.code != 0 || !a.ctx) throw Error(std::string(op) + ": no OpenCL context could be created: " + last_halide_error());
    // Every object of an ICD platform starts with the platform's dispatch
    // table: a host pointer (or a cl_mem of another platform) does not.
    if (handle % alignof(void*) != 0 ||
        std::memcmp(reinterpret_cast<const void*>(handle), a.ctx, sizeof(void*)) != 0) {
      throw Error(where.str() + " is not an OpenCL buffer of the platform batchconv runs on (a host pointer? "
                                "host memory goes through the TensorView overloads)");
    }
    void* owner = nullptr;
    if (cl().GetMemObjectInfo(reinterpret_cast<void*>(handle), kMemContext, sizeof owner, &owner, nullptr) != 0) {
      throw Error(where.str() + " is not a valid cl_mem");
    }
    if (owner != a.ctx) {
      throw Error(where.str() + " belongs to another OpenCL context (another device?) than the one the kernels "
                                "run on (batchconv::opencl::native_handles)");
    }
    size_t size = 0;
    cl().GetMemObjectInfo(reinterpret_cast<void*>(handle), kMemSize, sizeof size, &size, nullptr);
    if (static_cast<int64_t>(size) < bytes) {
      throw Error(where.str() + " holds " + std::to_string(size) + " bytes; its shape and strides need " +
                  std::to_string(bytes));
    }
  }
  int wrap(void* uc, halide_buffer_t* buf, uint64_t handle) override {
    return halide_opencl_wrap_cl_mem(uc, buf, handle);
  }
  int detach(void* uc, halide_buffer_t* buf) override { return halide_opencl_detach_cl_mem(uc, buf); }
  int copy_to_host(void* uc, halide_buffer_t* buf) override { return halide_copy_to_host(uc, buf); }
  int device_free(void* uc, halide_buffer_t* buf) override { return halide_device_free(uc, buf); }
  void synchronize(const DeviceContext& /*ctx*/) override {
    if (!cl().error.empty()) throw Error("opencl: synchronize: " + cl().error);
    Acquired a(nullptr);
    if (a.code == 0 && a.queue) cl().Finish(a.queue);
  }
  std::string device_name(const DeviceContext& /*ctx*/) override {
    if (!cl().error.empty()) return "";
    Acquired a(nullptr);
    void* dev = nullptr;
    char name[256] = {0};
    if (a.code != 0 || !a.queue ||
        cl().GetCommandQueueInfo(a.queue, kQueueDevice, sizeof dev, &dev, nullptr) != 0 ||
        cl().GetDeviceInfo(dev, kDeviceName, sizeof name - 1, name, nullptr) != 0) {
      return "";
    }
    return name;
  }
  int conv(ConvKernel k, void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias,
           const ConvArgs& a, halide_buffer_t* y) override {
    auto f = k == ConvKernel::Grouped ? batchconv_grouped_conv_opencl
             : k == ConvKernel::BatchedWeight ? batchconv_batched_weight_conv_opencl
                                              : batchconv_broadcast_input_conv_opencl;
    return f(uc, x, w, bias, a.stride_x, a.stride_y, a.dilation_x, a.dilation_y, a.pad_x, a.pad_y, a.relu, y);
  }
  int linear(void* uc, halide_buffer_t* x, halide_buffer_t* w, halide_buffer_t* bias, bool relu,
             halide_buffer_t* y) override {
    return batchconv_batched_linear_opencl(uc, x, w, bias, relu, y);
  }
};

OpenClBackend& backend() {
  static OpenClBackend b;
  return b;
}

}  // namespace
}  // namespace detail::device

namespace opencl {
using detail::device::backend;
using detail::device::ConvKernel;

std::string unavailable_reason() { return backend().unavailable_reason(); }
std::string device_name(const DeviceContext& ctx) { return backend().device_name(ctx); }
void synchronize(const DeviceContext& ctx) { backend().synchronize(ctx); }
void native_handles(void** context, void** queue) {
  const std::string why = unavailable_reason();
  if (!why.empty()) throw Error("opencl: native_handles: " + why);
  detail::device::Acquired a(nullptr);
  if (a.code != 0) throw Error("opencl: native_handles: " + detail::device::last_halide_error());
  if (context) *context = a.ctx;
  if (queue) *queue = a.queue;
}

#include "device_entry_points.inc"
}  // namespace opencl
}  // namespace batchconv

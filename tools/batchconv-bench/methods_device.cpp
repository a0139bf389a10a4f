// batchconv's ops on a GPU (--device=opencl|cuda): the device library's
// host-memory calls, which copy the operands to the device, run the gpu
// schedule family's kernel and copy y back, so the time includes the
// transfers. Checked against the reference like every method.
#include <stdexcept>

#include "batchconv/device.h"
#include "methods.h"

namespace bcbench {

namespace {

template <typename Api>
class OnDevice : public Method {
 public:
  explicit OnDevice(const std::string& device) {
    name = "batchconv@" + device;
    family = Family::Batchconv;
  }
  void setup(Problem&) override {
    const std::string why = Api::unavailable_reason();
    if (!why.empty()) throw std::runtime_error(name + ": " + why);
    impl = Api::device_name(ctx_);
  }
  void run(Problem& p) override {
    const auto& s = p.spec;
    switch (s.op) {
      case Op::GroupedConv: Api::grouped_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc, ctx_); break;
      case Op::BatchedWeightConv: Api::batched_weight_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc, ctx_); break;
      case Op::BroadcastInputConv:
        Api::broadcast_input_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc, s.layout, ctx_);
        break;
      case Op::BatchedLinear: Api::batched_linear(p.xv, p.wv, p.bias_view(), p.yv, s.desc.activation, ctx_); break;
    }
  }

 private:
  batchconv::DeviceContext ctx_;
};

struct OpenclApi {
  static std::string unavailable_reason() { return batchconv::opencl::unavailable_reason(); }
  static std::string device_name(const batchconv::DeviceContext& c) { return batchconv::opencl::device_name(c); }
  template <typename... A>
  static void grouped_conv(A&&... a) { batchconv::opencl::grouped_conv(a...); }
  template <typename... A>
  static void batched_weight_conv(A&&... a) { batchconv::opencl::batched_weight_conv(a...); }
  template <typename... A>
  static void broadcast_input_conv(A&&... a) { batchconv::opencl::broadcast_input_conv(a...); }
  template <typename... A>
  static void batched_linear(A&&... a) { batchconv::opencl::batched_linear(a...); }
};

struct CudaApi {
  static std::string unavailable_reason() { return batchconv::cuda::unavailable_reason(); }
  static std::string device_name(const batchconv::DeviceContext& c) { return batchconv::cuda::device_name(c); }
  template <typename... A>
  static void grouped_conv(A&&... a) { batchconv::cuda::grouped_conv(a...); }
  template <typename... A>
  static void batched_weight_conv(A&&... a) { batchconv::cuda::batched_weight_conv(a...); }
  template <typename... A>
  static void broadcast_input_conv(A&&... a) { batchconv::cuda::broadcast_input_conv(a...); }
  template <typename... A>
  static void batched_linear(A&&... a) { batchconv::cuda::batched_linear(a...); }
};

}  // namespace

void add_device_methods(const Problem& p, MethodList* out) {
  std::unique_ptr<Method> m;
  if (p.spec.device == "opencl") m = std::make_unique<OnDevice<OpenclApi>>("opencl");
  else if (p.spec.device == "cuda") m = std::make_unique<OnDevice<CudaApi>>("cuda");
  else return;
  m->what = std::string("batchconv::") + p.spec.device + "::" + op_name(p.spec.op) +
            " on host memory (copies to and from the device included)";
  out->push_back(std::move(m));
}

}  // namespace bcbench

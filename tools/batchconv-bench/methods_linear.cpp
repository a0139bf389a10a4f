// oneDNN peers for batched_linear: the batched matmul primitive (shared x as a
// broadcast batch dimension) and a loop of dnnl_sgemm calls.
#include <algorithm>

#include "methods.h"
#include "onednn_conv.h"

namespace bcbench {
namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

struct LinearDims {
  int64_t b, n, k, m;
};
LinearDims dims_of(const Problem& p) {
  return {p.batch, p.y_shape[1], p.spec.w_shape[1], p.spec.w_shape[2]};
}

class Matmul : public Method {
 public:
  void setup(Problem& p) override {
    const LinearDims d = dims_of(p);
    auto& eng = dnnl_engine();
    memory::desc src({p.shared_x ? 1 : d.b, d.n, d.k}, dt::f32, tag::abc);
    memory::desc wei({d.b, d.k, d.m}, dt::f32, tag::abc);
    memory::desc bias({d.b, 1, d.m}, dt::f32, tag::abc);
    memory::desc dst({d.b, d.n, d.m}, dt::f32, tag::abc);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (p.spec.desc.activation == batchconv::Activation::ReLU) {
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(po);
    }
    auto md = p.spec.bias ? dnnl::matmul::desc(src, wei, bias, dst) : dnnl::matmul::desc(src, wei, dst);
    dnnl::matmul::primitive_desc pd(md, attr, eng);
    impl = pd.impl_info_str();
    prim_ = dnnl::matmul(pd);
    scratch_ = Buffer(pd.scratchpad_desc().get_size() / 4 + 1);
    args_ = {{DNNL_ARG_SRC, memory(src, eng, p.x.data())},
             {DNNL_ARG_WEIGHTS, memory(wei, eng, p.w.data())},
             {DNNL_ARG_DST, memory(dst, eng, p.y.data())},
             {DNNL_ARG_SCRATCHPAD, memory(pd.scratchpad_desc(), eng, scratch_.data())}};
    if (p.spec.bias) args_[DNNL_ARG_BIAS] = memory(bias, eng, p.b.data());
  }
  void run(Problem&) override {
    prim_.execute(dnnl_stream(), args_);
    dnnl_stream().wait();
  }

 private:
  dnnl::matmul prim_;
  Buffer scratch_;
  std::unordered_map<int, memory> args_;
};

class SgemmLoop : public Method {
 public:
  void run(Problem& p) override {
    const LinearDims d = dims_of(p);
    const bool relu = p.spec.desc.activation == batchconv::Activation::ReLU;
    for (int64_t b = 0; b < d.b; ++b) {
      const float* x = p.x.data() + (p.shared_x ? 0 : b * d.n * d.k);
      float* y = p.y.data() + b * d.n * d.m;
      dnnl_sgemm('N', 'N', d.n, d.m, d.k, 1.f, x, d.k, p.w.data() + b * d.k * d.m, d.m, 0.f, y, d.m);
      if (!p.spec.bias && !relu) continue;
      const float* bias = p.spec.bias ? p.b.data() + b * d.m : nullptr;
      for (int64_t i = 0; i < d.n; ++i)
        for (int64_t j = 0; j < d.m; ++j) {
          float v = y[i * d.m + j] + (bias ? bias[j] : 0.f);
          y[i * d.m + j] = relu ? std::max(v, 0.f) : v;
        }
    }
  }
};

}  // namespace

void add_linear_methods(const Problem& p, MethodList* out) {
  // oneDNN 2.6 runs a matmul whose src batch is broadcast (shared x) through
  // its reference kernel (thousands of times slower): only for a batched x.
  if (!p.shared_x) {
    auto m = std::make_unique<Matmul>();
    m->name = "onednn:matmul";
    m->family = Family::Onednn;
    m->what = "oneDNN batched matmul primitive";
    out->push_back(std::move(m));
  }
  auto s = std::make_unique<SgemmLoop>();
  s->name = "onednn:sgemm-loop";
  s->family = Family::Onednn;
  s->what = "loop over b of dnnl_sgemm, then bias/ReLU in a plain loop";
  out->push_back(std::move(s));
}

}  // namespace bcbench

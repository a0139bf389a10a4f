#include "onednn_conv.h"

#include <stdexcept>

namespace bcbench {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::engine& dnnl_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}
dnnl::stream& dnnl_stream() {
  static dnnl::stream s(dnnl_engine());
  return s;
}

std::string dnnl_version_string() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (" + v->hash + ")";
}

namespace {

memory::dims src_dims(const ConvGeom& g) { return {g.n, g.cin, g.h, g.w}; }
memory::dims dst_dims(const ConvGeom& g) { return {g.n, g.cout, g.oh, g.ow}; }
memory::dims wei_dims(const ConvGeom& g) {
  if (g.groups == 1) return {g.cout, g.cin, g.kh, g.kw};
  return {g.groups, g.cout / g.groups, g.cin / g.groups, g.kh, g.kw};
}
tag wei_tag(const ConvGeom& g) { return g.groups == 1 ? tag::oihw : tag::goihw; }

}  // namespace

memory::desc OnednnConv::plain_src() const { return memory::desc(src_dims(g_), dt::f32, tag::nchw); }
memory::desc OnednnConv::plain_weights() const {
  return memory::desc(wei_dims(g_), dt::f32, wei_tag(g_));
}
memory::desc OnednnConv::plain_dst() const { return memory::desc(dst_dims(g_), dt::f32, tag::nchw); }

OnednnConv::OnednnConv(const ConvGeom& g, bool bias, Layout layout,
                       const std::vector<int64_t>& dst_strides)
    : g_(g), has_bias_(bias) {
  auto& eng = dnnl_engine();
  if (layout == Layout::Plain) {
    src_md_ = plain_src();
    wei_md_ = plain_weights();
    dst_md_ = dst_strides.empty() ? plain_dst()
                                  : memory::desc(dst_dims(g), dt::f32, memory::dims(dst_strides));
  } else {
    src_md_ = memory::desc(src_dims(g), dt::f32, tag::any);
    wei_md_ = memory::desc(wei_dims(g), dt::f32, tag::any);
    dst_md_ = memory::desc(dst_dims(g), dt::f32, tag::any);
  }
  bias_md_ = memory::desc({g.cout}, dt::f32, tag::x);
  const memory::dims strides = {g.sh, g.sw}, dil = {g.dh - 1, g.dw - 1};
  const memory::dims pad_l = {g.pt, g.pl}, pad_r = {g.pb, g.pr};
  auto desc = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::convolution_direct, src_md_,
                                                     wei_md_, bias_md_, dst_md_, strides, dil,
                                                     pad_l, pad_r)
                   : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                     dnnl::algorithm::convolution_direct, src_md_,
                                                     wei_md_, dst_md_, strides, dil, pad_l, pad_r);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
  impl_ = pd.impl_info_str();
  src_md_ = pd.src_desc();
  wei_md_ = pd.weights_desc();
  dst_md_ = pd.dst_desc();
  prim_ = dnnl::convolution_forward(pd);
  const size_t scratch_bytes = pd.scratchpad_desc().get_size();
  scratch_ = Buffer((scratch_bytes + 3) / 4);
  scratch_m_ = memory(pd.scratchpad_desc(), eng, scratch_.data());
  src_m_ = memory(src_md_, eng, nullptr);
  wei_m_ = memory(wei_md_, eng, nullptr);
  dst_m_ = memory(dst_md_, eng, nullptr);
  if (bias) bias_m_ = memory(bias_md_, eng, nullptr);
}

void OnednnConv::execute(const float* src, const float* wei, const float* bias, float* dst) {
  src_m_.set_data_handle(const_cast<float*>(src));
  wei_m_.set_data_handle(const_cast<float*>(wei));
  dst_m_.set_data_handle(dst);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src_m_},
                                          {DNNL_ARG_WEIGHTS, wei_m_},
                                          {DNNL_ARG_DST, dst_m_},
                                          {DNNL_ARG_SCRATCHPAD, scratch_m_}};
  if (has_bias_) {
    bias_m_.set_data_handle(const_cast<float*>(bias));
    args[DNNL_ARG_BIAS] = bias_m_;
  }
  prim_.execute(dnnl_stream(), args);
  dnnl_stream().wait();
}

void onednn_reorder(const memory::desc& from, const void* src, const memory::desc& to, void* dst) {
  auto& eng = dnnl_engine();
  memory a(from, eng, const_cast<void*>(src)), b(to, eng, dst);
  dnnl::reorder(a, b).execute(dnnl_stream(), a, b);
  dnnl_stream().wait();
}

}  // namespace bcbench

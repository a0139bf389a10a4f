#include "onednn_pool.h"

#include <unordered_map>

#include "onednn_conv.h"

namespace model_layouts {

using dnnl::memory;

OnednnMaxPool::OnednnMaxPool(const memory::desc& src, int64_t window) : src_md_(src) {
  const memory::dims in = src.dims();
  const memory::dims out = {in[0], in[1], in[2] / window, in[3] / window};
  const memory::desc any(out, memory::data_type::f32, memory::format_tag::any);
  dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, src_md_, any,
                                   {window, window}, {window, window}, {0, 0}, {0, 0});
  dnnl::pooling_forward::primitive_desc pd(desc, bcbench::dnnl_engine());
  impl_ = pd.impl_info_str();
  dst_md_ = pd.dst_desc();
  prim_ = dnnl::pooling_forward(pd);
  src_m_ = memory(src_md_, bcbench::dnnl_engine(), nullptr);
  dst_m_ = memory(dst_md_, bcbench::dnnl_engine(), nullptr);
}

memory::desc OnednnMaxPool::plain_dst() const {
  return memory::desc(dst_md_.dims(), memory::data_type::f32, memory::format_tag::nchw);
}

void OnednnMaxPool::execute(const float* src, float* dst) {
  src_m_.set_data_handle(const_cast<float*>(src));
  dst_m_.set_data_handle(dst);
  prim_.execute(bcbench::dnnl_stream(), {{DNNL_ARG_SRC, src_m_}, {DNNL_ARG_DST, dst_m_}});
  bcbench::dnnl_stream().wait();
}

}  // namespace model_layouts

// A oneDNN max pooling (forward inference, kernel = stride, no padding) over
// a tensor in the layout the conv before it chose (its blocked dst), created
// once and executed many times: how a framework pools between oneDNN convs.
#pragma once

#include <string>

#include "dnnl.hpp"

namespace model_layouts {

class OnednnMaxPool {
 public:
  // src: the pooled tensor's description (N, C, H, W in any layout).
  OnednnMaxPool(const dnnl::memory::desc& src, int64_t window);
  void execute(const float* src, float* dst);
  const dnnl::memory::desc& dst_desc() const { return dst_md_; }
  dnnl::memory::desc plain_dst() const;  // the same tensor NCHW
  std::string impl() const { return impl_; }

 private:
  dnnl::memory::desc src_md_, dst_md_;
  dnnl::pooling_forward prim_;
  dnnl::memory src_m_, dst_m_;
  std::string impl_;
};

}  // namespace model_layouts

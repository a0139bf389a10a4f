// A oneDNN convolution (forward inference) over caller memory, created once
// and executed many times. Scratchpad mode is "user": the scratchpad is
// allocated here, through malloc, so the allocation counter sees it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "problem.h"

namespace bcbench {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();
std::string dnnl_version_string();  // "2.6.x (commit ...)"

class OnednnConv {
 public:
  enum class Layout {
    Plain,  // src/dst NCHW (dst may be strided: dst_strides), weights (g)oihw
    Any,    // format_tag::any everywhere: oneDNN's preferred (blocked) layouts
  };
  OnednnConv(const ConvGeom& g, bool bias, Layout layout,
             const std::vector<int64_t>& dst_strides = {});

  // Plain layout: pointers to NCHW / (g)oihw / (Cout) / NCHW memory.
  // Any layout: pointers to buffers in src_desc()/weights_desc()/dst_desc().
  void execute(const float* src, const float* wei, const float* bias, float* dst);

  const dnnl::memory::desc& src_desc() const { return src_md_; }
  const dnnl::memory::desc& weights_desc() const { return wei_md_; }
  const dnnl::memory::desc& dst_desc() const { return dst_md_; }
  std::string impl() const { return impl_; }  // oneDNN's implementation name, e.g. "jit:avx512_core"

  // Plain descriptors of the same tensors (for reorders to/from Any layouts).
  dnnl::memory::desc plain_src() const;
  dnnl::memory::desc plain_weights() const;
  dnnl::memory::desc plain_dst() const;

 private:
  ConvGeom g_;
  bool has_bias_;
  dnnl::memory::desc src_md_, wei_md_, bias_md_, dst_md_;
  dnnl::convolution_forward prim_;
  dnnl::memory src_m_, wei_m_, bias_m_, dst_m_, scratch_m_;
  Buffer scratch_;
  std::string impl_;
};

// Copies between two descriptions of the same tensor (e.g. NCHW <-> blocked).
void onednn_reorder(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to,
                    void* dst);

}  // namespace bcbench

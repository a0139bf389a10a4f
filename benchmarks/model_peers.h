// The peers model-layouts times beside the compiled models: oneDNN layer by
// layer (convs in its blocked layouts, or sgemm for an MLP) in this process,
// and PyTorch layer by layer in its own (benchmarks/model_peer.py).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "model_specs.h"
#include "onednn_conv.h"
#include "onednn_pool.h"
#include "parallel.h"

namespace model_layouts {

// The model layer by layer through oneDNN, the way a framework runs it:
// each conv in its preferred (blocked) layouts, weights reordered once, the
// input reordered in and the result out, a reorder between convs whose
// layouts differ, ReLU as a post-op, a residual Add + ReLU as a loop over the
// conv's blocked result (the added tensor reordered to that layout), a max
// pool in the conv's layout.
class OnednnPeer {
 public:
  OnednnPeer(const ModelSpec& spec, const batchconv::ir::Model& model, int threads) : spec_(spec), threads_(threads) {
    using bcbench::OnednnConv;
    for (size_t k = 0; k < spec.peer.size(); ++k) {
      const PeerLayer& L = spec.peer[k];
      bcbench::ConvGeom g = L.g;
      g.relu = L.relu && L.add < 0;
      Layer y;
      y.conv = std::make_unique<OnednnConv>(g, true, OnednnConv::Layout::Any);
      const batchconv::ir::Tensor& w = *model.graph.find_value("w" + std::to_string(k))->constant;
      const batchconv::ir::Tensor& b = *model.graph.find_value("b" + std::to_string(k))->constant;
      const size_t w_task = w.f.size() / spec.tasks;
      for (int64_t t = 0; t < spec.tasks; ++t) {
        y.w.emplace_back(y.conv->weights_desc().get_size() / sizeof(float));
        bcbench::onednn_reorder(y.conv->plain_weights(), w.f.data() + t * w_task, y.conv->weights_desc(), y.w.back().data());
      }
      y.b = b.f;
      y.dst.resize(y.conv->dst_desc().get_size() / sizeof(float));
      const bool direct = L.in > 0 && layers_[L.in - 1].result_desc() == y.conv->src_desc();
      if (!direct) y.src.resize(y.conv->src_desc().get_size() / sizeof(float));
      if (L.add >= 0) y.other.resize(y.dst.size());
      if (L.pool > 0) {
        y.pool = std::make_unique<OnednnMaxPool>(y.conv->dst_desc(), L.pool);
        y.pooled.resize(y.pool->dst_desc().get_size() / sizeof(float));
      }
      layers_.push_back(std::move(y));
    }
    in_task_ = 1;
    out_task_ = 1;
    const bcbench::ConvGeom& first = spec.peer.front().g;
    in_task_ = first.n * first.cin * first.h * first.w;
    out_task_ = static_cast<int64_t>(layers_.back().plain_result().get_size() / sizeof(float));
  }
  void run(const float* x, float* out) {
    for (int64_t t = 0; t < spec_.tasks; ++t) {
      const float* xt = x + t * in_task_;
      for (size_t k = 0; k < layers_.size(); ++k) {
        const PeerLayer& L = spec_.peer[k];
        Layer& y = layers_[k];
        const float* src;
        if (L.in == 0) {
          bcbench::onednn_reorder(y.conv->plain_src(), xt, y.conv->src_desc(), y.src.data());
          src = y.src.data();
        } else if (y.src.empty()) {
          src = layers_[L.in - 1].result();
        } else {
          const Layer& p = layers_[L.in - 1];
          bcbench::onednn_reorder(p.result_desc(), p.result(), y.conv->src_desc(), y.src.data());
          src = y.src.data();
        }
        y.conv->execute(src, y.w[t].data(), y.b.data() + t * (y.b.size() / spec_.tasks), y.dst.data());
        if (L.add >= 0) {
          const float* other;
          if (L.add == 0) {
            bcbench::onednn_reorder(y.conv->plain_dst(), xt, y.conv->dst_desc(), y.other.data());
            other = y.other.data();
          } else if (layers_[L.add - 1].result_desc() == y.conv->dst_desc()) {
            other = layers_[L.add - 1].result();
          } else {
            const Layer& p = layers_[L.add - 1];
            bcbench::onednn_reorder(p.result_desc(), p.result(), y.conv->dst_desc(), y.other.data());
            other = y.other.data();
          }
          float* d = y.dst.data();
          const bool relu = L.relu;
          bcbench::parallel_ranges(static_cast<int64_t>(y.dst.size()), threads_, [&](int64_t a, int64_t e) {
            for (int64_t i = a; i < e; ++i) d[i] = relu ? std::max(d[i] + other[i], 0.0f) : d[i] + other[i];
          });
        }
        if (y.pool) y.pool->execute(y.dst.data(), y.pooled.data());
      }
      const Layer& z = layers_.back();
      bcbench::onednn_reorder(z.result_desc(), z.result(), z.plain_result(), out + t * out_task_);
    }
  }
  std::string impls() const {
    std::string s;
    for (const Layer& y : layers_) {
      s += (s.empty() ? "" : ", ") + y.conv->impl();
      if (y.pool) s += ", pool " + y.pool->impl();
    }
    return s;
  }

 private:
  struct Layer {
    std::unique_ptr<bcbench::OnednnConv> conv;
    std::unique_ptr<OnednnMaxPool> pool;
    std::vector<std::vector<float>> w;  // per task, in the conv's weights layout
    std::vector<float> b, src, dst, other, pooled;
    // What later layers read: the pooled tensor, or the conv's.
    const dnnl::memory::desc& result_desc() const { return pool ? pool->dst_desc() : conv->dst_desc(); }
    const float* result() const { return pool ? pooled.data() : dst.data(); }
    dnnl::memory::desc plain_result() const { return pool ? pool->plain_dst() : conv->plain_dst(); }
  };
  const ModelSpec& spec_;
  int threads_;
  std::vector<Layer> layers_;
  int64_t in_task_ = 0, out_task_ = 0;
};

// An MLP layer by layer through oneDNN's sgemm, bias and ReLU a loop.
class SgemmPeer {
 public:
  SgemmPeer(const ModelSpec& spec, const batchconv::ir::Model& model, int threads) : spec_(spec), threads_(threads) {
    for (size_t k = 0; k < spec.gemms.size(); ++k) {
      w_.push_back(model.graph.find_value("w" + std::to_string(k))->constant->f);
      b_.push_back(model.graph.find_value("b" + std::to_string(k))->constant->f);
      out_.emplace_back(static_cast<size_t>(spec.gemms[k].rows * spec.gemms[k].n));
    }
  }
  void run(const float* x, float* y) {
    const float* in = x;
    for (size_t k = 0; k < spec_.gemms.size(); ++k) {
      const GemmLayer& g = spec_.gemms[k];
      float* o = k + 1 == spec_.gemms.size() ? y : out_[k].data();
      dnnl_sgemm('N', g.trans_b ? 'T' : 'N', g.rows, g.n, g.k, 1.0f, in, g.k, w_[k].data(), g.trans_b ? g.k : g.n,
                 0.0f, o, g.n);
      const float* b = b_[k].data();
      const int64_t n = g.n;
      const bool relu = g.relu;
      bcbench::parallel_ranges(g.rows, threads_, [&](int64_t a, int64_t e) {
        for (int64_t r = a; r < e; ++r)
          for (int64_t c = 0; c < n; ++c) {
            const float v = o[r * n + c] + b[c];
            o[r * n + c] = relu ? std::max(v, 0.0f) : v;
          }
      });
      in = o;
    }
  }
  std::string impls() const { return "dnnl_sgemm x " + std::to_string(spec_.gemms.size()); }

 private:
  const ModelSpec& spec_;
  int threads_;
  std::vector<std::vector<float>> w_, b_, out_;
};

// PyTorch's median ms per model (convs only: models without conv layers are
// left out), run by `script` after the others; "SKIP" reasons in *note.
std::map<std::string, double> run_torch_peer(const std::string& script, const std::vector<ModelSpec>& models,
                                             int reps, std::string* note);

}  // namespace model_layouts

// model-layouts: whole models compiled by the model compiler (Halide JIT, the
// same lowering and code generation as batchconv-compile's libraries) with
// the layout plan's default policy (auto: conv results channels innermost
// between channels-family convs) and with every conv result NCHW, timed in
// the same run, interleaved, on preallocated buffers, with the pipeline's
// peak heap beside each. Prints a Markdown table and each model's plan.
//
//   model-layouts [--reps=N] [--only=<model>[,<model>...]] [--profile]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include <unistd.h>
#include <vector>

#include "Halide.h"
#include "layout_plan.h"
#include "lower.h"
#include "machine_limits.h"
#include "onednn_conv.h"
#include "parallel.h"
#include "onnx/onnx_io.h"

namespace {

using batchconv::compiler::LayoutPolicy;

std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

// One conv of the oneDNN peer: reads tensor `in` (0: the model input, k: layer
// k-1's result), weights w<k>/b<k>; optionally adds tensor `add` (NCHW input
// if 0) before its ReLU.
struct PeerLayer {
  bcbench::ConvGeom g;
  int in = 0;
  int add = -1;
  bool relu = true;
};

// One Gemm of an MLP's oneDNN peer: y (rows, n) = relu?(x (rows, k) @ w<k> (k, n) + b<k>).
struct GemmLayer {
  int64_t rows, k, n;
  bool relu;
};

struct ModelSpec {
  std::string name, what;
  std::string text;              // ONNX text; weights are inputs named w<k>, b<k>
  int64_t tasks = 1;             // batched-weight models: oneDNN runs each task's slice in turn
  std::vector<PeerLayer> peer;   // the same model layer by layer for oneDNN
  std::vector<GemmLayer> gemms;  // or, for an MLP, its Gemms (oneDNN's sgemm)
};

bcbench::ConvGeom geom(int64_t n, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t k, int64_t groups = 1) {
  bcbench::ConvGeom g;
  g.n = n, g.cin = cin, g.h = h, g.w = w, g.cout = cout, g.kh = k, g.kw = k, g.groups = groups;
  g.pt = g.pl = g.pb = g.pr = k / 2;
  g.oh = h, g.ow = w;
  return g;
}

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

// MAML-like: 4 batched-weight 3x3 convs with ReLU, every task its own weights.
ModelSpec maml_stack() {
  const int64_t B = 8, N = 10, C = 32, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({B, N, 3, H, W}) << "] x";
  t << ", float[" << dims({B, C, 3, 3, 3}) << "] w0, float[" << dims({B, C}) << "] b0";
  for (int l = 1; l < 4; ++l) t << ", float[" << dims({B, C, C, 3, 3}) << "] w" << l << ", float[" << dims({B, C}) << "] b" << l;
  t << ") => (float[" << dims({B, N, C, H, W}) << "] y) {\n";
  std::string in = "x";
  for (int l = 0; l < 4; ++l) {
    const std::string c = "c" + std::to_string(l), r = l == 3 ? "y" : "r" + std::to_string(l);
    t << "  " << c << " = batchconv.BatchedWeightConv<pads = [1, 1, 1, 1]>(" << in << ", w" << l << ", b" << l << ")\n";
    t << "  " << r << " = Relu(" << c << ")\n";
    in = r;
  }
  t << "}\n";
  ModelSpec m{"maml_stack", "8 tasks x 10 images, 3->32->32->32->32, 28x28, batched-weight 3x3 + ReLU", t.str(), B, {}};
  for (int l = 0; l < 4; ++l) m.peer.push_back({geom(N, l ? C : 3, H, W, C, 3), l});
  return m;
}

// VGG-like: three dense 3x3 convs with ReLU and a residual Add.
ModelSpec conv_stack() {
  const int64_t N = 4, C = 64, H = 56, W = 56;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x";
  for (int l = 0; l < 3; ++l) t << ", float[" << dims({C, C, 3, 3}) << "] w" << l << ", float[" << C << "] b" << l;
  t << ") => (float[" << dims({N, C, H, W}) << "] y) {\n"
    << "  c0 = Conv<pads = [1, 1, 1, 1]>(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv<pads = [1, 1, 1, 1]>(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2, b2)\n  a = Add(c2, r0)\n  y = Relu(a)\n}\n";
  ModelSpec m{"conv_stack", "N=4, 64->64 x3, 56x56, 3x3 + ReLU, residual Add", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, C, 3), 0}, {geom(N, C, H, W, C, 3), 1}, {geom(N, C, H, W, C, 3), 2, 1}};
  return m;
}

// ResNeXt block: 1x1, grouped 3x3 (32 groups of 4), 1x1, residual, ReLU.
ModelSpec resnext_block() {
  const int64_t N = 8, C = 256, M = 128, H = 14, W = 14;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x, float[" << dims({M, C, 1, 1}) << "] w0, float[" << M
    << "] b0, float[" << dims({M, 4, 3, 3}) << "] w1, float[" << M << "] b1, float[" << dims({C, M, 1, 1})
    << "] w2, float[" << C << "] b2) => (float[" << dims({N, C, H, W}) << "] y) {\n"
    << "  c0 = Conv(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv<group = 32, pads = [1, 1, 1, 1]>(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv(r1, w2, b2)\n  a = Add(c2, x)\n  y = Relu(a)\n}\n";
  ModelSpec m{"resnext_block", "N=8, 256->128 1x1, 128 g=32 3x3, 128->256 1x1, 14x14, + x, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, M, 1), 0}, {geom(N, M, H, W, M, 3, 32), 1}, {geom(N, M, H, W, C, 1), 2, 0}};
  return m;
}

// The ResNeXt block's grouped conv alone (32 groups of 4 channels).
ModelSpec resnext_grouped() {
  const int64_t N = 8, M = 128, H = 14, W = 14;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, M, H, W}) << "] x, float[" << dims({M, 4, 3, 3}) << "] w0, float[" << M
    << "] b0) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = 32, pads = [1, 1, 1, 1]>(x, w0, b0)\n  y = Relu(c0)\n}\n";
  ModelSpec m{"resnext_grouped", "the block's grouped 3x3 alone: N=8, 128 g=32, 14x14, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, M, H, W, M, 3, 32), 0}};
  return m;
}

// The depthwise-separable block's second depthwise conv alone.
ModelSpec depthwise() {
  const int64_t N = 8, M = 128, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, M, H, W}) << "] x, float[" << dims({M, 1, 3, 3}) << "] w0, float[" << M
    << "] b0) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = " << M << ", pads = [1, 1, 1, 1]>(x, w0, b0)\n  y = Relu(c0)\n}\n";
  ModelSpec m{"depthwise", "depthwise 3x3 alone: N=8, 128 channels, 28x28, ReLU", t.str(), 1, {}};
  m.peer = {{geom(N, M, H, W, M, 3, M), 0}};
  return m;
}

// Depthwise-separable (MobileNet): depthwise 3x3 + ReLU, pointwise 1x1 + ReLU, twice.
ModelSpec dw_separable() {
  const int64_t N = 8, C = 64, M = 128, H = 28, W = 28;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, C, H, W}) << "] x, float[" << dims({C, 1, 3, 3}) << "] w0, float[" << C
    << "] b0, float[" << dims({M, C, 1, 1}) << "] w1, float[" << M << "] b1, float[" << dims({M, 1, 3, 3})
    << "] w2, float[" << M << "] b2, float[" << dims({M, M, 1, 1}) << "] w3, float[" << M
    << "] b3) => (float[" << dims({N, M, H, W}) << "] y) {\n"
    << "  c0 = Conv<group = " << C << ", pads = [1, 1, 1, 1]>(x, w0, b0)\n  r0 = Relu(c0)\n"
    << "  c1 = Conv(r0, w1, b1)\n  r1 = Relu(c1)\n"
    << "  c2 = Conv<group = " << M << ", pads = [1, 1, 1, 1]>(r1, w2, b2)\n  r2 = Relu(c2)\n"
    << "  c3 = Conv(r2, w3, b3)\n  y = Relu(c3)\n}\n";
  ModelSpec m{"dw_separable", "N=8, dw 3x3 64, 1x1 64->128, dw 3x3 128, 1x1 128->128, 28x28, ReLU each", t.str(), 1, {}};
  m.peer = {{geom(N, C, H, W, C, 3, C), 0}, {geom(N, C, H, W, M, 1), 1}, {geom(N, M, H, W, M, 3, M), 2},
            {geom(N, M, H, W, M, 1), 3}};
  return m;
}

// Seed 1 at N = 1e6: the shared input through 4 linear layers, as the rewriter leaves it (one 1-D conv).
ModelSpec seed1() {
  const int64_t N = 1000000;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({1, 16, N}) << "] x, float[" << dims({64, 16, 1}) << "] w0, float[64] b0) => (float["
    << dims({1, 64, N}) << "] y) {\n  y = Conv(x, w0, b0)\n}\n";
  ModelSpec m{"seed1", "N = 1e6, 16 -> 4 x 16 as one 1x1 1-D conv (the rewritten seed 1)", t.str(), 1, {}};
  bcbench::ConvGeom g = geom(1, 16, 1, N, 64, 1);
  g.kh = 1, g.one_d = true;
  m.peer = {{g, 0, -1, false}};
  return m;
}

// An MLP: three Gemms with ReLU between them (a classifier head's shapes).
ModelSpec mlp() {
  const int64_t N = 256, D = 1024, O = 10;
  std::ostringstream t;
  t << kHeader << "g (float[" << dims({N, D}) << "] x, float[" << dims({D, D}) << "] w0, float[" << D
    << "] b0, float[" << dims({D, D}) << "] w1, float[" << D << "] b1, float[" << dims({D, O}) << "] w2, float[" << O
    << "] b2) => (float[" << dims({N, O}) << "] y) {\n"
    << "  h0 = Gemm(x, w0, b0)\n  r0 = Relu(h0)\n  h1 = Gemm(r0, w1, b1)\n  r1 = Relu(h1)\n"
    << "  y = Gemm(r1, w2, b2)\n}\n";
  ModelSpec m{"mlp", "256 rows, 1024 -> 1024 -> 1024 -> 10, Gemm + ReLU", t.str(), 1, {}, {}};
  m.gemms = {{N, D, D, true}, {N, D, D, true}, {N, D, O, false}};
  return m;
}

// Peak heap of the pipeline (its compute_root intermediates), through Halide's JIT allocator hook.
size_t g_live = 0, g_peak = 0;
void* counting_malloc(Halide::JITUserContext*, size_t n) {
  char* p = static_cast<char*>(std::aligned_alloc(128, (n + 128 + 127) / 128 * 128));
  if (!p) return nullptr;
  std::memcpy(p, &n, sizeof n);
  g_live += n;
  g_peak = std::max(g_peak, g_live);
  return p + 128;
}
void counting_free(Halide::JITUserContext*, void* q) {
  if (!q) return;
  char* p = static_cast<char*>(q) - 128;
  size_t n;
  std::memcpy(&n, p, sizeof n);
  g_live -= n;
  std::free(p);
}

// The model layer by layer through oneDNN, the way a framework runs it:
// each conv in its preferred (blocked) layouts, weights reordered once, the
// input reordered in and the result out, a reorder between convs whose
// layouts differ, ReLU as a post-op, a residual Add + ReLU as a loop over the
// conv's blocked result (the added tensor reordered to that layout).
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
      const bool direct = L.in > 0 && layers_[L.in - 1].conv->dst_desc() == y.conv->src_desc();
      if (!direct) y.src.resize(y.conv->src_desc().get_size() / sizeof(float));
      if (L.add >= 0) y.other.resize(y.dst.size());
      layers_.push_back(std::move(y));
    }
    in_task_ = 1;
    out_task_ = 1;
    const bcbench::ConvGeom& first = spec.peer.front().g;
    const bcbench::ConvGeom& last = spec.peer.back().g;
    in_task_ = first.n * first.cin * first.h * first.w;
    out_task_ = last.n * last.cout * last.oh * last.ow;
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
          src = layers_[L.in - 1].dst.data();
        } else {
          const Layer& p = layers_[L.in - 1];
          bcbench::onednn_reorder(p.conv->dst_desc(), p.dst.data(), y.conv->src_desc(), y.src.data());
          src = y.src.data();
        }
        y.conv->execute(src, y.w[t].data(), y.b.data() + t * (y.b.size() / spec_.tasks), y.dst.data());
        if (L.add >= 0) {
          const float* other;
          if (L.add == 0) {
            bcbench::onednn_reorder(y.conv->plain_dst(), xt, y.conv->dst_desc(), y.other.data());
            other = y.other.data();
          } else if (layers_[L.add - 1].conv->dst_desc() == y.conv->dst_desc()) {
            other = layers_[L.add - 1].dst.data();
          } else {
            const Layer& p = layers_[L.add - 1];
            bcbench::onednn_reorder(p.conv->dst_desc(), p.dst.data(), y.conv->dst_desc(), y.other.data());
            other = y.other.data();
          }
          float* d = y.dst.data();
          const bool relu = L.relu;
          bcbench::parallel_ranges(static_cast<int64_t>(y.dst.size()), threads_, [&](int64_t a, int64_t e) {
            for (int64_t i = a; i < e; ++i) d[i] = relu ? std::max(d[i] + other[i], 0.0f) : d[i] + other[i];
          });
        }
      }
      const Layer& z = layers_.back();
      bcbench::onednn_reorder(z.conv->dst_desc(), z.dst.data(), z.conv->plain_dst(), out + t * out_task_);
    }
  }
  std::string impls() const {
    std::string s;
    for (const Layer& y : layers_) s += (s.empty() ? "" : ", ") + y.conv->impl();
    return s;
  }

 private:
  struct Layer {
    std::unique_ptr<bcbench::OnednnConv> conv;
    std::vector<std::vector<float>> w;  // per task, in the conv's weights layout
    std::vector<float> b, src, dst, other;
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
      dnnl_sgemm('N', 'N', g.rows, g.n, g.k, 1.0f, in, g.k, w_[k].data(), g.n, 0.0f, o, g.n);
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

struct Compiled {
  batchconv::compiler::LoweredModel low;
  std::vector<Halide::Buffer<float>> ins, outs;
  double flops = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  // oneDNN's OpenMP threads spin after each primitive (libgomp's default
  // wait policy), taking the cores from the Halide call timed next; libgomp
  // reads the policy when it loads, so the process restarts itself with it.
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
  }
  int reps = 9;
  bool profile = false;
  std::vector<std::string> only;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    if (a.rfind("--reps=", 0) == 0) {
      reps = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a == "--profile") {
      profile = true;
    } else if (a.rfind("--only=", 0) == 0) {
      std::stringstream ss(a.substr(7));
      for (std::string m; std::getline(ss, m, ',');) only.push_back(m);
    } else {
      std::fprintf(stderr, "usage: model-layouts [--reps=N] [--only=<model>[,...]] [--profile]\n"
                           "  --profile: Halide's profiler in the pipelines (time per stage, printed at exit;\n"
                           "             the timings then include its sampling)\n");
      return 2;
    }
  }
  // Halide's JIT thread pool has one thread per core (HL_NUM_THREADS overrides).
  const char* env = std::getenv("HL_NUM_THREADS");
  const int threads = env ? std::max(1, std::atoi(env)) : static_cast<int>(std::thread::hardware_concurrency());
  const bcbench::MachineLimits lim = bcbench::measure_machine_limits(threads, false);
  std::printf("# model-layouts\n\n%s, %d threads; peak FMA %.0f GFLOP/s (%s), copy %.1f GB/s, measured in this run.\n"
              "Halide %s JIT, target %s. Median ms of %d interleaved calls each (auto and NCHW in\n"
              "alternating order), preallocated buffers;\n"
              "OMP_WAIT_POLICY=%s.\n\n",
              bcbench::cpu_description().c_str(), threads, lim.fma_gflops, lim.fma_isa.c_str(), lim.copy_gbs,
              BCBENCH_HALIDE_VERSION, Halide::get_host_target().to_string().c_str(), reps,
              std::getenv("OMP_WAIT_POLICY"));
  std::vector<ModelSpec> specs = {maml_stack(), conv_stack(), resnext_block(), resnext_grouped(), dw_separable(), depthwise(), seed1(), mlp()};
  std::printf("oneDNN %s, layer by layer in its blocked layouts (reorders at the edges and where layouts differ);\n"
              "PyTorch layer by layer (benchmarks/model_peer.py, NCHW, no_grad, 2 threads), after the others.\n\n",
              bcbench::dnnl_version_string().c_str());
  struct Row {
    std::string name;
    double auto_ms, nchw_ms, onednn_ms, share;
    size_t auto_heap, nchw_heap;
  };
  std::vector<Row> rows;
  std::ostringstream peer_spec;
  std::vector<std::string> plans;
  Halide::Target jit_target = Halide::get_host_target();
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const ModelSpec& spec : specs) {
    if (!only.empty() && std::find(only.begin(), only.end(), spec.name) == only.end()) continue;
    std::unique_ptr<batchconv::ir::Model> model = batchconv::io::parse_model(spec.text, spec.name + ".onnxtxt");
    // Weights become baked initializers (random, scaled to keep activations finite).
    for (batchconv::ir::Value* v : model->graph.inputs) {
      if (v->name == "x") continue;
      auto t = std::make_shared<batchconv::ir::Tensor>();
      t->dtype = batchconv::ir::DType::Float;
      for (const batchconv::ir::Dim& d : *v->type.shape) t->shape.push_back(d.value);
      t->f.resize(static_cast<size_t>(t->numel()));
      // Weights: 1 / sqrt(fan-in) (per task for the batched op's leading dim); biases 0.1.
      int64_t outs = t->shape[0] * (t->shape.size() == 5 ? t->shape[1] : 1);
      const float scale = v->name[0] == 'w' ? 1.0f / std::sqrt(static_cast<float>(t->numel() / outs)) : 0.1f;
      for (float& f : t->f) f = nd(rng) * scale;
      v->constant = t;
    }
    std::vector<Compiled> variants(2);
    const LayoutPolicy policies[2] = {LayoutPolicy::Auto, LayoutPolicy::Nchw};
    for (int k = 0; k < 2; ++k) {
      batchconv::compiler::LowerOptions o;
      o.layouts = policies[k];
      Compiled& c = variants[k];
      c.low = batchconv::compiler::lower_model(*model, spec.name, o);
      for (batchconv::compiler::ParamInfo& p : c.low.inputs) {
        std::vector<int> ext(p.shape.rbegin(), p.shape.rend());
        c.ins.emplace_back(ext);
        c.ins.back().for_each_value([&](float& f) { f = nd(rng); });
        p.param.set(c.ins.back());
      }
      for (const batchconv::compiler::OutputInfo& out : c.low.outputs) {
        std::vector<int> ext(out.internal_extents.begin(), out.internal_extents.end());
        c.outs.emplace_back(ext);
        c.outs.back().fill(0.f);
      }
      c.low.pipeline.jit_handlers().custom_malloc = counting_malloc;
      c.low.pipeline.jit_handlers().custom_free = counting_free;
      Halide::Target target = Halide::get_host_target();
      if (profile) target = target.with_feature(Halide::Target::Profile);
      jit_target = target;
      c.low.pipeline.compile_jit(target);
      for (const auto& [node, q] : c.low.conv_problems)
        c.flops += 2.0 * q.batch * q.n * q.groups * q.cout_g * q.out_h * q.out_w * q.cin_g * q.kernel_h * q.kernel_w;
      for (const GemmLayer& g : spec.gemms) c.flops += 2.0 * g.rows * g.k * g.n;
      if (k == 0) {
        plans.push_back("**" + spec.name + "** (" + spec.what + "):");
        for (const std::string& l : c.low.layout_explanations) plans.push_back("- " + l);
      }
    }
    // Same inputs for both; check they agree.
    for (size_t i = 0; i < variants[0].ins.size(); ++i) variants[1].ins[i].copy_from(variants[0].ins[i]);
    std::unique_ptr<OnednnPeer> conv_peer;
    std::unique_ptr<SgemmPeer> gemm_peer;
    if (spec.gemms.empty()) conv_peer = std::make_unique<OnednnPeer>(spec, *model, threads);
    else gemm_peer = std::make_unique<SgemmPeer>(spec, *model, threads);
    std::vector<float> peer_out(variants[0].outs[0].number_of_elements());
    std::vector<double> t[2], tp;
    size_t peak[2] = {0, 0};
    for (int r = 0; r < reps + 2; ++r) {
      {
        const auto t0 = std::chrono::steady_clock::now();
        if (conv_peer) conv_peer->run(variants[0].ins[0].data(), peer_out.data());
        else gemm_peer->run(variants[0].ins[0].data(), peer_out.data());
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r >= 2) tp.push_back(ms);
      }
      // The two orders alternate: the call right after oneDNN's ran up to
      // 12% slower (same pipeline twice on seed 1).
      for (int j = 0; j < 2; ++j) {
        const int k = (r + j) % 2;
        Compiled& c = variants[k];
        std::vector<Halide::Buffer<>> outs(c.outs.begin(), c.outs.end());
        const size_t live0 = g_live;
        g_peak = g_live;
        const auto t0 = std::chrono::steady_clock::now();
        c.low.pipeline.realize(Halide::Realization(outs), jit_target);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        peak[k] = std::max(peak[k], g_peak - live0);
        if (r >= 2) t[k].push_back(ms);  // two warmups
      }
    }
    double maxdiff = 0, maxabs = 0;
    for (size_t i = 0; i < variants[0].outs.size(); ++i) {
      const Halide::Buffer<float>& a = variants[0].outs[i];
      const Halide::Buffer<float>& b = variants[1].outs[i];
      for (size_t e = 0; e < a.number_of_elements(); ++e) {
        maxdiff = std::max(maxdiff, static_cast<double>(std::fabs(a.data()[e] - b.data()[e])));
        maxabs = std::max(maxabs, static_cast<double>(std::fabs(b.data()[e])));
      }
    }
    double peer_diff = 0;
    for (size_t e = 0; e < peer_out.size(); ++e)
      peer_diff = std::max(peer_diff, static_cast<double>(std::fabs(peer_out[e] - variants[0].outs[0].data()[e])));
    if (maxdiff > 1e-4 * std::max(1.0, maxabs) || peer_diff > 1e-3 * std::max(1.0, maxabs)) {
      std::fprintf(stderr, "model-layouts: %s: results disagree (auto vs nchw %g, vs oneDNN %g, max |y| %g)\n",
                   spec.name.c_str(), maxdiff, peer_diff, maxabs);
      return 1;
    }
    const double ma = median(t[0]), mn = median(t[1]), mp = median(tp);
    rows.push_back({spec.name, ma, mn, mp, 100.0 * variants[0].flops / (ma * 1e6) / lim.fma_gflops, peak[0], peak[1]});
    std::fprintf(stderr, "model-layouts: %s: auto %.2f ms, nchw %.2f ms, oneDNN %.2f ms\n", spec.name.c_str(), ma, mn, mp);
    plans.push_back("  oneDNN: " + (conv_peer ? conv_peer->impls() : gemm_peer->impls()));
    if (spec.peer.empty()) continue;  // (model_peer.py runs convs only)
    peer_spec << spec.name << '|' << spec.tasks << '|' << reps << '|';
    for (size_t k = 0; k < spec.peer.size(); ++k) {
      const bcbench::ConvGeom& g = spec.peer[k].g;
      peer_spec << (k ? ";" : "") << g.n << ',' << g.cin << ',' << g.h << ',' << g.w << ',' << g.cout << ',' << g.kh
                << ',' << g.kw << ',' << g.groups << ',' << g.sh << ',' << g.sw << ',' << g.pt << ',' << g.pl << ','
                << g.pb << ',' << g.pr << ',' << (g.one_d ? 1 : 0) << ',' << spec.peer[k].in << ','
                << spec.peer[k].add << ',' << (spec.peer[k].relu ? 1 : 0);
    }
    peer_spec << '\n';
    std::fflush(stdout);
  }
  // PyTorch, in its own process once ours are done.
  std::map<std::string, double> torch_ms;
  std::string torch_note;
  {
    char path[] = "/tmp/bc_model_peerXXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0) {
      const std::string text = peer_spec.str();
      if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) torch_note = "cannot write the spec";
      close(fd);
      const std::string cmd = std::string("/usr/bin/python3 ") + BCBENCH_MODEL_PEER + " " + path + " 2>&1";
      if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        while (std::fgets(buf, sizeof buf, p)) {
          std::string line(buf);
          if (line.rfind("RESULT|", 0) == 0) {
            std::stringstream ls(line.substr(7));
            std::string model, med;
            std::getline(ls, model, '|');
            std::getline(ls, med, '|');
            torch_ms[model] = std::atof(med.c_str());
          } else if (line.rfind("SKIP|", 0) == 0) {
            torch_note = line.substr(5);
          }
        }
        pclose(p);
      }
      std::remove(path);
    }
  }
  std::printf("| model | layouts auto (ms) | peak heap (MiB) | NCHW only (ms) | peak heap (MiB) | auto vs NCHW | "
              "oneDNN (ms) | auto vs oneDNN | PyTorch (ms) | auto vs PyTorch | auto, share of FMA peak |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %.2f | %.1f | %.2f | %.1f | %.2fx | %.2f | %.2fx |", r.name.c_str(), r.auto_ms,
                r.auto_heap / 1048576.0, r.nchw_ms, r.nchw_heap / 1048576.0, r.nchw_ms / r.auto_ms, r.onednn_ms,
                r.onednn_ms / r.auto_ms);
    if (torch_ms.count(r.name)) std::printf(" %.2f | %.2fx |", torch_ms[r.name], torch_ms[r.name] / r.auto_ms);
    else std::printf(" - | - |");
    std::printf(" %.0f%% |\n", r.share);
  }
  if (!torch_note.empty()) std::printf("\nPyTorch: %s\n", torch_note.c_str());
  std::printf("\nThe plan (auto):\n\n");
  for (const std::string& l : plans) std::printf("%s\n", l.c_str());
  return 0;
}

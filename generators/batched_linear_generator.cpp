// batched_linear: y(b) = act(x(b) @ w(b) + bias(b)) for every slice b:
// x (B, N, K) or one shared x (N, K), w (B, K, M), bias (B, M) -> y (B, N, M).
// A shared x is passed with stride 0 along b (no copy): the kernel reads it
// in place for every slice.
#include <algorithm>

#include "Halide.h"
#include "linear_chooser.h"
#include "linear_schedule_cpu.h"
#include "schedule_space.h"
#include "target_facts.h"

namespace batchconv_gen {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Stage;
using Halide::TailStrategy;
using Halide::Var;

class BatchedLinear : public Halide::Generator<BatchedLinear> {
 public:
  // (k, n, b): x of shape (B, N, K); stride 0 along b for a shared x (N, K)
  Input<Buffer<float>> x{"x", 3};
  // (m, k, b): w of shape (B, K, M)
  Input<Buffer<float>> w{"w", 3};
  // (m, b): bias of shape (B, M); the runtime passes stride 0 over a zero for none
  Input<Buffer<float>> bias{"bias", 2};
  Input<bool> relu{"relu"};
  // (m, n, b): y of shape (B, N, M)
  Output<Buffer<float>> y{"y", 3};
  // CPU: which operands each task copies into panels (linear_schedule_cpu.h).
  // The runtime holds a library of each and picks per call (linear_chooser.h).
  GeneratorParam<LinearPanels> panels{"panels", LinearPanels::None,
                                      {{"none", LinearPanels::None},
                                       {"weights", LinearPanels::Weights},
                                       {"all", LinearPanels::All}}};

  void generate() {
    bias.dim(0).set_stride(Expr());  // a missing bias is a stride-0 zero
    Expr k_extent = x.dim(0).extent();
    Expr n_last = x.dim(1).extent() - 1;
    RDom r(0, k_extent, "r");
    r_ = r;
    // The row index of x is clamped so that row tiles may round up past N.
    // On GPU targets the column index is clamped too: a thread's
    // accumulators are computed before the edge guard of its tile.
    Expr m = get_target().has_gpu_feature() ? clamp(m_, 0, w.dim(0).extent() - 1) : Expr(m_);
    Var k("k");
    rows_(k, n_, b_) = x(k, clamp(n_, 0, n_last), b_);
    acc_(m_, n_, b_) = bias(m, b_);
    acc_(m_, n_, b_) += rows_(r, n_, b_) * w(m, r, b_);
    Expr a = acc_(m_, n_, b_);
    y(m_, n_, b_) = select(relu, max(a, 0.0f), a);
  }

  void schedule() {
    if (auto_schedule) {
      schedule_auto();
    } else if (get_target().has_gpu_feature()) {
      schedule_gpu();
    } else {
      schedule_cpu();
    }
  }

 private:
  // Estimates only: seed 3's linear layer, B = 100, N = 10, K = 50, M = 75.
  void schedule_auto() {
    x.set_estimates({{0, 50}, {0, 10}, {0, 100}});
    w.set_estimates({{0, 75}, {0, 50}, {0, 100}});
    bias.set_estimates({{0, 75}, {0, 100}});
    y.set_estimates({{0, 75}, {0, 10}, {0, 100}});
    relu.set_estimate(false);
  }

  // CUDA and OpenCL: the gpu family's defaults (schedule_space.h). A block
  // of gpu_threads_x threads along M (consecutive floats of w and y for a
  // warp) x gpu_threads_y along N; each thread gpu_pixels_y rows of N x
  // gpu_pixels_x adjacent columns of M in registers, the K loop inside
  // (x is the same for a warp: one broadcast load per step). Not measured
  // yet (no GPU lent); tested through OpenCL on PoCL.
  void schedule_gpu() {
    const ConvSchedule s = default_conv_schedule(target_facts(get_target()), ConvFamily::Gpu);
    const int tx = s.gpu_threads_x, ty = s.gpu_threads_y, px = s.gpu_pixels_x, py = s.gpu_pixels_y;
    Var mb("mb"), mi("mi"), mt("mt"), mp("mp"), nb("nb"), ni("ni"), nt("nt"), np("np");
    y.split(m_, mb, mi, tx * px, TailStrategy::GuardWithIf)
        .split(mi, mt, mp, px)
        .split(n_, nb, ni, ty * py, TailStrategy::GuardWithIf)
        .split(ni, nt, np, py)
        .reorder(mp, np, mt, nt, mb, nb, b_)
        .unroll(mp)
        .unroll(np)
        .gpu_threads(mt, nt)
        .gpu_blocks(mb, nb, b_);
    // Per thread: px adjacent columns x py adjacent rows of accumulators.
    acc_.compute_at(y, mt).bound_extent(m_, px).bound_extent(n_, py).store_in(Halide::MemoryType::Register);
    acc_.unroll(m_).unroll(n_);
    acc_.update().reorder(m_, n_, r_).unroll(m_).unroll(n_);
  }

  // The shared register-tiled schedule (linear_schedule_cpu.h), the slices
  // fused with the tasks into the parallel loop (with panels: each task
  // copies its rows of x and each column tile of w).
  void schedule_cpu() {
    LinearOperands operands;
    if (panels != LinearPanels::None) operands.weights = w;
    if (panels == LinearPanels::All) operands.rows = rows_;
    schedule_linear_cpu(y, acc_, m_, n_, {b_}, r_.x, y.dim(0).extent(), y.dim(1).extent(),
                        target_facts(get_target()), operands);
  }

  Var m_{"m"}, n_{"n"}, b_{"b"};
  Func acc_{"acc"}, rows_{"rows"};
  RDom r_;
};

}  // namespace batchconv_gen

HALIDE_REGISTER_GENERATOR(batchconv_gen::BatchedLinear, batched_linear)

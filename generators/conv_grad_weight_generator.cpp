// conv_grad_weight: the gradient of a (grouped, batched-weight or
// broadcast-input) convolution with respect to its weights, a per-slice
// correlation of the input with the output gradient:
//   dw(kx, ky, ci, co, g, b) = sum_{n, oy, ox} dy(ox, oy, co, g, n, b) *
//                              x_pad(ox*sx + kx*dx - px, oy*sy + ky*dy - py, ci, g, n, b)
// A broadcast (shared) x is passed with stride 0 along b.
//
// The sum over ox is written as vector lanes u times vector steps (ox =
// step*vec + u; dy reads zero past W'), so the schedule can keep one vector
// of partial sums per weight (rfactor over u) without a tail, and fold the
// lanes once at the end.
#include "Halide.h"

namespace batchconv_gen {

class ConvGradWeight : public Halide::Generator<ConvGradWeight> {
 public:
  // Output channels per register tile (0: from the target's register count).
  GeneratorParam<int> tile_channels{"tile_channels", 0};

  // (w, h, ci, g, n, b): x of shape (B, N, G*Cin_g, H, W); stride 0 along b when shared
  Input<Buffer<float>> x{"x", 6};
  // (w', h', co, g, n, b): dy of shape (B, N, G*Cout_g, H', W')
  Input<Buffer<float>> dy{"dy", 6};
  Input<int32_t> stride_x{"stride_x"};
  Input<int32_t> stride_y{"stride_y"};
  Input<int32_t> dilation_x{"dilation_x"};
  Input<int32_t> dilation_y{"dilation_y"};
  Input<int32_t> pad_x{"pad_x"};  // padding before the first column
  Input<int32_t> pad_y{"pad_y"};  // padding before the first row
  // (kw, kh, ci, co, g, b): dw of shape (B, G*Cout_g, Cin_g, KH, KW)
  Output<Buffer<float>> dw{"dw", 6};

  void generate() {
    using namespace Halide;
    vec_ = std::max(1, get_target().natural_vector_size<float>());
    Expr in_w = x.dim(0).extent(), in_h = x.dim(1).extent();
    Expr out_w = dy.dim(0).extent(), out_h = dy.dim(1).extent();
    Func xb = BoundaryConditions::constant_exterior(x, 0.0f, {{0, in_w}, {0, in_h}});
    Func dyb = BoundaryConditions::constant_exterior(dy, 0.0f, {{0, out_w}, {0, out_h}});
    Expr steps = (out_w + vec_ - 1) / vec_;
    r_ = RDom(0, vec_, 0, steps, 0, out_h, 0, dy.dim(4).extent(), "r");
    Expr ox = r_[1] * vec_ + r_[0], oy = r_[2], nn = r_[3];
    Expr ix = ox * stride_x + kx * dilation_x - pad_x;
    Expr iy = oy * stride_y + ky * dilation_y - pad_y;
    acc_(kx, ky, ci, co, g, b) = 0.0f;
    acc_(kx, ky, ci, co, g, b) += dyb(ox, oy, co, g, nn, b) * xb(ix, iy, ci, g, nn, b);
    dw(kx, ky, ci, co, g, b) = acc_(kx, ky, ci, co, g, b);
  }

  void schedule() {
    if (auto_schedule) {
      schedule_auto();
    } else {
      schedule_cpu();
    }
  }

 private:
  // Estimates only: the MAML layer, B = 32, N = 80, 64 -> 64, 42x42, 3x3, pad 1.
  void schedule_auto() {
    x.set_estimates({{0, 42}, {0, 42}, {0, 64}, {0, 1}, {0, 80}, {0, 32}});
    dy.set_estimates({{0, 42}, {0, 42}, {0, 64}, {0, 1}, {0, 80}, {0, 32}});
    dw.set_estimates({{0, 3}, {0, 3}, {0, 64}, {0, 64}, {0, 1}, {0, 32}});
    stride_x.set_estimate(1);
    stride_y.set_estimate(1);
    dilation_x.set_estimate(1);
    dilation_y.set_estimate(1);
    pad_x.set_estimate(1);
    pad_y.set_estimate(1);
  }

  // A task is one tile of tc output channels of one (g, b) slice; it keeps
  // a vector of partial sums per weight of the tile (vec x KW x KH x Cin_g x
  // tc floats, 256 KB for MAML's layer on AVX-512: L2) and sweeps the
  // reduction n outermost, then (ci, ky), then the (oy, ox) plane, so the
  // tc dy planes of one n stay in L2 across every ci and ky. Inside the
  // plane the register tile is tc channels x (3 taps along kx when KW = 3)
  // vectors of accumulators, fed by tc dy loads and one x load per tap:
  // tc*kxu + tc + 1 <= registers (AVX-512 tc = 7, kxu = 3: 29 of 32; AVX2
  // tc = 3: 13 of 16). Unit stride is specialised (dense x loads).
  void schedule_cpu() {
    using namespace Halide;
    const Target t = get_target();
    const bool avx512 = t.has_feature(Target::AVX512) || t.has_feature(Target::AVX512_Skylake) ||
                        t.has_feature(Target::AVX512_Cannonlake) ||
                        t.has_feature(Target::AVX512_SapphireRapids);
    const int regs = (t.arch == Target::X86 && !avx512) ? 16 : 32;
    Var u("u");
    part_ = acc_.update().rfactor(r_[0], u);

    Expr cout_g = dw.dim(3).extent(), kernel_w = dw.dim(0).extent();
    struct Path {
      Expr cond;
      int kxu;  // taps along kx unrolled (0: a loop)
      int tc;
    };
    auto tc_for = [&](int kxu) {
      int tc = tile_channels > 0 ? int(tile_channels) : (regs - 1) / (std::max(1, kxu) + 1);
      return std::max(1, tc);
    };
    const int tc3 = tc_for(3), tc1 = tc_for(1);
    std::vector<Path> paths{
        {kernel_w == 3 && cout_g >= tc3, 3, tc3},
        {kernel_w == 1 && cout_g >= tc1, 1, tc1},
        {cout_g >= tc1, 0, tc1},
    };
    Expr unit = stride_x == 1;
    for (const Path& p : paths) {
      schedule_path(dw.specialize(p.cond && unit), part_.update().specialize(p.cond && unit), p.kxu, p.tc);
      schedule_path(dw.specialize(p.cond), part_.update().specialize(p.cond), p.kxu, p.tc);
    }
    schedule_path(Func(dw), part_.update(), 0, 1);
    part_.compute_at(dw, Var("t")).vectorize(u);
    acc_.compute_at(dw, Var("t"));
  }

  void schedule_path(Halide::Stage out, Halide::Stage update, int kxu, int tc) {
    using namespace Halide;
    Var ct("ct"), cv("cv"), t_("t"), u("u"), xa("xa"), ca("ca");
    out.split(co, ct, cv, tc, TailStrategy::ShiftInwards)
        .reorder(kx, ky, ci, cv, ct, g, b)
        .fuse(ct, g, t_)
        .fuse(t_, b, t_)
        .parallel(t_);
    update.split(co, ca, co, tc);
    if (kxu > 0) {
      update.split(kx, xa, kx, kxu).reorder(u, kx, co, r_[1], r_[2], xa, ky, ci, r_[3], ca);
      update.unroll(kx);
    } else {
      update.reorder(u, co, r_[1], r_[2], kx, ky, ci, r_[3], ca);
    }
    update.vectorize(u).unroll(co);
  }

  Halide::Var kx{"kx"}, ky{"ky"}, ci{"ci"}, co{"co"}, g{"g"}, b{"b"};
  Halide::Func acc_{"acc"}, part_;
  Halide::RDom r_;
  int vec_ = 1;
};

}  // namespace batchconv_gen

HALIDE_REGISTER_GENERATOR(batchconv_gen::ConvGradWeight, conv_grad_weight)

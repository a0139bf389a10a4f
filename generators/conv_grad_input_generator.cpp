// conv_grad_input: the gradient of a (grouped, batched-weight) convolution
// with respect to its input, the transposed convolution
//   dx(ix, iy, ci, g, n, b) = sum_{kx, ky, co} dy(ox, oy, co, g, n, b) * w(kx, ky, ci, co, g, b)
// over the taps where ix = ox*sx + kx*dx - px and iy = oy*sy + ky*dy - py
// hold for an output position (ox, oy) inside dy. It is written in gather
// form: output (ix, iy) reads dy at ((ix + px - kx*dx) / sx, ...) when that
// divides exactly, so stride 1 (specialised: the division and the test fold
// away) is a plain correlation of the zero-padded dy with the flipped,
// channel-transposed weights.
//
// sum_over_b (the broadcast-input conv, one x shared by B filter banks):
// dx has one b slice and sums the B banks' contributions.
#include "Halide.h"
#include "row_copy.h"

namespace batchconv_gen {

class ConvGradInput : public Halide::Generator<ConvGradInput> {
 public:
  // Register tile: rows of one vector each, and input channels (0: from the
  // target's register count, see schedule_cpu).
  GeneratorParam<int> tile_rows{"tile_rows", 0};
  GeneratorParam<int> tile_channels{"tile_channels", 0};
  // Columns (in vectors) whose padded dy one task copies at a time.
  GeneratorParam<int> chunk_vectors{"chunk_vectors", 32};
  GeneratorParam<bool> sum_over_b{"sum_over_b", false};

  // (w', h', co, g, n, b): dy of shape (B, N, G*Cout_g, H', W')
  Input<Buffer<float>> dy{"dy", 6};
  // (kw, kh, ci, co, g, b): w of shape (B, G*Cout_g, Cin_g, KH, KW)
  Input<Buffer<float>> w{"w", 6};
  Input<int32_t> stride_x{"stride_x"};
  Input<int32_t> stride_y{"stride_y"};
  Input<int32_t> dilation_x{"dilation_x"};
  Input<int32_t> dilation_y{"dilation_y"};
  Input<int32_t> pad_x{"pad_x"};  // the forward conv's padding before the first column
  Input<int32_t> pad_y{"pad_y"};  // and before the first row
  // (w, h, ci, g, n, b): dx of shape (B, N, G*Cin_g, H, W); (1, N, ...) with sum_over_b
  Output<Buffer<float>> dx{"dx", 6};

  void generate() {
    using namespace Halide;
    vec_ = std::max(1, get_target().natural_vector_size<float>());
    Expr out_w = dy.dim(0).extent(), out_h = dy.dim(1).extent();
    Expr kernel_w = w.dim(0).extent(), kernel_h = w.dim(1).extent();
    cin_g_ = w.dim(2).extent();
    Expr cout_g = w.dim(3).extent();
    // dy zero-padded, staged per plane: zeros, then its rows copied densely.
    dy_padded_(x, y, c, g, n, b) = 0.0f;
    Func dy_in = dy;
    dy_copy_ = define_row_copy(
        dy_padded_, dy_in, out_w, out_h, vec_,
        [&](Expr col, Expr row) { return std::vector<Expr>{col, row, c, g, n, b}; },
        [&](Expr col, Expr row) { return std::vector<Expr>{col, row, c, g, n, b}; }, "dy_copy");
    if (sum_over_b) {
      r_ = RDom(0, kernel_w, 0, kernel_h, 0, cout_g, 0, w.dim(5).extent(), "r");
    } else {
      r_ = RDom(0, kernel_w, 0, kernel_h, 0, cout_g, "r");
    }
    Expr bb = sum_over_b ? Expr(r_[3]) : Expr(b);
    Expr jx = x + pad_x - r_.x * dilation_x;
    Expr jy = y + pad_y - r_.y * dilation_y;
    Expr on_grid = (jx % stride_x == 0) && (jy % stride_y == 0);
    // The weights repacked per plane with the input channel innermost, so a
    // tile's channel broadcasts read one cache line (the shared form, which
    // sums over every bank, reads w in place).
    Expr wv;
    if (sum_over_b) {
      wv = w(r_.x, r_.y, c, r_.z, g, bb);
    } else {
      w_packed_(c, x, y, n, g, b) = w(x, y, c, n, g, b);  // (ci, kx, ky, co, g, b)
      wv = w_packed_(c, r_.x, r_.y, r_.z, g, bb);
    }
    Expr term = dy_padded_(jx / stride_x, jy / stride_y, r_.z, g, n, bb) * wv;
    grad_(x, y, c, g, n, b) = 0.0f;
    grad_(x, y, c, g, n, b) += select(on_grid, term, 0.0f);
    dx(x, y, c, g, n, b) = grad_(x, y, c, g, n, b);
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
    dy.set_estimates({{0, 42}, {0, 42}, {0, 64}, {0, 1}, {0, 80}, {0, 32}});
    w.set_estimates({{0, 3}, {0, 3}, {0, 64}, {0, 64}, {0, 1}, {0, 32}});
    dx.set_estimates({{0, 42}, {0, 42}, {0, 64}, {0, 1}, {0, 80}, {0, sum_over_b ? 1 : 32}});
    stride_x.set_estimate(1);
    stride_y.set_estimate(1);
    dilation_x.set_estimate(1);
    dilation_y.set_estimate(1);
    pad_x.set_estimate(1);
    pad_y.set_estimate(1);
  }

  // The forward conv's register-tiled CPU schedule, mirrored: vectorised
  // along the input row, a tile of ty rows x tc input channels of
  // accumulators (ty*tc + ty + 1 <= registers: AVX-512 ty = 4, tc = 6 uses
  // 29 of 32; AVX2 ty = 2, tc = 6 uses 15 of 16), the reduction over
  // (co, ky, kx) inside the tile. Images (and, inside each, row tiles) run
  // in parallel; an image's zero-padded dy is staged once (dense row
  // copies), and a slice's weights are repacked once with the input channel
  // innermost, so the inner loop has no boundary selects. MAML's 3x3
  // 64 -> 64 layer at 42x42: 180 GFLOP/s, the forward kernel 225 (README).

  // Paths, by specialize(): full tiles (KW = 3 with the taps along x
  // unrolled, then any KW); tiles of exactly 3 or 4 channels; 1-D rows (ty
  // vectors along x, one row); one vector; scalar (rows narrower than a
  // vector). Stride 1 is specialised inside each path so the exact-division
  // test folds away.
  void schedule_cpu() {
    using namespace Halide;
    const Target t = get_target();
    const int vec = t.natural_vector_size<float>();
    const bool avx512 = t.has_feature(Target::AVX512) || t.has_feature(Target::AVX512_Skylake) ||
                        t.has_feature(Target::AVX512_Cannonlake) ||
                        t.has_feature(Target::AVX512_SapphireRapids);
    const int regs = (t.arch == Target::X86 && !avx512) ? 16 : 32;
    const int ty = tile_rows > 0 ? int(tile_rows) : (regs >= 32 ? 4 : 2);
    const int tc = tile_channels > 0 ? int(tile_channels) : std::max(1, (regs - 1 - ty) / ty);
    Expr width = dx.dim(0).extent(), height = dx.dim(1).extent();
    Expr unit_stride = stride_x == 1 && stride_y == 1;

    struct Path {
      Expr cond;
      int tx, ty, tc;  // vectors along x, rows, channels
      bool vectorized;
      bool unroll_kx = false;  // KW = 3: the taps along x unrolled
      int lanes = 0;           // vector width (0: the target's)
    };
    Expr full = width >= vec && height >= ty && cin_g_ >= tc;
    std::vector<Path> paths{{full && w.dim(0).extent() == 3, 1, ty, tc, true, true},
                            {full, 1, ty, tc, true}};
    // Rows narrower than a vector (the small late layers of a MAML network,
    // 14x14 and 7x7): the same tile with half- and quarter-width vectors.
    // The width ranges exclude each other, so each path knows its tile.
    for (int lanes = vec / 2; lanes >= 4; lanes /= 2) {
      paths.push_back({width >= lanes && width < 2 * lanes && height >= ty && cin_g_ >= tc, 1, ty,
                       tc, true, false, lanes});
    }
    // Few input channels (RGB inputs, ResNeXt's groups of 4): a tile of
    // exactly Cin_g channels and as many rows as the registers hold, up to 8
    // (FMA latency x ports). Equality conditions let Halide tell inside each
    // path which tile the accumulators have (constant extents: registers).
    // Each such path multiplies the generator's compile time (1 to 5 channels
    // took 4 minutes a target), so only these two.
    for (int tcs : {3, 4}) {
      if (tcs >= tc) continue;
      const int tys = std::min(8, (regs - 1) / (tcs + 1));
      paths.push_back({width >= vec && height >= tys && cin_g_ == tcs, 1, tys, tcs, true});
    }
    paths.push_back({width >= vec * ty && cin_g_ >= tc, ty, 1, tc, true});
    paths.push_back({width >= vec, 1, 1, 1, true});
    for (const Path& p : paths) {
      const int lanes = p.lanes > 0 ? p.lanes : vec;
      schedule_path(dx.specialize(p.cond && unit_stride), grad_.specialize(p.cond && unit_stride),
                    grad_.update().specialize(p.cond && unit_stride), p, lanes);
      schedule_path(dx.specialize(p.cond), grad_.specialize(p.cond),
                    grad_.update().specialize(p.cond), p, lanes);
    }
    // Rows narrower than one vector: scalar tiles.
    schedule_path(Func(dx), grad_, grad_.update(), Path{Expr(), 1, 1, 1, false}, 1);
    // One location for every path (each names its loops the same).
    grad_.compute_at(dx, Var("xo"));
    dy_padded_.compute_at(dx, n).vectorize(x, vec, TailStrategy::GuardWithIf);
    schedule_row_copy(dy_padded_, dy_copy_, vec_);
    if (!sum_over_b) w_packed_.compute_at(dx, g);
  }

  template <typename P>
  void schedule_path(Halide::Stage out, Halide::Stage init, Halide::Stage update, const P& p,
                     int vec) {
    using namespace Halide;
    const TailStrategy shift = TailStrategy::ShiftInwards;
    Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), co("co"), ci("ci"), xc("xc");
    out.split(x, xo, xi, vec * p.tx, shift)
        .split(y, yo, yi, p.ty, shift)
        .split(c, co, ci, p.tc, shift)
        .split(xo, xc, xo, chunk_vectors, TailStrategy::GuardWithIf)
        .reorder(xi, yi, ci, xo, co, xc, yo, n, g, b)
        .parallel(n)
        .parallel(yo);
    if (vec > 1) out.vectorize(xi, vec);
    // The accumulator tile at xo: constant extents, unrolled.
    Var xa("xa"), ya("ya"), ca("ca"), xv("xv");
    auto tile = [&](Stage s, bool with_r) {
      s.split(x, xa, x, vec * p.tx).split(y, ya, y, p.ty).split(c, ca, c, p.tc).split(x, x, xv, vec);
      if (with_r) {
        std::vector<VarOrRVar> order{xv, x, y, c};
        for (int i = 0; i < r_.dimensions(); i++) order.push_back(r_[i]);
        order.push_back(xa);
        order.push_back(ya);
        order.push_back(ca);
        s.reorder(order);
      }
      if (vec > 1) s.vectorize(xv);
      s.unroll(x).unroll(y).unroll(c);
      if (with_r && p.unroll_kx) s.unroll(r_.x);
    };
    tile(init, false);
    tile(update, true);
  }

  Halide::Var x{"x"}, y{"y"}, c{"c"}, g{"g"}, n{"n"}, b{"b"};
  Halide::Func dy_padded_{"dy_padded"}, grad_{"grad"}, w_packed_{"w_packed"};
  Halide::RDom r_;
  Halide::Expr cin_g_;
  RowCopy dy_copy_;
  int vec_ = 1;
};

}  // namespace batchconv_gen

HALIDE_REGISTER_GENERATOR(batchconv_gen::ConvGradInput, conv_grad_input)

// conv_grad_weight: the gradient of a (grouped, batched-weight or
// broadcast-input) convolution with respect to its weights, a per-slice
// correlation of the input with the output gradient:
//   dw(kx, ky, ci, co, g, b) = sum_{n, oy, ox} dy(ox, oy, co, g, n, b) *
//                              x_pad(ox*sx + kx*dx - px, oy*sy + ky*dy - py, ci, g, n, b)
// A broadcast (shared) x is passed with stride 0 along b.
//
// The sum over output positions is written as vector lanes u times vector
// steps, so the kernel keeps a register tile of vector partial sums per
// image (rows form) or per chunk of an image's plane (flat form) and adds the
// tile into the task's sums: the rows form folds the lanes there, the flat
// form adds the tile's two halves, keeping half a vector of lanes per weight
// until the task's end (no horizontal sums per chunk). Both
// operands are read through zero-padded copies staged per image, so the
// inner loop is dense vector loads and FMAs with no boundary tests. Two
// forms of the same sum, chosen by specialize() on the strides:
//   flat (unit stride): the image's (oy, ox) plane is one run of length
//     H' * P, P = W' + (KW-1)*dx; dy is staged with rows of pitch P (zero
//     past W') and x with the same pitch, so the tap (kx, ky) is the offset
//     kx*dx + ky*dy*P and a step never stops at a row end;
//   rows (any stride): steps along each output row (ox = step*vec + u).
#include <algorithm>
#include <vector>

#include "Halide.h"
#include "row_copy.h"

namespace batchconv_gen {

class ConvGradWeight : public Halide::Generator<ConvGradWeight> {
 public:
  // Register tile: output channels x input channels x taps along kx (0:
  // chosen from the target's register count and the kernel width).
  GeneratorParam<int> tile_channels{"tile_channels", 0};
  GeneratorParam<int> tile_inputs{"tile_inputs", 0};
  // Output channels per parallel task (with one kernel row ky per task).
  GeneratorParam<int> task_channels{"task_channels", 32};
  // Vector steps per chunk of the flat form's plane (each register tile
  // sweeps a chunk, so the chunk's operands stay in L1 across tiles).
  GeneratorParam<int> chunk_steps{"chunk_steps", 64};
  // A task is a whole (g, b) slice (with 16 slices or more) only while its
  // flat-form sums, half a vector of lanes per weight, take at most this many
  // KiB (they stay in L2 beside the staged image); larger slices are split
  // into task_channels blocks.
  GeneratorParam<int> slice_sums_kb{"slice_sums_kb", 1280};

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
  // dw's KW and KH (the flat form's pitch needs them before dw is defined)
  Input<int32_t> kernel_w{"kernel_w"};
  Input<int32_t> kernel_h{"kernel_h"};
  // (kw, kh, ci, co, g, b): dw of shape (B, G*Cout_g, Cin_g, KH, KW)
  Output<Buffer<float>> dw{"dw", 6};

  void generate() {
    using namespace Halide;
    vec_ = std::max(1, get_target().natural_vector_size<float>());
    Expr in_w = x.dim(0).extent(), in_h = x.dim(1).extent(), cin_g = x.dim(2).extent();
    Expr out_w = dy.dim(0).extent(), out_h = dy.dim(1).extent(), cout_g = dy.dim(2).extent();
    Expr images = dy.dim(4).extent();
    Func xb = BoundaryConditions::constant_exterior(x, 0.0f, {{0, in_w}, {0, in_h}, {0, cin_g}});
    Func dyb =
        BoundaryConditions::constant_exterior(dy, 0.0f, {{0, out_w}, {0, out_h}, {0, cout_g}});
    Var w("w"), h("h"), c("c"), j("j");

    // Rows form.
    rows_.x_staged(w, h, c, g, n, b) = xb(w, h, c, g, n, b);
    rows_.dy_staged(w, h, c, g, n, b) = dyb(w, h, c, g, n, b);
    rows_.r = RDom(0, (out_w + vec_ - 1) / vec_, 0, out_h, "r");
    {
      Expr ox = rows_.r.x * vec_ + u_, oy = rows_.r.y;
      Expr ix = ox * stride_x + kx * dilation_x - pad_x;
      Expr iy = oy * stride_y + ky * dilation_y - pad_y;
      rows_.image(u_, kx, ky, ci, co, g, n, b) = 0.0f;
      rows_.image(u_, kx, ky, ci, co, g, n, b) +=
          rows_.dy_staged(ox, oy, co, g, n, b) * rows_.x_staged(ix, iy, ci, g, n, b);
    }

    // Flat form (unit stride): pitch P, x staged from row -pad_y, column -pad_x.
    Expr pitch = out_w + (kernel_w - 1) * dilation_x;
    Expr x_rows = out_h + (kernel_h - 1) * dilation_y;
    // The zeros of the padding come from the pure definition; the update
    // copies the image's columns inside the pitch (dense rows, no tests).
    // Zero past the channel count only (tiles round channels up).
    Func xc = BoundaryConditions::constant_exterior(x, 0.0f, {Range(), Range(), Range(0, cin_g)});
    Func dyc =
        BoundaryConditions::constant_exterior(dy, 0.0f, {Range(), Range(), Range(0, cout_g)});
    flat_.x_staged(j, c, g, n, b) = 0.0f;
    x_copy_ = define_row_copy(
        flat_.x_staged, xc, min(in_w, pitch - pad_x), min(in_h, x_rows - pad_y), vec_,
        [&](Expr col, Expr row) {
          return std::vector<Expr>{col + pad_x + (row + pad_y) * pitch, c, g, n, b};
        },
        [&](Expr col, Expr row) { return std::vector<Expr>{col, row, c, g, n, b}; }, "x_copy");
    flat_.dy_staged(j, c, g, n, b) = 0.0f;
    dy_copy_ = define_row_copy(
        flat_.dy_staged, dyc, out_w, out_h, vec_,
        [&](Expr col, Expr row) { return std::vector<Expr>{col + row * pitch, c, g, n, b}; },
        [&](Expr col, Expr row) { return std::vector<Expr>{col, row, c, g, n, b}; }, "dy_copy");
    Expr steps = (out_h * pitch + vec_ - 1) / vec_;
    Expr chunks = (steps + int(chunk_steps) - 1) / int(chunk_steps);
    Expr chunk = (steps + chunks - 1) / chunks;
    flat_.r = RDom(0, chunk, "r");
    {
      Expr f = (q_ * chunk + flat_.r.x) * vec_ + u_;
      flat_.image(u_, kx, ky, ci, co, g, q_, n, b) = 0.0f;
      flat_.image(u_, kx, ky, ci, co, g, q_, n, b) +=
          flat_.dy_staged(f, co, g, n, b) *
          flat_.x_staged(f + kx * dilation_x + ky * dilation_y * pitch, ci, g, n, b);
    }

    // Rows form: the lanes are folded as each tile of each image is added in
    // (rp.x, a vectorised horizontal sum), so a task's sums are one float per
    // weight.
    rows_.rp = RDom(0, vec_, 0, images, "rp");
    rows_.part(kx, ky, ci, co, g, b) = 0.0f;
    rows_.part(kx, ky, ci, co, g, b) += rows_.image(rows_.rp.x, kx, ky, ci, co, g, rows_.rp.y, b);
    // The flat form keeps half a vector of lanes per weight in the task's
    // sums (adding the image tile's two halves), so a chunk's tile is added
    // in with vector adds; the lanes are folded once per task. Its rp.x is
    // a unit dimension, so rp.y (chunks) and rp.z (images) keep the places
    // the schedule gives them.
    half_ = std::max(vec_ / 2, 1);
    flat_.rp = RDom(0, 1, 0, chunks, 0, images, "rp");
    Expr lanes = flat_.image(u_, kx, ky, ci, co, g, flat_.rp.y, flat_.rp.z, b);
    if (vec_ > 1) lanes += flat_.image(u_ + half_, kx, ky, ci, co, g, flat_.rp.y, flat_.rp.z, b);
    flat_.part(u_, kx, ky, ci, co, g, b) = 0.0f;
    flat_.part(u_, kx, ky, ci, co, g, b) += lanes;
    RDom fold(0, half_, "fold");
    Expr flat_sum = sum(flat_.part(fold, kx, ky, ci, co, g, b));
    dw(kx, ky, ci, co, g, b) = select(flat_cond(), flat_sum,
                                      rows_.part(kx, ky, ci, co, g, b));
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
    kernel_w.set_estimate(3);
    kernel_h.set_estimate(3);
  }

  // One form of the sum: its staged operands, the per-image register tile
  // sums and the task's sums.
  struct Form {
    Halide::Func x_staged, dy_staged, image, part;
    Halide::RDom r, rp;
  };

  struct Tile {
    int tco, tci, kxu;  // output channels, input channels, taps along kx (0: a loop)
  };

  // The largest register tile of tco x tci x kxu vector accumulators (tci
  // one of the allowed input-channel counts) that leaves room for the tco dy
  // vectors loaded per step and one x vector, with two registers spare on
  // 32-register targets: tco*tci*max(kxu,1) + tco + 1 <= budget; among equal
  // accumulator counts, the fewest loads per step (tco + tci*kxu).
  // AVX-512, KW = 3: 4 x 2 x 3 (29 registers); AVX2: 2 x 2 x 3 (15 of 16).
  static Tile best_tile(int regs, int kxu, const std::vector<int>& tcis) {
    const int budget = regs >= 32 ? regs - 2 : regs;
    const int k = std::max(kxu, 1);
    Tile best{1, tcis.front(), kxu};
    int best_acc = 0, best_loads = 0;
    for (int tco = 1; tco <= 8; tco++) {
      for (int tci : tcis) {
        const int acc = tco * tci * k, loads = tco + tci * k;
        if (acc + tco + 1 > budget) continue;
        if (acc > best_acc || (acc == best_acc && loads < best_loads)) {
          best = {tco, tci, kxu};
          best_acc = acc;
          best_loads = loads;
        }
      }
    }
    return best;
  }

  // Tasks. With many (g, b) slices a task is one slice (flat form: while
  // its sums fit slice_sums_kb); otherwise one kernel row ky of
  // task_channels output channels of a slice (rows form) or task_channels
  // output channels of a slice (flat form, whose x copy is a whole image).
  // A task's sums (KW x KH x Cin_g x its channels floats, times half a
  // vector in the flat form) stay in L2. The reduction runs image by image:
  // the image's x and dy are staged, then every register tile of the task
  // sweeps the image (rows form) or each chunk of chunk_steps vector steps
  // of its plane in turn (flat form: the chunk's operands stay in L1 while
  // the tiles sweep it) with its accumulators in registers: tco dy loads and
  // tci*kxu x loads feed tco*tci*kxu FMAs per step. Tiles, by specialize():
  // KW = 3 with kx unrolled (tiles of Cin_g = 3 exactly for RGB inputs),
  // KW = 1, any KW with kx a loop, and one channel at a time (tiny groups);
  // the rows form specialises unit stride along x (dense x loads).
  void schedule_cpu() {
    using namespace Halide;
    const Target t = get_target();
    const bool avx512 = t.has_feature(Target::AVX512) || t.has_feature(Target::AVX512_Skylake) ||
                        t.has_feature(Target::AVX512_Cannonlake) ||
                        t.has_feature(Target::AVX512_SapphireRapids);
    const int regs = (t.arch == Target::X86 && !avx512) ? 16 : 32;
    Expr cin_g = dw.dim(2).extent(), cout_g = dw.dim(3).extent(), kernel_w = dw.dim(0).extent();

    auto with_params = [&](Tile tile) {
      if (tile_channels > 0) tile.tco = tile_channels;
      if (tile_inputs > 0) tile.tci = tile_inputs;
      return tile;
    };
    struct Path {
      Expr cond;
      Tile tile;
    };
    const std::vector<int> any{1, 2, 3, 4, 6, 8};
    const Tile rgb = with_params(best_tile(regs, 3, {3}));
    const Tile k3 = with_params(best_tile(regs, 3, any));
    const Tile k1 = with_params(best_tile(regs, 1, any));
    const Tile loop = with_params(best_tile(regs, 0, any));
    const std::vector<Path> paths{
        {kernel_w == 3 && cin_g == 3 && cout_g >= rgb.tco, rgb},
        {kernel_w == 3 && cin_g >= k3.tci && cout_g >= k3.tco, k3},
        {kernel_w == 1 && cin_g >= k1.tci && cout_g >= k1.tco, k1},
        {cin_g >= loop.tci && cout_g >= loop.tco, loop},
    };
    Expr unit = stride_x == 1;
    for (Form* form : {&rows_, &flat_}) {
      std::vector<Expr> variants{Internal::const_true()};
      if (form == &rows_) variants.insert(variants.begin(), unit);
      for (const Path& p : paths) {
        for (const Expr& v : variants) {
          Expr cond = p.cond && v;
          schedule_part(*form, form->part.update().specialize(cond), p.tile);
          schedule_image(*form, form->image.specialize(cond), form->image.update().specialize(cond));
        }
      }
      schedule_part(*form, form->part.update(), Tile{1, 1, 0});
      schedule_image(*form, form->image, form->image.update());
    }

    Var cot("cot"), coi("coi"), task("task");
    const int tb = std::max(1, int(task_channels));
    Expr slices = dw.dim(4).extent() * dw.dim(5).extent();
    Expr flat = flat_cond();
    auto whole_slices = [&](Stage s) {
      s.reorder(kx, ky, ci, co, g, b).fuse(g, b, task).parallel(task);
    };
    auto channel_blocks = [&](Stage s, bool by_row) {
      s.split(co, cot, coi, tb, TailStrategy::GuardWithIf);
      if (by_row) {
        s.reorder(kx, ci, coi, ky, cot, g, b).fuse(ky, cot, task);
      } else {
        s.reorder(kx, ky, ci, coi, cot, g, b).fuse(cot, g, task);
        s.fuse(task, b, task).parallel(task);
        return;
      }
      s.fuse(task, g, task).fuse(task, b, task).parallel(task);
    };
    Expr sums_bytes = cast<int64_t>(cout_g) * cin_g * kernel_w * dw.dim(1).extent() * half_ * 4;
    whole_slices(dw.specialize(flat && slices >= 16 && sums_bytes <= Expr(int64_t(slice_sums_kb) * 1024)));
    channel_blocks(dw.specialize(flat), false);
    whole_slices(dw.specialize(slices >= 16));
    channel_blocks(dw.specialize(cout_g > tb), true);
    dw.reorder(kx, ci, co, ky, g, b).fuse(ky, g, task).fuse(task, b, task).parallel(task);

    for (Form* form : {&rows_, &flat_}) {
      form->part.compute_at(dw, task);
      form->image.compute_at(form->part, Var("kxo"));
    }
    LoopLevel rows_image(rows_.part, rows_.rp.y), flat_image(flat_.part, flat_.rp.z);
    rows_.x_staged.compute_at(rows_image).vectorize(Var("w"), vec_, TailStrategy::GuardWithIf);
    rows_.dy_staged.compute_at(rows_image).vectorize(Var("w"), vec_, TailStrategy::GuardWithIf);
    for (Func f : {flat_.x_staged, flat_.dy_staged}) {
      f.compute_at(flat_image).vectorize(Var("j"), vec_, TailStrategy::GuardWithIf);
    }
    schedule_row_copy(flat_.x_staged, x_copy_, vec_);
    schedule_row_copy(flat_.dy_staged, dy_copy_, vec_);
  }

  // part's update sweeps the images (rp.y outermost) and, for each, the
  // register tiles of the task; image is computed per tile, so its
  // accumulators are a constant-size block that lives in registers.
  void schedule_part(Form& form, Halide::Stage update, Tile tile) {
    using namespace Halide;
    Var cio("cio"), coo("coo"), kxo("kxo");
    update.split(co, coo, co, tile.tco)
        .split(ci, cio, ci, tile.tci)
        .split(kx, kxo, kx, std::max(tile.kxu, 1));
    if (&form == &flat_) {
      update.reorder(u_, kx, ci, co, kxo, ky, cio, coo, form.rp.y, form.rp.z, g, b)
          .vectorize(u_, half_)
          .unroll(kx)
          .unroll(ci)
          .unroll(co);
      return;
    }
    update.reorder(form.rp.x, kx, ci, co, kxo, cio, coo, ky, form.rp.y, g, b);
    update.atomic()
        .vectorize(form.rp.x)
        .unroll(kx)
        .unroll(ci)
        .unroll(co);
  }

  void schedule_image(Form& form, Halide::Stage init, Halide::Stage update) {
    init.vectorize(u_).unroll(kx).unroll(ci).unroll(co);
    std::vector<Halide::VarOrRVar> order{u_, kx, ci, co};
    for (int i = 0; i < form.r.dimensions(); i++) order.push_back(form.r[i]);
    order.push_back(ky);
    order.push_back(g);
    if (&form == &flat_) order.push_back(q_);
    order.insert(order.end(), {n, b});
    update.reorder(order).vectorize(u_).unroll(kx).unroll(ci).unroll(co);
  }

  Halide::Expr flat_cond() const { return stride_x == 1 && stride_y == 1; }

  Form rows_{Halide::Func("x_rows"), Halide::Func("dy_rows"), Halide::Func("image_rows"),
             Halide::Func("part_rows")};
  Form flat_{Halide::Func("x_flat"), Halide::Func("dy_flat"), Halide::Func("image_flat"),
             Halide::Func("part_flat")};
  RowCopy x_copy_, dy_copy_;
  Halide::Var q_{"q"}, u_{"u"}, kx{"kx"}, ky{"ky"}, ci{"ci"}, co{"co"}, g{"g"}, n{"n"}, b{"b"};
  int vec_ = 1, half_ = 1;
};

}  // namespace batchconv_gen

HALIDE_REGISTER_GENERATOR(batchconv_gen::ConvGradWeight, conv_grad_weight)

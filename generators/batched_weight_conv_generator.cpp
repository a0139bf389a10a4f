// batched_weight_conv: slice b of x meets only filter bank b of w:
// x (B, N, Cin, H, W), w (B, Cout, Cin/groups, KH, KW), bias (B, Cout) ->
// y (B, N, Cout, H', W'). Seed 2's batch split into G groups is the zero-copy
// view x (G, N/G, C, H, W). Same algorithm and schedule as grouped_conv with
// b as one more parallel loop, so B = 1 costs what grouped_conv costs.
#include "conv_estimates.h"
#include "conv_generator_common.h"

namespace batchconv_gen {

class BatchedWeightConv : public Halide::Generator<BatchedWeightConv> {
 public:
  // (w, h, ci, g, n, b): x of shape (B, N, G*Cin_g, H, W)
  Input<Buffer<float>> x{"x", 6};
  // (kw, kh, ci, co, g, b): w of shape (B, G*Cout_g, Cin_g, KH, KW)
  Input<Buffer<float>> w{"w", 6};
  // (co, g, b): bias of shape (B, G*Cout_g); the runtime passes stride 0 over a zero for none
  Input<Buffer<float>> bias{"bias", 3};
  Input<int32_t> stride_x{"stride_x"};
  Input<int32_t> stride_y{"stride_y"};
  Input<int32_t> dilation_x{"dilation_x"};
  Input<int32_t> dilation_y{"dilation_y"};
  Input<int32_t> pad_x{"pad_x"};  // padding before the first column
  Input<int32_t> pad_y{"pad_y"};  // padding before the first row
  Input<bool> relu{"relu"};
  // The schedule point: family (rows | channels) and its fields
  // (schedule_space.h); the channels family takes w with Cout_g innermost.
  ConvScheduleParams schedule_point;
  GeneratorParam<std::string> estimates{"estimates", ""};  // autoscheduler estimates (conv_estimates.h)
  // (w', h', co, g, n, b): y of shape (B, N, G*Cout_g, H', W')
  Output<Buffer<float>> y{"y", 6};

  void generate() {
    bias.dim(0).set_stride(Expr());  // a missing bias is a stride-0 zero
    point_ = schedule_point.point(get_target());
    ConvGeometry geo = conv_geometry(x, w, stride_x, stride_y, dilation_x, dilation_y, pad_x, pad_y);
    f_ = define_conv(x, w, bias, geo, relu, clamps_channels(point_.family), input_block(point_, get_target()));
    y(f_.v.x, f_.v.y, f_.v.c, f_.v.g, f_.v.n, f_.v.b) = f_.output(f_.v.x, f_.v.y, f_.v.c, f_.v.g, f_.v.n, f_.v.b);
    constrain_buffers(point_, x, w, y);
  }

  void schedule() {
    if (auto_schedule) {
      schedule_auto();
    } else {
      schedule_conv_generator(y, y, f_, {f_.v.n, f_.v.b}, x, w, stride_x, point_, get_target());
    }
  }

 private:
  // Estimates for Halide's autoschedulers, by default the MAML layer, B = 32, N = 80, 64 -> 64, 42x42, 3x3, pad 1.
  // The `estimates` param (a tuning shape key) sets them per build.
  void schedule_auto() {
    ConvEstimate defaults;
    defaults.b = 32;
    defaults.n = 80;
    defaults.out_h = defaults.in_h = 42;
    defaults.out_w = defaults.in_w = 42;
    set_conv_estimates(*this, parse_conv_estimate(estimates, defaults));
  }

  ConvFuncs f_;
  ConvSchedule point_;
};

}  // namespace batchconv_gen

HALIDE_REGISTER_GENERATOR(batchconv_gen::BatchedWeightConv, batched_weight_conv)

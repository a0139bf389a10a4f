// Every point of the schedule space computes the same function: random valid
// points of the CPU families (rows, channels, and lanes on the shapes its
// kernels take; generators/schedule_space.h) schedule the conv
// algorithm through the same schedule functions the generators call,
// JIT-compiled for the host, and each is checked on several shapes (dense,
// grouped, depthwise, stride and dilation, asymmetric padding, 1-D, narrow
// outputs) against the double-precision reference. This is what the tuner
// relies on. Invalid points are rejected with a message naming the field.
//
// BATCHCONV_TEST_POINTS=n draws n points per family (default 5; lanes n/4);
// BATCHCONV_TEST_SEED reseeds the draw (the seed is printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "Halide.h"
#include "host_target.h"
#include "conv_generator_common.h"
#include "reference.h"
#include "test_support.h"

namespace batchconv::test {
namespace {

using namespace batchconv_gen;

// The grouped conv pipeline of grouped_conv_generator.cpp over ImageParams.
struct JitConv {
  Halide::ImageParam x{Halide::Float(32), 5, "x"}, w{Halide::Float(32), 5, "w"},
      bias{Halide::Float(32), 2, "bias"};
  Halide::Param<int32_t> sx{"sx"}, sy{"sy"}, dx{"dx"}, dy{"dy"}, px{"px"}, py{"py"};
  Halide::Param<bool> relu{"relu"};
  Halide::Func out{"out"};
  ConvFamily family;

  JitConv(const ConvSchedule& s, const Halide::Target& target) : family(s.family) {
    using namespace Halide;
    bias.dim(0).set_stride(Expr());
    ConvGeometry geo = conv_geometry(x, w, sx, sy, dx, dy, px, py);
    ConvVars v;
    Var kx, ky, ci, co, g, b;
    Func x6, w6, b3;
    x6(v.x, v.y, v.c, v.g, v.n, v.b) = x(v.x, v.y, v.c, v.g, v.n);
    w6(kx, ky, ci, co, g, b) = w(kx, ky, ci, co, g);
    b3(co, g, b) = bias(co, g);
    ConvFuncs f = define_conv(x6, w6, b3, geo, relu, clamps_channels(s.family));
    out(v.x, v.y, v.c, v.g, v.n) = f.output(v.x, v.y, v.c, v.g, v.n, 0);
    Halide::OutputImageParam y = out.output_buffer();
    constrain_buffers(s, x, w, y);
    schedule_conv_generator(out, y, f, {v.n}, x, w, sx, s, target);
    out.compile_jit(target);
  }
};

struct Shape {
  const char* name;
  int64_t N, groups, cin_g, cout_g, H, W, KH, KW;
  int stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, pad_b, pad_r;
};

const Shape kShapes[] = {
    {"dense_3x3", 2, 1, 16, 40, 9, 23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"stride2_dil2", 1, 1, 8, 33, 13, 17, 3, 3, 2, 2, 2, 1, 2, 0, 1, 3},
    {"grouped", 2, 3, 4, 20, 7, 19, 3, 2, 1, 1, 1, 1, 0, 1, 0, 0},
    {"depthwise_x2", 2, 8, 1, 2, 10, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"conv1d", 3, 1, 5, 70, 1, 300, 1, 5, 1, 2, 1, 1, 0, 2, 0, 1},
    {"narrow_out", 1, 1, 3, 7, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"depthwise_32", 2, 32, 1, 1, 9, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"groups_of_4", 1, 9, 4, 4, 7, 10, 3, 3, 2, 1, 1, 2, 0, 1, 1, 2},
    // Rows that 14, 11 and 7 columns divide (ch_fit_rows), the last at stride 2.
    {"rows_of_28", 1, 1, 6, 64, 5, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {"rows_of_22", 2, 1, 5, 36, 6, 24, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0},
    {"rows_of_7_stride2", 1, 1, 4, 32, 5, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
};

// Whether the lanes family's kernels take shape `s` (the runtime's
// condition: a Cout_g they specialize on, a vector's worth of channels).
bool lanes_take(const Shape& s, const TargetFacts& facts) {
  return lanes_kernel_fits(s.cout_g, facts) && s.groups * s.cout_g >= facts.vector_floats;
}

// Runs `conv` on shape `s` with fresh data and checks it against the reference.
void check_shape(JitConv& conv, const Shape& s, const std::string& point) {
  const std::string what = std::string(s.name) + " with " + point;
  auto rng = case_rng(what);
  const int64_t cin = s.groups * s.cin_g, cout = s.groups * s.cout_g;
  ConvDesc d;
  d.groups = static_cast<int>(s.groups);
  d.stride = {s.stride_h, s.stride_w};
  d.dilation = {s.dil_h, s.dil_w};
  d.pad_begin = {s.pad_t, s.pad_l};
  d.pad_end = {s.pad_b, s.pad_r};
  d.activation = Activation::ReLU;
  const int64_t oh = (s.H + s.pad_t + s.pad_b - s.dil_h * (s.KH - 1) - 1) / s.stride_h + 1;
  const int64_t ow = (s.W + s.pad_l + s.pad_r - s.dil_w * (s.KW - 1) - 1) / s.stride_w + 1;
  Tensor x({s.N, cin, s.H, s.W}, Layout::Contiguous), w({cout, s.cin_g, s.KH, s.KW}, Layout::Contiguous),
      bias({cout}, Layout::Contiguous), y({s.N, cout, oh, ow}, Layout::Contiguous);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  x.fill_random(rng, nan);
  w.fill_random(rng, nan);
  bias.fill_random(rng, nan);
  poison_output(y);
  // Halide views in the grouped order, innermost first.
  const int64_t plane = s.H * s.W, oplane = oh * ow;
  halide_dimension_t xd[5] = {{0, int32_t(s.W), 1, 0},
                              {0, int32_t(s.H), int32_t(s.W), 0},
                              {0, int32_t(s.cin_g), int32_t(plane), 0},
                              {0, int32_t(s.groups), int32_t(s.cin_g * plane), 0},
                              {0, int32_t(s.N), int32_t(cin * plane), 0}};
  halide_dimension_t yd[5] = {{0, int32_t(ow), 1, 0},
                              {0, int32_t(oh), int32_t(ow), 0},
                              {0, int32_t(s.cout_g), int32_t(oplane), 0},
                              {0, int32_t(s.groups), int32_t(s.cout_g * oplane), 0},
                              {0, int32_t(s.N), int32_t(cout * oplane), 0}};
  // Weights: PyTorch order, or packed with the output channel innermost.
  std::vector<float> packed;
  const int64_t k = s.KH * s.KW;
  halide_dimension_t wd[5] = {{0, int32_t(s.KW), 1, 0},
                              {0, int32_t(s.KH), int32_t(s.KW), 0},
                              {0, int32_t(s.cin_g), int32_t(k), 0},
                              {0, int32_t(s.cout_g), int32_t(s.cin_g * k), 0},
                              {0, int32_t(s.groups), int32_t(s.cout_g * s.cin_g * k), 0}};
  float* wdata = w.view().data;
  if (conv.family != ConvFamily::Rows) {  // memory (KH, KW, Cin_g, Cout)
    packed.resize(static_cast<size_t>(cout * s.cin_g * k));
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t c = 0; c < s.cin_g; ++c)
        for (int64_t ky = 0; ky < s.KH; ++ky)
          for (int64_t kx = 0; kx < s.KW; ++kx)
            packed[static_cast<size_t>(((ky * s.KW + kx) * s.cin_g + c) * cout + o)] =
                wdata[((o * s.cin_g + c) * s.KH + ky) * s.KW + kx];
    wd[0].stride = int32_t(s.cin_g * cout);
    wd[1].stride = int32_t(s.KW * s.cin_g * cout);
    wd[2].stride = int32_t(cout);
    wd[3].stride = 1;
    wd[4].stride = int32_t(s.cout_g);
    wdata = packed.data();
  }
  halide_dimension_t bd[2] = {{0, int32_t(s.cout_g), 1, 0}, {0, int32_t(s.groups), int32_t(s.cout_g), 0}};
  Halide::Buffer<float> hx(x.view().data, 5, xd), hw(wdata, 5, wd), hb(bias.view().data, 2, bd),
      hy(y.view().data, 5, yd);
  conv.x.set(hx);
  conv.w.set(hw);
  conv.bias.set(hb);
  conv.sx.set(s.stride_w);
  conv.sy.set(s.stride_h);
  conv.dx.set(s.dil_w);
  conv.dy.set(s.dil_h);
  conv.px.set(s.pad_l);
  conv.py.set(s.pad_t);
  conv.relu.set(true);
  conv.out.realize(hy);
  std::vector<int64_t> ref_shape;
  const auto ref = ref::grouped_conv(x.view(), w.view(), bias.view_ptr(), d, &ref_shape);
  expect_matches(y, ref, ref_shape, what);
}

// A random point of `family`: each field drawn in a range that stays near
// the register file, then validated (drawn again when invalid).
ConvSchedule random_point(std::mt19937& rng, ConvFamily family, const TargetFacts& facts) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (;;) {
    ConvSchedule s;
    s.family = family;
    if (family == ConvFamily::Rows) {
      s.row_vectors = pick(1, 2);
      s.row_rows = pick(1, 4);
      s.row_channels = pick(1, 8);
      s.task_input_kb = pick(4, 512);
      s.task_max_rows = pick(1, 32);
      s.wide_vectors = pick(1, 4);
      s.wide_channels = pick(1, 6);
      s.wide_task_input_kb = pick(4, 1024);
      s.dw_vectors = pick(1, 2);
      s.dw_rows = pick(1, 4);
      s.dw_planes = pick(1, 16);
      s.dw_task_cols = pick(1, 16);
      s.dw_task_rows = pick(1, 32);
    } else if (family == ConvFamily::Lanes) {
      s.lane_columns = pick(1, 8);
      s.lane_task_rows = pick(1, 16);
      s.lane_task_vectors = pick(1, 8);
    } else {
      s.ch_vectors = pick(1, 4);
      s.ch_columns = pick(1, 10);
      s.ch_task_rows = pick(1, 8);
      s.ch_task_channels = pick(0, 1) ? facts.vector_floats * std::max(s.ch_vectors, 2) * pick(1, 2) : 0;
      s.task_input_kb = pick(4, 512);
      s.ch_unroll_kx = pick(0, 1);
      s.ch_ci_block = pick(0, 1) ? pick(1, 24) : 0;
      // Tiles straight into y, or through a block copied out; either may
      // block the reduction by input channels.
      s.ch_direct = pick(0, 1);
      s.ch_fit_rows = pick(0, 1);
    }
    s = fill_defaults(s, facts);
    if (validate_conv_schedule(s, facts).empty()) return s;
  }
}

// One slice of the random points: a family's points k with k % parts ==
// part (the family's default point is k = 0), so that ctest runs the
// slices side by side (tests/kernels/CMakeLists.txt).
struct Slice {
  ConvFamily family;
  int part, parts;
};

class RandomPoints : public ::testing::TestWithParam<Slice> {};

TEST_P(RandomPoints, ComputeTheSameFunction) {
  const Slice slice = GetParam();
  const Halide::Target target = host_target();
  const TargetFacts facts = target_facts(target);
  const char* seed_env = std::getenv("BATCHCONV_TEST_SEED");
  const unsigned seed = seed_env ? static_cast<unsigned>(std::strtoul(seed_env, nullptr, 10)) : 20261201u;
  const char* n_env = std::getenv("BATCHCONV_TEST_POINTS");
  const int points = n_env ? std::atoi(n_env) : 5;
  std::printf("schedule points: seed %u, %d per family, %s part %d of %d, target %s\n", seed, points,
              family_name(slice.family), slice.part, slice.parts, target.to_string().c_str());
  // Each family draws from its own sequence: a slice's points do not
  // depend on which other slices run.
  std::mt19937 rng(seed + 1000u * static_cast<unsigned>(slice.family));
  // The lanes kernels compile slowly (a specialization per Cout_g, layout
  // and column tile): a quarter as many points.
  const int n = slice.family == ConvFamily::Lanes ? std::max(1, points / 4) : points;
  std::vector<ConvSchedule> list{default_conv_schedule(facts, slice.family)};
  for (int i = 0; i < n; ++i) list.push_back(random_point(rng, slice.family, facts));
  for (size_t k = 0; k < list.size(); ++k) {
    if (static_cast<int>(k % static_cast<size_t>(slice.parts)) != slice.part) continue;
    const ConvSchedule& s = list[k];
    const std::string point = to_string(s);
    SCOPED_TRACE(point);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      JitConv conv(s, target);
      for (const Shape& shape : kShapes)
        if (slice.family != ConvFamily::Lanes || lanes_take(shape, facts)) check_shape(conv, shape, point);
    } catch (const std::exception& e) {
      FAIL() << point << ": " << e.what();
    }
    std::printf("point %zu: %s (%.1f s)\n", k, point.c_str(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Slices, RandomPoints,
                         ::testing::Values(Slice{ConvFamily::Rows, 0, 2}, Slice{ConvFamily::Rows, 1, 2},
                                           Slice{ConvFamily::Channels, 0, 6}, Slice{ConvFamily::Channels, 1, 6},
                                           Slice{ConvFamily::Channels, 2, 6}, Slice{ConvFamily::Channels, 3, 6},
                                           Slice{ConvFamily::Channels, 4, 6}, Slice{ConvFamily::Channels, 5, 6},
                                           Slice{ConvFamily::Lanes, 0, 1}),
                         [](const ::testing::TestParamInfo<Slice>& i) {
                           return std::string(family_name(i.param.family)) + "_" + std::to_string(i.param.part);
                         });

TEST(SchedulePoints, InvalidPointsNameTheField) {
  TargetFacts avx2;
  avx2.vector_floats = 8;
  avx2.registers = 16;
  avx2.name = "x86-64-linux-avx2";
  ConvSchedule s = default_conv_schedule(avx2, ConvFamily::Channels);
  EXPECT_EQ(validate_conv_schedule(s, avx2), "");
  s.ch_vectors = 4;
  s.ch_columns = 6;
  const std::string e = validate_conv_schedule(s, avx2);
  EXPECT_NE(e.find("ch_vectors=4 x ch_columns=6 needs 29 vector registers"), std::string::npos) << e;
  EXPECT_NE(e.find("x86-64-linux-avx2 has 16"), std::string::npos) << e;
  s = default_conv_schedule(avx2, ConvFamily::Rows);
  s.task_max_rows = 0;
  EXPECT_NE(validate_conv_schedule(s, avx2).find("task_max_rows=0 is out of range"), std::string::npos);
  s = default_conv_schedule(avx2, ConvFamily::Rows);
  s.row_channels = 12;
  EXPECT_NE(validate_conv_schedule(s, avx2).find("row_channels=12"), std::string::npos);
}

TEST(SchedulePoints, TextRoundTripAndErrors) {
  TargetFacts t;
  ConvSchedule s = default_conv_schedule(t, ConvFamily::Channels);
  s.ch_columns = 5;
  const ConvSchedule back = parse_conv_schedule(to_string(s));
  EXPECT_EQ(to_string(back), to_string(s));
  EXPECT_EQ(back.family, ConvFamily::Channels);
  EXPECT_EQ(back.ch_columns, 5);
  auto error_of = [](const std::string& text) {
    try {
      parse_conv_schedule(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("ch_vectorz=2").find("unknown field 'ch_vectorz'"), std::string::npos);
  EXPECT_NE(error_of("family=tpu").find("family=tpu: expected rows, channels, gpu or lanes"), std::string::npos);
  EXPECT_NE(error_of("ch_columns=six").find("ch_columns=six is not an integer"), std::string::npos);
  EXPECT_NE(error_of("ch_columns").find("is not name=value"), std::string::npos);
}

}  // namespace
}  // namespace batchconv::test

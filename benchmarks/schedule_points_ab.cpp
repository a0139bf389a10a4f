// schedule-points-ab: points of the schedule space against each other on
// the grouped conv, JIT-compiled for this machine through the generators'
// own schedule functions, timed interleaved (the order rotated every
// round) on the same reused buffers, on NCHW and NHWC (channels-last)
// tensors. Each point's output is compared with the first point's.
//
//   schedule-points-ab [--only=TEXT] [--rounds=N] [--static] [--conv=N,Cin,Cout,H,W,K,pad] [POINT ...]
//
// --static compiles each point for each shape and layout, every extent,
// stride and the geometry constants, as the model compiler does (the
// run-time conditions of the schedule's specializations then fold away);
// by default each point is compiled once, for any shape, as the runtime's
// AOT kernels are.
// POINT is the schedule text ("family=channels,ch_direct=0"); default: the
// channels family's default point with ch_direct=0 and =1. The rows family
// reads NCHW tensors only (its NHWC cells stay empty).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Halide.h"
#include "conv_generator_common.h"
#include "host_target.h"

namespace {

using namespace batchconv_gen;

// The shape and layout a kernel is compiled for with --static: every
// buffer's dims (innermost first) and the padding, as the model compiler
// knows them.
struct FixedShape {
  const halide_dimension_t *x, *w, *y;
  int pad;
};

// grouped_conv_generator.cpp's pipeline (one group) over ImageParams, for
// any shape or, given `fixed`, for that one (every extent, stride and the
// geometry compile-time constants).
struct JitConv {
  Halide::ImageParam x{Halide::Float(32), 5, "x"}, w{Halide::Float(32), 5, "w"}, bias{Halide::Float(32), 2, "bias"};
  Halide::Param<int32_t> sx{"sx"}, sy{"sy"}, dx{"dx"}, dy{"dy"}, px{"px"}, py{"py"};
  Halide::Param<bool> relu{"relu"};
  Halide::Func out{"out"};

  JitConv(const ConvSchedule& s, const Halide::Target& target, const FixedShape* fixed = nullptr) {
    using namespace Halide;
    bias.dim(0).set_stride(Expr());
    ConvGeometry geo = conv_geometry(x, w, Expr(sx), Expr(sy), Expr(dx), Expr(dy), Expr(px), Expr(py));
    if (fixed) {
      const Expr one = 1, pad = fixed->pad;
      geo = ConvGeometry{one, one, one, one, pad, pad, fixed->x[0].extent, fixed->x[1].extent,
                         fixed->w[0].extent, fixed->w[1].extent, fixed->w[2].extent, fixed->w[3].extent};
    }
    ConvVars v;
    Var kx, ky, ci, co, g, b;
    Func x6, w6, b3;
    x6(v.x, v.y, v.c, v.g, v.n, v.b) = x(v.x, v.y, v.c, v.g, v.n);
    w6(kx, ky, ci, co, g, b) = w(kx, ky, ci, co, g);
    b3(co, g, b) = bias(co, g);
    ConvFuncs f = define_conv(x6, w6, b3, geo, relu, clamps_channels(s.family), input_block(s, target));
    out(v.x, v.y, v.c, v.g, v.n) = f.output(v.x, v.y, v.c, v.g, v.n, 0);
    OutputImageParam y = out.output_buffer();
    constrain_buffers(s, x, w, y);
    if (fixed) {
      for (int d = 0; d < 5; ++d) {
        x.dim(d).set_bounds(fixed->x[d].min, fixed->x[d].extent).set_stride(fixed->x[d].stride);
        w.dim(d).set_bounds(fixed->w[d].min, fixed->w[d].extent).set_stride(fixed->w[d].stride);
        y.dim(d).set_bounds(fixed->y[d].min, fixed->y[d].extent).set_stride(fixed->y[d].stride);
      }
    }
    if (fixed && s.family == ConvFamily::Channels) {
      const ChannelsExtents e{fixed->y[0].extent, fixed->w[3].extent, Expr(fixed->x[2].stride) == 1,
                              Expr(fixed->y[2].stride) == 1};
      schedule_conv_cpu_channels(out, f, {v.n}, e, s, target_facts(target));
    } else {
      schedule_conv_generator(out, y, f, {v.n}, x, w, sx, s, target);
    }
    out.compile_jit(target);
  }
};

struct Shape {
  std::string name;
  int n, cin, cout, h, w, k, pad;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes = {
      {"seed 2: 3->64 7x7 28x28, N=128", 128, 3, 64, 28, 28, 7, 0},
      {"seed 3 slice: 3->64 3x3 32x32, N=50", 50, 3, 64, 32, 32, 3, 0},
      {"3->32 3x3 28x28 pad 1, N=160", 160, 3, 32, 28, 28, 3, 1},
      {"8->64 3x3 56x56 pad 1, N=16", 16, 8, 64, 56, 56, 3, 1},
      {"8->64 1x1 56x56, N=8", 8, 8, 64, 56, 56, 1, 0},
      {"64->64 3x3 56x56 pad 1, N=16", 16, 64, 64, 56, 56, 3, 1},
      {"32->32 3x3 7x7 pad 1, N=160", 160, 32, 32, 7, 7, 3, 1},
      {"1x1 64->128 28x28, N=8", 8, 64, 128, 28, 28, 1, 0},
      {"1x1 256->128 14x14, N=8", 8, 256, 128, 14, 14, 1, 0},
      {"seed 1: 16->64 1x1, W=1e6", 1, 16, 64, 1, 1000000, 1, 0},
  };
  std::string only;
  int rounds = 12;
  bool fixed_shapes = false;
  std::vector<std::string> texts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--only=", 0) == 0) {
      only = a.substr(7);
    } else if (a == "--static") {
      fixed_shapes = true;
    } else if (a.rfind("--rounds=", 0) == 0) {
      rounds = std::max(3, std::atoi(a.c_str() + 9));
    } else if (a.rfind("--conv=", 0) == 0) {
      Shape s{"--conv=" + a.substr(7), 0, 0, 0, 0, 0, 0, 0};
      if (std::sscanf(a.c_str() + 7, "%d,%d,%d,%d,%d,%d,%d", &s.n, &s.cin, &s.cout, &s.h, &s.w, &s.k, &s.pad) != 7 ||
          s.n < 1 || s.cin < 1 || s.cout < 1 || s.k < 1 || s.pad < 0 || s.h + 2 * s.pad < s.k ||
          s.w + 2 * s.pad < s.k || double(s.n) * s.cin * s.h * s.w > 1e9) {
        std::fprintf(stderr, "schedule-points-ab: %s: expected --conv=N,Cin,Cout,H,W,K,pad with the kernel inside "
                             "the padded input\n", a.c_str());
        return 2;
      }
      shapes = {s};
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: schedule-points-ab [--only=TEXT] [--rounds=N] [--static] [--conv=N,Cin,Cout,H,W,K,pad] [POINT ...]\n"
                  "  Times schedule points of the grouped conv against each other (JIT, interleaved),\n"
                  "  on NCHW and NHWC tensors. POINT: e.g. family=channels,ch_direct=0\n"
                  "  --static: each point compiled for each shape and layout, as the model compiler does\n");
      return 0;
    } else {
      texts.push_back(a);
    }
  }
  const Halide::Target target = host_target();
  const TargetFacts facts = target_facts(target);
  if (texts.empty()) texts = {"family=channels,ch_direct=0", "family=channels,ch_direct=1"};
  std::vector<ConvSchedule> points;
  std::vector<std::unique_ptr<JitConv>> convs;
  for (const std::string& t : texts) {
    ConvSchedule s;
    try {
      s = fill_defaults(parse_conv_schedule(t), facts);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "schedule-points-ab: %s\n", e.what());
      return 2;
    }
    const std::string invalid = validate_conv_schedule(s, facts);
    if (!invalid.empty() || (s.family != ConvFamily::Rows && s.family != ConvFamily::Channels)) {
      std::fprintf(stderr, "schedule-points-ab: '%s': %s\n", t.c_str(),
                   invalid.empty() ? "only the rows and channels families" : invalid.c_str());
      return 2;
    }
    points.push_back(s);
    if (!fixed_shapes) convs.push_back(std::make_unique<JitConv>(s, target));
  }
  const char* threads = std::getenv("HL_NUM_THREADS");
  std::printf("%s, %s threads; Halide JIT, %s; %s; median ms of %d interleaved rounds\n", cpu_model().c_str(),
              threads ? threads : "all", target.to_string().c_str(),
              fixed_shapes ? "kernels compiled for each shape and layout" : "kernels of run-time shapes", rounds - 2);
  std::printf("\n| shape | layout |");
  for (const std::string& t : texts) std::printf(" %s |", t.c_str());
  std::printf(" max diff |\n|---|---|");
  for (size_t i = 0; i < texts.size(); ++i) std::printf("---:|");
  std::printf("---:|\n");

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Shape& s : shapes) {
    if (!only.empty() && s.name.find(only) == std::string::npos) continue;
    const int oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
    std::vector<float> xv(size_t(s.n) * s.cin * s.h * s.w), wv(size_t(s.cout) * s.cin * s.k * s.k),
        bv(size_t(s.cout));
    for (float& v : xv) v = u(rng);
    for (float& v : wv) v = u(rng);
    for (float& v : bv) v = u(rng);
    // Weights as the channels family reads them, (KH, KW, Cin, Cout) with
    // Cout innermost, and as the rows family does, PyTorch's order: one
    // array viewed both ways gives two different weights, so the rows
    // family gets its own copy in PyTorch order.
    std::vector<float> wr(wv.size());
    for (int o = 0; o < s.cout; ++o)
      for (int c = 0; c < s.cin; ++c)
        for (int ky = 0; ky < s.k; ++ky)
          for (int kx = 0; kx < s.k; ++kx)
            wr[((size_t(o) * s.cin + c) * s.k + ky) * s.k + kx] = wv[((size_t(ky) * s.k + kx) * s.cin + c) * s.cout + o];
    std::vector<std::vector<float>> ys(points.size(), std::vector<float>(size_t(s.n) * s.cout * oh * ow));
    for (int nhwc = 0; nhwc < 2; ++nhwc) {
      // Halide dims innermost first: (x, y, c, g, n).
      halide_dimension_t xd[5], yd[5];
      if (nhwc) {
        xd[0] = {0, s.w, s.cin, 0}, xd[1] = {0, s.h, s.w * s.cin, 0}, xd[2] = {0, s.cin, 1, 0};
        yd[0] = {0, ow, s.cout, 0}, yd[1] = {0, oh, ow * s.cout, 0}, yd[2] = {0, s.cout, 1, 0};
      } else {
        xd[0] = {0, s.w, 1, 0}, xd[1] = {0, s.h, s.w, 0}, xd[2] = {0, s.cin, s.h * s.w, 0};
        yd[0] = {0, ow, 1, 0}, yd[1] = {0, oh, ow, 0}, yd[2] = {0, s.cout, oh * ow, 0};
      }
      xd[3] = {0, 1, s.cin * s.h * s.w, 0}, xd[4] = {0, s.n, s.cin * s.h * s.w, 0};
      yd[3] = {0, 1, s.cout * oh * ow, 0}, yd[4] = {0, s.n, s.cout * oh * ow, 0};
      halide_dimension_t wpd[5] = {{0, s.k, s.cin * s.cout, 0},
                                   {0, s.k, s.k * s.cin * s.cout, 0},
                                   {0, s.cin, s.cout, 0},
                                   {0, s.cout, 1, 0},
                                   {0, 1, s.cout, 0}};
      halide_dimension_t wrd[5] = {{0, s.k, 1, 0},
                                   {0, s.k, s.k, 0},
                                   {0, s.cin, s.k * s.k, 0},
                                   {0, s.cout, s.cin * s.k * s.k, 0},
                                   {0, 1, s.cout * s.cin * s.k * s.k, 0}};
      halide_dimension_t bd[2] = {{0, s.cout, 1, 0}, {0, 1, s.cout, 0}};
      Halide::Buffer<float> hx(xv.data(), 5, xd), hwp(wv.data(), 5, wpd), hwr(wr.data(), 5, wrd),
          hb(bv.data(), 2, bd);
      if (fixed_shapes) {
        convs.clear();
        for (const ConvSchedule& p : points) {
          if (nhwc && p.family == ConvFamily::Rows) {
            convs.emplace_back();
            continue;
          }
          const FixedShape fixed{xd, p.family == ConvFamily::Rows ? wrd : wpd, yd, s.pad};
          convs.push_back(std::make_unique<JitConv>(p, target, &fixed));
        }
      }
      std::vector<std::vector<double>> times(points.size());
      for (int round = 0; round < rounds; ++round)
        for (size_t i = 0; i < points.size(); ++i) {
          const size_t k = (i + round) % points.size();
          const bool rows = points[k].family == ConvFamily::Rows;
          if (nhwc && rows) continue;
          JitConv& c = *convs[k];
          Halide::Buffer<float> hy(ys[k].data(), 5, yd);
          c.x.set(hx);
          c.w.set(rows ? hwr : hwp);
          c.bias.set(hb);
          c.sx.set(1), c.sy.set(1), c.dx.set(1), c.dy.set(1), c.px.set(s.pad), c.py.set(s.pad);
          c.relu.set(false);
          const auto a = std::chrono::steady_clock::now();
          c.out.realize(hy);
          const auto b = std::chrono::steady_clock::now();
          if (round >= 2) times[k].push_back(std::chrono::duration<double, std::milli>(b - a).count());
        }
      std::printf("| %s | %s |", s.name.c_str(), nhwc ? "NHWC" : "NCHW");
      double diff = 0;
      const std::vector<float>* first = nullptr;
      for (size_t k = 0; k < points.size(); ++k) {
        if (times[k].empty()) {
          std::printf(" |");
          continue;
        }
        std::printf(" %.3f |", median(times[k]));
        if (!first) {
          first = &ys[k];
          continue;
        }
        // Both layouts store the same elements, so compare in memory order.
        for (size_t e = 0; e < ys[k].size(); ++e)
          diff = std::max(diff, double(std::fabs(ys[k][e] - (*first)[e])) / (1.0 + std::fabs((*first)[e])));
      }
      std::printf(" %.1e |\n", diff);
    }
  }
  return 0;
}

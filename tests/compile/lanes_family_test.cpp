// The lanes family (generators/conv_schedule_cpu_lanes.h): convs with fewer
// output channels per group than a vector, but a vector's worth across
// groups, run with (channel, group) lanes. Swept over depthwise with
// multipliers, ResNeXt-like groups, channel totals that are not a multiple
// of the vector, stride, dilation, asymmetric padding, odd and tiny widths,
// bias, fused ReLU, the batched-weight op, baked and runtime weights, each
// under every layout policy, against the reference interpreter (1e-4).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing {
namespace {

const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

struct LanesCase {
  int64_t b;  // 0: Conv; else BatchedWeightConv with B = b
  int64_t n, groups, cin_g, cout_g, h, w, k, stride, dilation;
  std::vector<int64_t> pads;  // top, left, bottom, right
  bool bias, relu, baked;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
  // A padded input shorter than the dilated kernel has no output; C++'s
  // division would truncate the negative numerator to a size of 1.
  const int64_t span = in + pb + pe - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

std::string model_text(const LanesCase& c, std::mt19937& rng) {
  const int64_t C = c.groups * c.cin_g, M = c.groups * c.cout_g;
  const int64_t oh = out_size(c.h, c.k, c.stride, c.dilation, c.pads[0], c.pads[2]);
  const int64_t ow = out_size(c.w, c.k, c.stride, c.dilation, c.pads[1], c.pads[3]);
  std::vector<int64_t> x = {c.n, C, c.h, c.w}, w = {M, c.cin_g, c.k, c.k}, bias = {M}, y = {c.n, M, oh, ow};
  if (c.b) x.insert(x.begin(), c.b), w.insert(w.begin(), c.b), bias.insert(bias.begin(), c.b), y.insert(y.begin(), c.b);
  std::ostringstream t;
  std::vector<std::string> inits;
  auto decl = [&](const std::string& name, const std::vector<int64_t>& s, float scale) {
    std::string d = "float[" + dims(s) + "] " + name;
    if (!c.baked) return ", " + d;
    int64_t count = 1;
    for (int64_t e : s) count *= e;
    std::uniform_real_distribution<float> u(-scale, scale);
    std::ostringstream v;
    for (int64_t k = 0; k < count; ++k) v << (k ? "," : "") << u(rng);
    inits.push_back(d + " = {" + v.str() + "}");
    return std::string();
  };
  t << kHeader << "g (float[" << dims(x) << "] x" << decl("w", w, 1.0f) << (c.bias ? decl("b", bias, 0.5f) : "")
    << ") => (float[" << dims(y) << "] y)";
  if (!inits.empty()) {
    t << " <";
    for (size_t k = 0; k < inits.size(); ++k) t << (k ? ", " : "") << inits[k];
    t << ">";
  }
  t << " {\n  c = " << (c.b ? "batchconv.BatchedWeightConv" : "Conv") << "<group = " << c.groups
    << ", strides = [" << c.stride << ", " << c.stride << "], dilations = [" << c.dilation << ", " << c.dilation
    << "], pads = [" << dims(c.pads) << "]>(x, w" << (c.bias ? ", b" : "") << ")\n";
  t << (c.relu ? "  y = Relu(c)\n" : "  y = Identity(c)\n") << "}\n";
  return t.str();
}

void check(const LanesCase& c, std::mt19937& rng) {
  const std::string text = model_text(c, rng);
  std::unique_ptr<ir::Model> m = parse(text);
  for (compiler::LayoutPolicy p :
       {compiler::LayoutPolicy::Auto, compiler::LayoutPolicy::Nchw, compiler::LayoutPolicy::ChannelsLast}) {
    compiler::LowerOptions o;
    o.layouts = p;
    compiler::LoweredModel low = compiler::lower_model(*m, "lanes.onnxtxt", o);
    const int vec = Halide::get_host_target().natural_vector_size<float>();
    if (c.cout_g < vec && c.groups * c.cout_g >= vec) {
      ASSERT_EQ(low.conv_schedules.size(), 1u);
      EXPECT_NE(low.conv_schedules[0].find("family=lanes"), std::string::npos) << low.conv_schedules[0];
      // One channel per group on both sides: the depthwise form.
      const bool depthwise = c.cin_g == 1 && c.cout_g == 1;
      EXPECT_EQ(low.conv_schedules[0].find("depthwise:") != std::string::npos, depthwise) << low.conv_schedules[0];
    }
    const uint64_t seed = rng();
    interp::TensorMap in = interp::random_inputs(*m, seed);
    interp::TensorMap want = run_reference(*m, in);
    interp::TensorMap got = run_jit(low, *m, in);
    EXPECT_LE(interp::max_relative_difference(got.at("y"), want.at("y")), 1e-4)
        << "seed " << seed << " layouts " << compiler::layout_policy_name(p) << "\n" << text.substr(0, 600);
  }
}

TEST(LanesFamily, SweptShapes) {
  std::mt19937 rng(std::random_device{}());
  const std::vector<LanesCase> fixed = {
      {0, 2, 32, 1, 1, 9, 13, 3, 1, 1, {1, 1, 1, 1}, true, true, true},     // depthwise
      {0, 1, 16, 1, 2, 7, 7, 3, 1, 1, {1, 1, 1, 1}, false, false, false},  // multiplier 2
      {0, 2, 8, 4, 4, 14, 14, 3, 1, 1, {1, 1, 1, 1}, true, true, true},    // ResNeXt-like
      {0, 1, 12, 2, 2, 6, 11, 3, 2, 1, {0, 1, 2, 0}, true, false, false},  // 24 lanes, stride 2, asymmetric
      {0, 1, 40, 1, 1, 5, 1, 3, 1, 1, {1, 1, 1, 1}, false, true, true},    // width 1, 40 lanes
      {0, 3, 20, 1, 1, 8, 9, 3, 1, 2, {2, 2, 2, 2}, true, true, false},    // dilation 2
      {0, 1, 16, 3, 1, 5, 6, 5, 1, 1, {2, 2, 2, 2}, false, false, true},   // 5x5, 3 inputs per group
      {2, 2, 16, 1, 1, 6, 7, 3, 1, 1, {1, 1, 1, 1}, true, true, true},     // batched weights, baked
      {3, 1, 8, 2, 4, 5, 9, 3, 2, 1, {1, 0, 1, 2}, true, false, false},    // batched weights, runtime
      {0, 1, 24, 1, 1, 15, 15, 5, 2, 1, {2, 2, 2, 2}, true, true, true},   // depthwise 5x5 stride 2, 24 channels
      {0, 2, 48, 1, 1, 10, 23, 3, 2, 1, {1, 1, 1, 1}, false, true, false}, // depthwise stride 2, odd width
      {0, 1, 144, 1, 1, 7, 7, 3, 1, 1, {1, 1, 1, 1}, true, false, true},   // depthwise, 9 vectors, 7 x 7
  };
  for (const LanesCase& c : fixed) check(c, rng);
  auto pick = [&](std::vector<int64_t> v) { return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)]; };
  for (int trial = 0; trial < 10; ++trial) {
    LanesCase c;
    c.b = pick({0, 0, 2});
    c.n = pick({1, 2});
    c.cout_g = pick({1, 2, 4, 8});
    c.cin_g = pick({1, 2, 4});
    c.groups = pick({16, 24, 32, 48}) / c.cout_g;
    c.h = pick({3, 6, 9});
    c.w = pick({4, 7, 12, 17});
    c.k = pick({1, 3});
    c.stride = pick({1, 2});
    c.dilation = c.k == 3 ? pick({1, 2}) : 1;
    c.pads = {pick({0, 1, 2}), pick({0, 1}), pick({0, 2}), pick({1, 2})};
    c.bias = pick({0, 1}) == 1;
    c.relu = pick({0, 1}) == 1;
    c.baked = pick({0, 1}) == 1;
    if (out_size(c.h, c.k, c.stride, c.dilation, c.pads[0], c.pads[2]) < 1 ||
        out_size(c.w, c.k, c.stride, c.dilation, c.pads[1], c.pads[3]) < 1)
      continue;
    check(c, rng);
  }
}

}  // namespace
}  // namespace batchconv::testing

// Helpers of the layout plan's tests (layout_plan_test.cpp,
// layout_pools_test.cpp): weights baked or passed as inputs, lowering under a
// policy checked against the reference interpreter, and the plan's lines.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compile_test_support.h"
#include "layout_plan.h"
#include "lower.h"

namespace batchconv::testing::layout_support {

inline const char* kHeader = "<ir_version: 8, opset_import: [\"\" : 17, \"batchconv\" : 1]>\n";

using compiler::LayoutPolicy;

inline std::string dims(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out;
}

// A weight declaration: an initializer with random data ("float[..] w = {..}")
// or a graph input ("float[..] w"). Values are uniform with the variance of
// 1 / fan-in (the elements past the first `outer` dims), so activations stay
// near 1 through a chain of convs and 1e-4 is a relative bound.
struct Weights {
  bool baked;
  std::mt19937 rng{std::random_device{}()};
  std::vector<std::string> inputs, inits;
  std::map<std::string, float> scale;  // inputs: what the random [-1, 1] values are scaled by
  void add(const std::string& name, const std::vector<int64_t>& shape, int outer = 1) {
    std::string decl = "float[" + dims(shape) + "] " + name;
    int64_t n = 1, fan_in = 1;
    for (size_t k = 0; k < shape.size(); ++k) n *= shape[k], fan_in *= static_cast<int>(k) >= outer ? shape[k] : 1;
    const float a = shape.size() > static_cast<size_t>(outer) ? std::sqrt(3.0f / static_cast<float>(fan_in)) : 0.5f;
    if (!baked) {
      inputs.push_back(decl);
      scale[name] = a;
      return;
    }
    std::uniform_real_distribution<float> u(-a, a);
    std::ostringstream v;
    for (int64_t k = 0; k < n; ++k) v << (k ? "," : "") << u(rng);
    inits.push_back(decl + " = {" + v.str() + "}");
  }
  // "g (x..., weights...) => (outs) <inits> {"
  std::string signature(const std::string& ins, const std::string& outs) const {
    std::string s = "g (" + ins;
    for (const std::string& i : inputs) s += ", " + i;
    s += ") => (" + outs + ")";
    if (!inits.empty()) {
      s += " <";
      for (size_t k = 0; k < inits.size(); ++k) s += (k ? ", " : "") + inits[k];
      s += ">";
    }
    return s + " {\n";
  }
};

// Lowers under `policy`, checks the result against the interpreter; returns the plan's lines.
inline std::vector<std::string> check(const std::string& text, LayoutPolicy policy, const Weights& w) {
  std::unique_ptr<ir::Model> m = parse(text);
  compiler::LowerOptions o;
  o.layouts = policy;
  compiler::LoweredModel low = compiler::lower_model(*m, "test.onnxtxt", o);
  const uint64_t seed = std::random_device{}();
  interp::TensorMap in = interp::random_inputs(*m, seed);
  for (const auto& [name, a] : w.scale)
    for (float& v : in.at(name).f) v *= a;
  interp::TensorMap want = run_reference(*m, in);
  interp::TensorMap got = run_jit(low, *m, in);
  for (const auto& [name, w] : want) {
    EXPECT_LE(interp::max_relative_difference(got.at(name), w), 1e-4)
        << name << " seed " << seed << " layouts " << compiler::layout_policy_name(policy) << "\n"
        << text.substr(0, 2000);
  }
  return low.layout_explanations;
}

// The plan's line for the conv whose output is `value`.
inline std::string line_of(const std::vector<std::string>& lines, const std::string& value) {
  for (const std::string& l : lines)
    if (l.find(" -> '" + value + "': ") != std::string::npos) return l;
  return "";
}

inline bool stored_channels_innermost(const std::vector<std::string>& lines, const std::string& node) {
  return line_of(lines, node).find("result channels innermost") != std::string::npos;
}
inline bool input_channels_innermost(const std::vector<std::string>& lines, const std::string& node) {
  return line_of(lines, node).find("input read channels innermost") != std::string::npos;
}

inline const LayoutPolicy kPolicies[] = {LayoutPolicy::Auto, LayoutPolicy::Nchw, LayoutPolicy::ChannelsLast};

// Three channels-family convs (72 and 288 taps, 32 and 20 output channels)
// with a fused Relu, a residual Add and a Relu between them.
inline std::string residual_stack(Weights& w) {
  w.add("w1", {32, 8, 3, 3});
  w.add("b1", {32});
  w.add("w2", {32, 32, 3, 3});
  w.add("w3", {20, 32, 3, 3});
  w.add("b3", {20});
  return std::string(kHeader) + w.signature("float[2, 8, 9, 11] x", "float[2, 20, 5, 6] y") + R"(
  c1 = Conv<pads = [1, 1, 1, 1]>(x, w1, b1)
  r1 = Relu(c1)
  c2 = Conv<pads = [1, 1, 1, 1]>(r1, w2)
  a = Add(c2, r1)
  r2 = Relu(a)
  y = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(r2, w3, b3)
})";
}

}  // namespace batchconv::testing::layout_support

// Autoscheduler estimates of a conv generator, settable per build: the
// generator param `estimates` takes a call's tuning shape key
// ("b=1 n=8 groups=1 cin_g=64 cout_g=64 in=56x56 kernel=3x3 out=56x56
// stride=1x1 dilation=1x1 pad=1x1", conv_chooser.h), or the same written
// "b:1,n:8,..." (a generator's command line takes no spaces or '=' in a
// value), so that Halide's
// autoschedulers, run by batchconv-tune as baselines, schedule for the shape
// being tuned. Fields it does not give keep the generator's defaults.
#pragma once

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "Halide.h"
#include "conv_chooser.h"

namespace batchconv_gen {

struct ConvEstimate {
  int b = 1, n = 8, groups = 1, cin_g = 64, cout_g = 64;
  int in_h = 56, in_w = 56, k_h = 3, k_w = 3, out_h = 56, out_w = 56;
  int stride_y = 1, stride_x = 1, dilation_y = 1, dilation_x = 1, pad_y = 1, pad_x = 1;
};

// Parses `key` (parse_tuning_shape_key) over `e`. Throws
// std::invalid_argument on a malformed item.
inline ConvEstimate parse_conv_estimate(const std::string& key, ConvEstimate e) {
  ConvProblem base;
  base.batch = e.b, base.n = e.n, base.groups = e.groups, base.cin_g = e.cin_g, base.cout_g = e.cout_g;
  base.in_h = e.in_h, base.in_w = e.in_w, base.kernel_h = e.k_h, base.kernel_w = e.k_w;
  base.out_h = e.out_h, base.out_w = e.out_w, base.stride_y = e.stride_y, base.stride_x = e.stride_x;
  base.dilation_y = e.dilation_y, base.dilation_x = e.dilation_x, base.pad_y = e.pad_y, base.pad_x = e.pad_x;
  const ConvProblem p = parse_tuning_shape_key(key, base);
  auto i = [](int64_t v) { return static_cast<int>(v); };
  e.b = i(p.batch), e.n = i(p.n), e.groups = i(p.groups), e.cin_g = i(p.cin_g), e.cout_g = i(p.cout_g);
  e.in_h = i(p.in_h), e.in_w = i(p.in_w), e.k_h = i(p.kernel_h), e.k_w = i(p.kernel_w);
  e.out_h = i(p.out_h), e.out_w = i(p.out_w), e.stride_y = p.stride_y, e.stride_x = p.stride_x;
  e.dilation_y = p.dilation_y, e.dilation_x = p.dilation_x, e.pad_y = p.pad_y, e.pad_x = p.pad_x;
  return e;
}

// Sets the estimates of a conv generator's buffers (x, w, bias, y in the
// grouped view of conv_algorithm.h, each of its own rank) and scalars.
template <typename Gen>
void set_conv_estimates(Gen& g, const ConvEstimate& e) {
  auto ranges = [](std::vector<int> extents, int rank) {
    extents.resize(static_cast<size_t>(rank), 1);
    Halide::Region r;
    for (int v : extents) r.push_back({0, v});
    return r;
  };
  g.x.set_estimates(ranges({e.in_w, e.in_h, e.cin_g, e.groups, e.n, e.b}, g.x.dimensions()));
  g.w.set_estimates(ranges({e.k_w, e.k_h, e.cin_g, e.cout_g, e.groups, e.b}, g.w.dimensions()));
  g.bias.set_estimates(ranges({e.cout_g, e.groups, e.b}, g.bias.dimensions()));
  g.y.set_estimates(ranges({e.out_w, e.out_h, e.cout_g, e.groups, e.n, e.b}, g.y.dimensions()));
  g.stride_x.set_estimate(e.stride_x);
  g.stride_y.set_estimate(e.stride_y);
  g.dilation_x.set_estimate(e.dilation_x);
  g.dilation_y.set_estimate(e.dilation_y);
  g.pad_x.set_estimate(e.pad_x);
  g.pad_y.set_estimate(e.pad_y);
  g.relu.set_estimate(false);
}

}  // namespace batchconv_gen

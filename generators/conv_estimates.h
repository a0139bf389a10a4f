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

namespace batchconv_gen {

struct ConvEstimate {
  int b = 1, n = 8, groups = 1, cin_g = 64, cout_g = 64;
  int in_h = 56, in_w = 56, k_h = 3, k_w = 3, out_h = 56, out_w = 56;
  int stride_y = 1, stride_x = 1, dilation_y = 1, dilation_x = 1, pad_y = 1, pad_x = 1;
};

// Parses `key` over `e`; unknown names (x=, y=, y_banks=) are layout facts
// the estimates do not need. Throws std::invalid_argument on a malformed item.
inline ConvEstimate parse_conv_estimate(const std::string& key, ConvEstimate e) {
  std::string text = key;
  for (char& c : text)
    if (c == ',') c = ' ';
    else if (c == ':') c = '=';
  std::istringstream in(text);
  std::string item;
  auto number = [&](const std::string& v) {
    size_t used = 0;
    const long n = std::stol(v, &used);
    if (used != v.size() || n < 0 || n > (1 << 30))
      throw std::invalid_argument("estimates: '" + item + "' is not a size");
    return static_cast<int>(n);
  };
  while (in >> item) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("estimates: '" + item + "' is not name=value");
    const std::string name = item.substr(0, eq), v = item.substr(eq + 1);
    const size_t x = v.find('x');
    try {
      if (x != std::string::npos && x > 0 && std::isdigit(static_cast<unsigned char>(v[0]))) {
        const int h = number(v.substr(0, x)), w = number(v.substr(x + 1));
        if (name == "in") e.in_h = h, e.in_w = w;
        else if (name == "kernel") e.k_h = h, e.k_w = w;
        else if (name == "out") e.out_h = h, e.out_w = w;
        else if (name == "stride") e.stride_y = h, e.stride_x = w;
        else if (name == "dilation") e.dilation_y = h, e.dilation_x = w;
        else if (name == "pad") e.pad_y = h, e.pad_x = w;
      } else if (name == "b") e.b = number(v);
      else if (name == "n") e.n = number(v);
      else if (name == "groups") e.groups = number(v);
      else if (name == "cin_g") e.cin_g = number(v);
      else if (name == "cout_g") e.cout_g = number(v);
    } catch (const std::logic_error&) {
      throw std::invalid_argument("estimates: '" + item + "' is not a size or HxW");
    }
  }
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

// Plain-loop double-precision reference, written from PyTorch's definitions:
//   y[n, co, oh, ow] = bias[co] + sum_{ci < Cin/groups, kh, kw}
//       x[n, g*Cin_g + ci, oh*sh - pad_h + kh*dh, ow*sw - pad_w + kw*dw] * w[co, ci, kh, kw]
// with g = co / (Cout/groups) and out-of-range input positions reading 0.
// It deliberately uses none of the runtime's compiled code (no TensorView
// methods, no shape helpers): strides and output sizes are computed here.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace batchconv::ref {
namespace {

// The element stride of every dimension of v (row-major when v.strides is empty).
std::vector<int64_t> strides_of(const TensorView& v) {
  if (!v.strides.empty()) return v.strides;
  std::vector<int64_t> s(v.shape.size(), 1);
  for (int i = static_cast<int>(v.shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * v.shape[i + 1];
  return s;
}

int64_t out_size(int64_t in, int64_t k, int stride, int dil, int pb, int pe) {
  return (in + pb + pe - static_cast<int64_t>(dil) * (k - 1) - 1) / stride + 1;
}

// One convolution problem over 4-D strided operands; 1-D is H = KH = 1.
struct Conv4 {
  const float* x;
  int64_t xs[4];  // strides of (n, c, h, w)
  int64_t N, Cin, H, W;
  const float* w;
  int64_t ws[4];  // strides of (co, ci, kh, kw)
  int64_t Cout, Cin_g, KH, KW;
  const float* bias;  // nullptr or Cout values
  int64_t bs;
  int groups;
  int sh, sw, dh, dw, ph, pw;
  bool relu;
  double* y;
  int64_t ys[4];  // strides of (n, co, oh, ow) in y
  int64_t OH, OW;
};

void run_conv(const Conv4& p) {
  const int64_t cout_g = p.Cout / p.groups;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t co = 0; co < p.Cout; ++co) {
      const int64_t g = co / cout_g;
      for (int64_t oh = 0; oh < p.OH; ++oh)
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          double acc = p.bias ? static_cast<double>(p.bias[co * p.bs]) : 0.0;
          for (int64_t ci = 0; ci < p.Cin_g; ++ci) {
            const int64_t c = g * p.Cin_g + ci;
            for (int64_t kh = 0; kh < p.KH; ++kh) {
              const int64_t ih = oh * p.sh - p.ph + kh * p.dh;
              if (ih < 0 || ih >= p.H) continue;
              for (int64_t kw = 0; kw < p.KW; ++kw) {
                const int64_t iw = ow * p.sw - p.pw + kw * p.dw;
                if (iw < 0 || iw >= p.W) continue;
                const double xv = p.x[n * p.xs[0] + c * p.xs[1] + ih * p.xs[2] + iw * p.xs[3]];
                const double wv = p.w[co * p.ws[0] + ci * p.ws[1] + kh * p.ws[2] + kw * p.ws[3]];
                acc += xv * wv;
              }
            }
          }
          if (p.relu && acc < 0) acc = 0;
          p.y[n * p.ys[0] + co * p.ys[1] + oh * p.ys[2] + ow * p.ys[3]] = acc;
        }
    }
}

// Fills the spatial fields of p from the last (1-D) or last two (2-D) dims of
// x and w, whose leading dims start at x_lead / w_lead.
void set_geometry(Conv4& p, const TensorView& x, const std::vector<int64_t>& xs, int x_lead,
                  const TensorView& w, const std::vector<int64_t>& ws, int w_lead,
                  const ConvDesc& d) {
  const bool two_d = x.rank() - x_lead == 4;
  p.N = x.shape[x_lead];
  p.Cin = x.shape[x_lead + 1];
  p.xs[0] = xs[x_lead];
  p.xs[1] = xs[x_lead + 1];
  p.Cout = w.shape[w_lead];
  p.Cin_g = w.shape[w_lead + 1];
  p.ws[0] = ws[w_lead];
  p.ws[1] = ws[w_lead + 1];
  p.groups = d.groups;
  p.relu = d.activation == Activation::ReLU;
  if (two_d) {
    p.H = x.shape[x_lead + 2];
    p.W = x.shape[x_lead + 3];
    p.xs[2] = xs[x_lead + 2];
    p.xs[3] = xs[x_lead + 3];
    p.KH = w.shape[w_lead + 2];
    p.KW = w.shape[w_lead + 3];
    p.ws[2] = ws[w_lead + 2];
    p.ws[3] = ws[w_lead + 3];
    p.sh = d.stride[0], p.sw = d.stride[1];
    p.dh = d.dilation[0], p.dw = d.dilation[1];
    p.ph = d.pad_begin[0], p.pw = d.pad_begin[1];
    p.OH = out_size(p.H, p.KH, d.stride[0], d.dilation[0], d.pad_begin[0], d.pad_end[0]);
    p.OW = out_size(p.W, p.KW, d.stride[1], d.dilation[1], d.pad_begin[1], d.pad_end[1]);
  } else {
    p.H = 1, p.KH = 1, p.OH = 1;
    p.xs[2] = 0, p.ws[2] = 0;
    p.W = x.shape[x_lead + 2];
    p.xs[3] = xs[x_lead + 2];
    p.KW = w.shape[w_lead + 2];
    p.ws[3] = ws[w_lead + 2];
    p.sh = 1, p.dh = 1, p.ph = 0;
    p.sw = d.stride[0], p.dw = d.dilation[0], p.pw = d.pad_begin[0];
    p.OW = out_size(p.W, p.KW, d.stride[0], d.dilation[0], d.pad_begin[0], d.pad_end[0]);
  }
}

// Spatial part of the output shape.
void append_spatial(std::vector<int64_t>& s, const Conv4& p, bool two_d) {
  if (two_d) s.push_back(p.OH);
  s.push_back(p.OW);
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

}  // namespace

std::vector<double> grouped_conv(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const ConvDesc& d, std::vector<int64_t>* out_shape) {
  const auto xs = strides_of(x), ws = strides_of(w);
  Conv4 p{};
  p.x = x.data;
  p.w = w.data;
  set_geometry(p, x, xs, 0, w, ws, 0, d);
  if (bias) p.bias = bias->data, p.bs = strides_of(*bias)[0];
  std::vector<int64_t> shape{p.N, p.Cout};
  append_spatial(shape, p, x.rank() == 4);
  std::vector<double> y(static_cast<size_t>(product(shape)));
  p.y = y.data();
  p.ys[3] = 1, p.ys[2] = p.OW, p.ys[1] = p.OH * p.OW, p.ys[0] = p.Cout * p.OH * p.OW;
  run_conv(p);
  if (out_shape) *out_shape = shape;
  return y;
}

std::vector<double> batched_weight_conv(const TensorView& x, const TensorView& w,
                                        const TensorView* bias, const ConvDesc& d,
                                        std::vector<int64_t>* out_shape) {
  const auto xs = strides_of(x), ws = strides_of(w);
  const int64_t B = x.shape[0];
  Conv4 p{};
  set_geometry(p, x, xs, 1, w, ws, 1, d);
  std::vector<int64_t> bs = bias ? strides_of(*bias) : std::vector<int64_t>{0, 0};
  std::vector<int64_t> shape{B, p.N, p.Cout};
  append_spatial(shape, p, x.rank() == 5);
  std::vector<double> y(static_cast<size_t>(product(shape)));
  const int64_t slice = p.N * p.Cout * p.OH * p.OW;
  p.ys[3] = 1, p.ys[2] = p.OW, p.ys[1] = p.OH * p.OW, p.ys[0] = p.Cout * p.OH * p.OW;
  for (int64_t b = 0; b < B; ++b) {
    p.x = x.data + b * xs[0];
    p.w = w.data + b * ws[0];
    p.bias = bias ? bias->data + b * bs[0] : nullptr;
    p.bs = bs[1];
    p.y = y.data() + b * slice;
    run_conv(p);
  }
  if (out_shape) *out_shape = shape;
  return y;
}

std::vector<double> broadcast_input_conv(const TensorView& x, const TensorView& w,
                                         const TensorView* bias, const ConvDesc& d,
                                         BroadcastLayout layout,
                                         std::vector<int64_t>* out_shape) {
  const auto xs = strides_of(x), ws = strides_of(w);
  const int64_t B = w.shape[0];
  Conv4 p{};
  p.x = x.data;
  set_geometry(p, x, xs, 0, w, ws, 1, d);
  std::vector<int64_t> bs = bias ? strides_of(*bias) : std::vector<int64_t>{0, 0};
  const bool two_d = x.rank() == 4;
  std::vector<int64_t> shape;
  if (layout == BroadcastLayout::Concatenated)
    shape = {p.N, B * p.Cout};
  else
    shape = {B, p.N, p.Cout};
  append_spatial(shape, p, two_d);
  std::vector<double> y(static_cast<size_t>(product(shape)));
  const int64_t plane = p.OH * p.OW;
  p.ys[3] = 1, p.ys[2] = p.OW, p.ys[1] = plane;
  // Concatenated: y[n, b*Cout + co]; Batched: y[b, n, co].
  p.ys[0] = layout == BroadcastLayout::Concatenated ? B * p.Cout * plane : p.Cout * plane;
  const int64_t b_offset =
      layout == BroadcastLayout::Concatenated ? p.Cout * plane : p.N * p.Cout * plane;
  for (int64_t b = 0; b < B; ++b) {
    p.w = w.data + b * ws[0];
    p.bias = bias ? bias->data + b * bs[0] : nullptr;
    p.bs = bs[1];
    p.y = y.data() + b * b_offset;
    run_conv(p);
  }
  if (out_shape) *out_shape = shape;
  return y;
}

std::vector<double> batched_linear(const TensorView& x, const TensorView& w,
                                   const TensorView* bias, Activation act,
                                   std::vector<int64_t>* out_shape) {
  const auto xs = strides_of(x), ws = strides_of(w);
  const bool shared = x.rank() == 2;
  const int64_t B = w.shape[0], K = w.shape[1], M = w.shape[2];
  const int64_t N = shared ? x.shape[0] : x.shape[1];
  // x strides of (b, n, k); a shared x has b-stride 0.
  const int64_t xb = shared ? 0 : xs[0], xn = shared ? xs[0] : xs[1], xk = shared ? xs[1] : xs[2];
  std::vector<int64_t> bs = bias ? strides_of(*bias) : std::vector<int64_t>{0, 0};
  std::vector<double> y(static_cast<size_t>(B * N * M));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m) {
        double acc = bias ? static_cast<double>(bias->data[b * bs[0] + m * bs[1]]) : 0.0;
        for (int64_t k = 0; k < K; ++k)
          acc += static_cast<double>(x.data[b * xb + n * xn + k * xk]) *
                 static_cast<double>(w.data[b * ws[0] + k * ws[1] + m * ws[2]]);
        if (act == Activation::ReLU && acc < 0) acc = 0;
        y[static_cast<size_t>((b * N + n) * M + m)] = acc;
      }
  if (out_shape) *out_shape = {B, N, M};
  return y;
}

double max_rel_error(const TensorView& y, const std::vector<double>& ref) {
  const auto ys = strides_of(y);
  const int rank = static_cast<int>(y.shape.size());
  double max_ref = 0, max_diff = 0;
  for (double r : ref) max_ref = std::max(max_ref, std::fabs(r));
  std::vector<int64_t> idx(rank, 0);
  for (size_t i = 0; i < ref.size(); ++i) {
    int64_t off = 0;
    for (int k = 0; k < rank; ++k) off += idx[k] * ys[k];
    const double v = y.data[off];
    const double diff = std::isfinite(v) ? std::fabs(v - ref[i]) : HUGE_VAL;
    max_diff = std::max(max_diff, diff);
    for (int k = rank - 1; k >= 0; --k) {  // advance the row-major index
      if (++idx[k] < y.shape[k]) break;
      idx[k] = 0;
    }
  }
  return max_diff / std::max(1.0, max_ref);
}

}  // namespace batchconv::ref

// Conv (1-D/2-D/3-D, groups, pads, strides, dilations, auto_pad) and the
// project's batchconv.BatchedWeightConv: x (B,N,Cin,S...), w (B,Cout,Cin/g,K...),
// optional bias (B,Cout) -> y (B,N,Cout,S'...); slice b of x meets only slice b of w.
#include "interpreter/kernel_util.h"
#include "ir/conv_window.h"

namespace batchconv::interp {

namespace {

// Geometry with the spatial dims padded to 3 (leading 1s).
struct Geometry {
  int64_t n = 0, c = 0, m = 0, group = 1, cg = 0;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};
  std::vector<int64_t> out_spatial;
};

// x_shape: (N, C, S...), w_shape: (M, C/g, K...).
Geometry geometry(const ir::Node& nd, const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
  if (x.size() < 3 || x.size() > 5) fail("input must be (N, C, spatial...) with 1 to 3 spatial dims, got " + shape_str(x));
  if (w.size() != x.size()) fail("weight " + shape_str(w) + " does not match the rank of input " + shape_str(x));
  const size_t s = x.size() - 2, off = 3 - s;
  Geometry g;
  g.n = x[0];
  g.c = x[1];
  g.m = w[0];
  g.cg = w[1];
  g.group = nd.attr_int("group", 1);
  if (g.group <= 0) fail("group " + std::to_string(g.group) + " must be positive");
  if (g.c != g.cg * g.group)
    fail("group " + std::to_string(g.group) + " x weight in-channels " + std::to_string(g.cg) + " != input channels " +
         std::to_string(g.c));
  if (g.m % g.group) fail("group " + std::to_string(g.group) + " does not divide " + std::to_string(g.m) + " output channels");
  ir::Window win;
  try {
    win = ir::conv_window(ir::window_attrs(nd, static_cast<int64_t>(s)), std::vector<int64_t>(x.begin() + 2, x.end()),
                          std::vector<int64_t>(w.begin() + 2, w.end()));
  } catch (const ir::WindowError& e) {
    fail(e.what());
  }
  for (size_t d = 0; d < s; ++d) {
    g.in[off + d] = x[2 + d];
    g.k[off + d] = w[2 + d];
    g.stride[off + d] = win.strides[d];
    g.dil[off + d] = win.dilations[d];
    g.pad[off + d] = win.pad_begin[d];
    g.out[off + d] = win.out[d];
    g.out_spatial.push_back(win.out[d]);
  }
  return g;
}

// One conv over n images: x (n, c, in...), w (m, cg, k...), bias (m) or null.
void conv_core(const Geometry& g, const float* x, const float* w, const float* bias, float* y) {
  const int64_t mg = g.m / g.group;
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  const int64_t ksz = g.k[0] * g.k[1] * g.k[2];
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.m; ++oc) {
      const int64_t grp = oc / mg;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            double acc = bias ? bias[oc] : 0.0;
            for (int64_t ic = 0; ic < g.cg; ++ic) {
              const float* xp = x + (b * g.c + grp * g.cg + ic) * isz;
              const float* wp = w + (oc * g.cg + ic) * ksz;
              for (int64_t kd = 0; kd < g.k[0]; ++kd) {
                int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
                if (id < 0 || id >= g.in[0]) continue;
                for (int64_t kh = 0; kh < g.k[1]; ++kh) {
                  int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
                  if (ih < 0 || ih >= g.in[1]) continue;
                  for (int64_t kw = 0; kw < g.k[2]; ++kw) {
                    int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dil[2];
                    if (iw < 0 || iw >= g.in[2]) continue;
                    acc += static_cast<double>(xp[(id * g.in[1] + ih) * g.in[2] + iw]) *
                           wp[(kd * g.k[1] + kh) * g.k[2] + kw];
                  }
                }
              }
            }
            y[(b * g.m + oc) * osz + (od * g.out[1] + oh) * g.out[2] + ow] = static_cast<float>(acc);
          }
    }
}

void require_float(const Tensor& t, const char* what) {
  if (!t.is_float()) fail(std::string(what) + " must be a float tensor");
}

Outputs conv(const ir::Node& nd, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "X");
  const Tensor& w = in(ins, 1, "W");
  const Tensor* b = opt_in(ins, 2);
  require_float(x, "X");
  require_float(w, "W");
  Geometry g = geometry(nd, x.shape, w.shape);
  if (b && (b->shape != std::vector<int64_t>{g.m})) fail("bias " + shape_str(b->shape) + " must be [" + std::to_string(g.m) + "]");
  std::vector<int64_t> shape = {g.n, g.m};
  shape.insert(shape.end(), g.out_spatial.begin(), g.out_spatial.end());
  Tensor y = make_tensor(ir::DType::Float, shape);
  conv_core(g, x.f.data(), w.f.data(), b ? b->f.data() : nullptr, y.f.data());
  Outputs o;
  o.push_back(std::move(y));
  return o;
}

Outputs batched_weight_conv(const ir::Node& nd, const Inputs& ins) {
  const Tensor& x = in(ins, 0, "x");
  const Tensor& w = in(ins, 1, "w");
  const Tensor* b = opt_in(ins, 2);
  require_float(x, "x");
  require_float(w, "w");
  if (x.shape.size() < 4 || w.shape.size() != x.shape.size())
    fail("x must be (B,N,Cin,S...) and w (B,Cout,Cin/group,K...) with the same rank, got x " + shape_str(x.shape) +
         ", w " + shape_str(w.shape));
  const int64_t B = x.shape[0];
  if (w.shape[0] != B) fail("x has " + std::to_string(B) + " tasks but w has " + std::to_string(w.shape[0]));
  std::vector<int64_t> xs(x.shape.begin() + 1, x.shape.end()), ws(w.shape.begin() + 1, w.shape.end());
  Geometry g = geometry(nd, xs, ws);
  if (b && b->shape != std::vector<int64_t>{B, g.m})
    fail("bias " + shape_str(b->shape) + " must be [" + std::to_string(B) + "," + std::to_string(g.m) + "]");
  std::vector<int64_t> shape = {B, g.n, g.m};
  shape.insert(shape.end(), g.out_spatial.begin(), g.out_spatial.end());
  Tensor y = make_tensor(ir::DType::Float, shape);
  const int64_t xstep = x.numel() / std::max<int64_t>(B, 1), wstep = w.numel() / std::max<int64_t>(B, 1);
  const int64_t ystep = y.numel() / std::max<int64_t>(B, 1);
  for (int64_t t = 0; t < B; ++t)
    conv_core(g, x.f.data() + t * xstep, w.f.data() + t * wstep, b ? b->f.data() + t * g.m : nullptr,
              y.f.data() + t * ystep);
  Outputs o;
  o.push_back(std::move(y));
  return o;
}

}  // namespace

void register_conv_kernels(Registry& r) {
  r["Conv"] = [](const ir::Node& n, const Inputs& i, int64_t) { return conv(n, i); };
  r["batchconv.BatchedWeightConv"] = [](const ir::Node& n, const Inputs& i, int64_t) { return batched_weight_conv(n, i); };
}

}  // namespace batchconv::interp

#include "conv_node.h"

#include <limits>

#include "ir/conv_window.h"

namespace batchconv::compiler {

ConvShape conv_shape(const LoweringContext& cx, const ir::Node& n, bool batched) {
  const LTensor& x = cx.input(n, 0);
  const LTensor& w = cx.input(n, 1);
  const int lead = batched ? 1 : 0;
  ConvShape s;
  s.batched = batched;
  s.spatial = x.rank() - 2 - lead;
  if (s.spatial < 1 || s.spatial > 2) {
    cx.fail(n, "input of shape " + shape_str(x.shape) + ": only 1-D and 2-D convolutions are supported");
  }
  if (w.rank() != x.rank()) {
    cx.fail(n, "weight of shape " + shape_str(w.shape) + " does not have the rank of the input " +
                   shape_str(x.shape));
  }
  if (batched) {
    s.B = x.shape[0];
    if (w.shape[0] != s.B) {
      cx.fail(n, "weight batch " + std::to_string(w.shape[0]) + " != input batch " + std::to_string(s.B));
    }
  }
  s.N = x.shape[lead];
  s.C = x.shape[lead + 1];
  s.G = n.attr_int("group", 1);
  s.cout = w.shape[lead];
  s.cin_g = w.shape[lead + 1];
  if (s.G < 1 || s.C % s.G != 0 || s.cout % s.G != 0) {
    cx.fail(n, "group=" + std::to_string(s.G) + " does not divide " + std::to_string(s.C) + " input and " +
                   std::to_string(s.cout) + " output channels");
  }
  if (s.C / s.G != s.cin_g) {
    cx.fail(n, "weight expects " + std::to_string(s.cin_g) + " input channels per group, the input has " +
                   std::to_string(s.C / s.G));
  }
  s.cout_g = s.cout / s.G;
  const int sp0 = lead + 2;
  std::vector<int64_t> in(x.shape.begin() + sp0, x.shape.end());
  std::vector<int64_t> k(w.shape.begin() + sp0, w.shape.end());
  ir::Window win;
  try {
    win = ir::conv_window(ir::window_attrs(n, s.spatial), in, k);
  } catch (const ir::WindowError& e) {
    cx.fail(n, e.what());
  }
  const std::vector<int64_t>& strides = win.strides;
  const std::vector<int64_t>& dil = win.dilations;
  std::vector<int64_t> pads = win.pad_begin;
  pads.insert(pads.end(), win.pad_end.begin(), win.pad_end.end());
  const std::vector<int64_t>& out = win.out;
  // Halide order: x is the last ONNX dim.
  s.in_w = in.back();
  s.k_w = k.back();
  s.s_w = strides.back();
  s.d_w = dil.back();
  s.p_w = pads[s.spatial - 1];
  s.out_w = out.back();
  if (s.spatial == 2) {
    s.in_h = in[0];
    s.k_h = k[0];
    s.s_h = strides[0];
    s.d_h = dil[0];
    s.p_h = pads[0];
    s.out_h = out[0];
  }
  const LTensor* bias = cx.optional_input(n, 2);
  if (bias) {
    std::vector<int64_t> want = batched ? std::vector<int64_t>{s.B, s.cout} : std::vector<int64_t>{s.cout};
    if (bias->shape != want) cx.fail(n, "bias of shape " + shape_str(bias->shape) + ", expected " + shape_str(want));
  }
  const int64_t limit = std::numeric_limits<int32_t>::max();
  if (x.numel() > limit || numel({s.B, s.N, s.cout, s.out_h, s.out_w}) > limit) {
    cx.fail(n, "tensors of more than 2^31 elements are not supported (32-bit indexing)");
  }
  return s;
}

Halide::Buffer<float> packed_weights(const ir::Tensor& w, const ConvShape& s, bool lanes, bool pad_co, int block,
                                     const std::string& name) {
  const int co_ = static_cast<int>(s.cout_g) * (pad_co && !lanes ? 2 : 1), ci_ = static_cast<int>(s.cin_g),
            kx_ = static_cast<int>(s.k_w), ky_ = static_cast<int>(s.k_h), g_ = static_cast<int>(s.G),
            b_ = static_cast<int>(s.B);
  Halide::Buffer<float> dense =
      lanes       ? Halide::Buffer<float>({co_, g_, ci_, kx_, ky_, b_}, name)
      : block > 0 ? Halide::Buffer<float>({block, ci_, kx_, ky_, co_ / block, g_, b_}, name)
                  : Halide::Buffer<float>({co_, ci_, kx_, ky_, g_, b_}, name);
  if (static_cast<int64_t>(co_) != s.cout_g) dense.fill(0.0f);
  // ONNX order: (B,) Cout, Cin_g, (KH,) KW, dense.
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t gg = 0; gg < s.G; ++gg)
      for (int64_t o = 0; o < s.cout_g; ++o)
        for (int64_t i = 0; i < s.cin_g; ++i)
          for (int64_t y = 0; y < s.k_h; ++y)
            for (int64_t x = 0; x < s.k_w; ++x) {
              const int64_t src = (((b * s.cout + gg * s.cout_g + o) * s.cin_g + i) * s.k_h + y) * s.k_w + x;
              const float v = w.f[static_cast<size_t>(src)];
              const int O = static_cast<int>(o), I = static_cast<int>(i), X = static_cast<int>(x),
                        Y = static_cast<int>(y), G = static_cast<int>(gg), B = static_cast<int>(b);
              if (lanes) dense(O, G, I, X, Y, B) = v;
              else if (block > 0) dense(O % block, I, X, Y, O / block, G, B) = v;
              else dense(O, I, X, Y, G, B) = v;
            }
  return dense;
}




ChannelScale channel_scale(const LoweringContext& cx, const ir::Node& n, const ConvShape& s) {
  const LTensor& w = cx.input(n, 1);
  const ir::Value* xv = n.inputs[0];
  if (s.batched || s.spatial != 2 || s.G != 1 || s.k_w != 1 || s.k_h != 1 || s.s_w != 1 || s.s_h != 1 ||
      s.p_w != 0 || s.p_h != 0 || s.out_w != s.in_w || s.out_h != s.in_h || !w.constant || !w.constant->is_float() ||
      static_cast<int64_t>(w.constant->f.size()) != w.numel() || cx.options().rows_family_only || s.cout_g >= s.out_w * s.out_h || !xv || !xv->producer)
    return {};
  const ir::Node& mul = *xv->producer;
  if (!(mul.domain.empty() || mul.domain == "ai.onnx") || mul.op_type != "Mul" || mul.inputs.size() != 2 ||
      cx.is_fused(&mul) || !mul.inputs[0] || !mul.inputs[1] || !cx.has(mul.inputs[0]) || !cx.has(mul.inputs[1]))
    return {};
  for (int k = 0; k < 2; ++k) {
    const LTensor& a = cx.at(mul.inputs[k]);
    const LTensor& sc = cx.at(mul.inputs[1 - k]);
    const std::vector<int64_t> want_n = {s.N, s.C, 1, 1}, want_1 = {1, s.C, 1, 1};
    // With a run-time batch, a batched scale (one per image) holds 1 in its
    // static shape; an unbatched one is shared.
    if (a.shape == cx.input(n, 0).shape && a.cheap && !a.constant && (sc.shape == want_n || sc.shape == want_1) &&
        (!sc.batched || a.batched))
      return {&a, &sc};
  }
  return {};
}

}  // namespace batchconv::compiler

#include "conv_plan.h"

#include "validate.h"

namespace batchconv::detail {

ConvPlan plan_conv(const char* op, const TensorView& x, int x_lead, const TensorView& w,
                   int w_lead, const ConvDesc& d) {
  const char* x_layout = x_lead ? "(B, N, Cin, W) or (B, N, Cin, H, W)" : "(N, Cin, W) or (N, Cin, H, W)";
  check_tensor(op, "x", x, x_lead + 3, x_lead + 4, x_layout);
  ConvPlan p;
  p.spatial = x.rank() - x_lead - 2;
  const int w_rank = w_lead + 2 + p.spatial;
  const char* w_layout = w_lead ? (p.spatial == 2 ? "(B, Cout, Cin/groups, KH, KW) for a 2-D x"
                                                  : "(B, Cout, Cin/groups, KW) for a 1-D x")
                                : (p.spatial == 2 ? "(Cout, Cin/groups, KH, KW) for a 2-D x"
                                                  : "(Cout, Cin/groups, KW) for a 1-D x");
  check_tensor(op, "w", w, w_rank, w_rank, w_layout);
  check_desc(op, d, p.spatial);

  p.n = x.shape[x_lead];
  p.cin = x.shape[x_lead + 1];
  p.cout = w.shape[w_lead];
  p.groups = d.groups;
  check_groups(op, x, p.cin, w, p.cout, w.shape[w_lead + 1], d.groups);
  p.cin_g = p.cin / p.groups;
  p.cout_g = p.cout / p.groups;
  if (x_lead && w_lead && x.shape[0] != w.shape[0]) {
    std::vector<int64_t> expected = w.shape;
    expected[0] = x.shape[0];
    check_shape(op, "w", w, expected,
                "x " + shape_string(x.shape) + " has B=" + std::to_string(x.shape[0]) +
                    " and needs B=" + std::to_string(x.shape[0]) + " filter banks");
  }
  p.batch = w_lead ? w.shape[0] : (x_lead ? x.shape[0] : 1);

  p.in.assign(x.shape.end() - p.spatial, x.shape.end());
  p.kernel.assign(w.shape.end() - p.spatial, w.shape.end());
  p.out = conv_spatial_out(op, x, p.in, p.kernel, d);
  const int ix = p.spatial - 1;  // index of the W axis in the descriptor
  p.stride_x = d.stride[ix];
  p.dilation_x = d.dilation[ix];
  p.pad_x = d.pad_begin[ix];
  if (p.spatial == 2) {
    p.stride_y = d.stride[0];
    p.dilation_y = d.dilation[0];
    p.pad_y = d.pad_begin[0];
  }
  p.relu = d.activation == Activation::ReLU;
  return p;
}

void check_bias(const char* op, const TensorView* bias, const std::vector<int64_t>& expected,
                const char* layout) {
  if (!bias) return;
  const int r = static_cast<int>(expected.size());
  check_tensor(op, "bias", *bias, r, r, layout);
  check_shape(op, "bias", *bias, expected, std::string("w gives ") + layout);
}

std::vector<Dim> activation_dims(const TensorView& t, int lead, int spatial, int64_t c_g,
                                 int64_t groups) {
  const int r = t.rank();
  std::vector<Dim> dims;
  dims.push_back({t.shape[r - 1], t.stride(r - 1)});
  if (spatial == 2) dims.push_back({t.shape[r - 2], t.stride(r - 2)});
  else dims.push_back({1, 0});
  const int64_t sc = t.stride(lead + 1);
  dims.push_back({c_g, sc});
  dims.push_back({groups, c_g * sc});
  dims.push_back({t.shape[lead], t.stride(lead)});
  if (lead) dims.push_back({t.shape[0], t.stride(0)});
  return dims;
}

std::vector<Dim> weight_dims(const TensorView& w, int lead, int spatial, int64_t cout_g,
                             int64_t groups) {
  const int r = w.rank();
  std::vector<Dim> dims;
  dims.push_back({w.shape[r - 1], w.stride(r - 1)});
  if (spatial == 2) dims.push_back({w.shape[r - 2], w.stride(r - 2)});
  else dims.push_back({1, 0});
  dims.push_back({w.shape[lead + 1], w.stride(lead + 1)});
  const int64_t so = w.stride(lead);
  dims.push_back({cout_g, so});
  dims.push_back({groups, cout_g * so});
  if (lead) dims.push_back({w.shape[0], w.stride(0)});
  return dims;
}

}  // namespace batchconv::detail

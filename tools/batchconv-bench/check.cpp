#include "check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/reference.h"
#include "timing.h"

namespace bcbench {

using batchconv::TensorView;

std::vector<float> gather_box(const float* data, const std::vector<int64_t>& shape, const Box& b) {
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> stride(r, 1);
  for (int i = r - 2; i >= 0; --i) stride[i] = stride[i + 1] * shape[i + 1];
  std::vector<float> out(static_cast<size_t>(numel(b.extent)));
  if (out.empty()) return out;
  std::vector<int64_t> idx(r, 0);
  const int64_t row = b.extent[r - 1];
  for (size_t o = 0; o < out.size(); o += row) {
    int64_t off = 0;
    for (int i = 0; i < r; ++i) off += (b.begin[i] + idx[i]) * stride[i];
    std::copy(data + off, data + off + row, out.begin() + o);
    for (int i = r - 2; i >= 0; --i) {  // odometer over all dims but the last
      if (++idx[i] < b.extent[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

namespace {

Box full_box(const std::vector<int64_t>& s) { return Box{std::vector<int64_t>(s.size(), 0), s}; }
Box narrow(Box b, int dim, int64_t begin, int64_t extent) {
  b.begin[dim] = begin;
  b.extent[dim] = extent;
  return b;
}

struct Cut {  // one sub-problem: boxes of x, w, bias and y
  Box x, w, bias, y;
  std::string label;
};

std::vector<double> run_reference(const Problem& p, const Cut& c, std::vector<int64_t>* yshape) {
  std::vector<float> xs = gather_box(p.x.data(), p.spec.x_shape, c.x);
  std::vector<float> ws = gather_box(p.w.data(), p.spec.w_shape, c.w);
  std::vector<float> bs;
  TensorView x(xs.data(), c.x.extent), w(ws.data(), c.w.extent), b;
  if (p.spec.bias) {
    bs = gather_box(p.b.data(), p.bv.shape, c.bias);
    b = TensorView(bs.data(), c.bias.extent);
  }
  const TensorView* bp = p.spec.bias ? &b : nullptr;
  switch (p.spec.op) {
    case Op::GroupedConv: return batchconv::ref::grouped_conv(x, w, bp, p.spec.desc, yshape);
    case Op::BatchedWeightConv: return batchconv::ref::batched_weight_conv(x, w, bp, p.spec.desc, yshape);
    case Op::BroadcastInputConv:
      return batchconv::ref::broadcast_input_conv(x, w, bp, p.spec.desc, p.spec.layout, yshape);
    case Op::BatchedLinear:
      return batchconv::ref::batched_linear(x, w, bp, p.spec.desc.activation, yshape);
  }
  return {};
}

// Cuts along the "row" axis (images, or linear rows) of the problem, with
// `k` rows per cut, at the start of slice 0 and at the end of slice B-1.
std::vector<Cut> make_cuts(const Problem& p, bool full, double sample_flops) {
  const auto& s = p.spec;
  Cut whole{full_box(s.x_shape), full_box(s.w_shape), full_box(p.spec.bias ? p.bv.shape : std::vector<int64_t>{}),
            full_box(p.y_shape), "full"};
  if (full) return {whole};
  const bool sliced = s.op == Op::BatchedWeightConv || s.op == Op::BatchedLinear;  // cut b too
  const int xrow = (s.op == Op::BatchedWeightConv || (s.op == Op::BatchedLinear && !p.shared_x)) ? 1 : 0;
  int yrow = s.op == Op::BatchedWeightConv || s.op == Op::BatchedLinear ? 1 : 0;
  if (s.op == Op::BroadcastInputConv && s.layout == batchconv::BroadcastLayout::Batched) yrow = 1;
  int64_t rows = s.x_shape[xrow];
  const double bfactor = sliced ? static_cast<double>(p.batch) : 1.0;
  double per_row = p.flops / bfactor / static_cast<double>(rows);
  int xaxis = xrow, yaxis = yrow;
  // A pointwise conv of few images: cut columns of the (last) spatial axis instead.
  const bool conv = s.op != Op::BatchedLinear;
  if (conv && p.slice.pointwise() && rows < 4 && per_row > sample_flops) {
    xaxis = static_cast<int>(s.x_shape.size()) - 1;
    yaxis = static_cast<int>(p.y_shape.size()) - 1;
    rows = s.x_shape[xaxis];
    per_row = p.flops / bfactor / static_cast<double>(rows);
  }
  const int64_t k = std::clamp<int64_t>(static_cast<int64_t>(sample_flops / per_row), 1, rows);
  std::vector<Cut> cuts;
  for (int end = 0; end < 2; ++end) {
    const int64_t b = end ? p.batch - 1 : 0, r0 = end ? rows - k : 0;
    Cut c = whole;
    c.x = narrow(c.x, xaxis, r0, k);
    c.y = narrow(c.y, yaxis, r0, k);
    if (sliced) {
      if (!(s.op == Op::BatchedLinear && p.shared_x)) c.x = narrow(c.x, 0, b, 1);
      c.w = narrow(c.w, 0, b, 1);
      if (s.bias) c.bias = narrow(c.bias, 0, b, 1);
      c.y = narrow(c.y, 0, b, 1);
    }
    c.label = (sliced ? "b=" + std::to_string(b) + " " : std::string()) + (xaxis == xrow ? "rows " : "cols ") +
              std::to_string(r0) + ".." + std::to_string(r0 + k - 1);
    cuts.push_back(c);
    if (k == rows && (!sliced || p.batch == 1)) break;  // the first cut already covers everything
  }
  return cuts;
}

}  // namespace

CheckPlan plan_check(const Problem& p, CheckMode mode, double sample_flops) {
  CheckPlan plan;
  if (mode == CheckMode::None) {
    plan.how = "none";
    return plan;
  }
  const bool full = mode == CheckMode::Full || (mode == CheckMode::Auto && p.flops <= 10 * sample_flops);
  const double t0 = now_seconds();
  for (const Cut& c : make_cuts(p, full, sample_flops)) {
    CheckPlan::Sample smp;
    smp.ybox = c.y;
    smp.ref = run_reference(p, c, &smp.y_shape);
    if (smp.y_shape != c.y.extent)
      throw std::logic_error("check: reference output shape " + shape_str(smp.y_shape) +
                             " differs from the expected box " + shape_str(c.y.extent));
    plan.samples.push_back(std::move(smp));
    plan.how += (plan.how.empty() ? "" : "; ") + c.label;
  }
  if (!full) plan.how = "sampled: " + plan.how;
  plan.ref_seconds = now_seconds() - t0;
  return plan;
}

double check_output(const Problem& p, const CheckPlan& plan) {
  double worst = 0;
  for (const auto& s : plan.samples) {
    std::vector<float> y = gather_box(p.y.data(), p.y_shape, s.ybox);
    for (float v : y)
      if (std::isnan(v)) return std::numeric_limits<double>::infinity();
    TensorView yv(y.data(), s.y_shape);
    worst = std::max(worst, batchconv::ref::max_rel_error(yv, s.ref));
  }
  return worst;
}

}  // namespace bcbench

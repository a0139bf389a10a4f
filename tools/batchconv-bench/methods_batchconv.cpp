// batchconv's own ops, and the naive formulations run through batchconv's
// grouped_conv: a loop of per-slice convs, and repeat + grouped conv.
#include <functional>

#include "methods.h"
#include "parallel.h"

namespace bcbench {
namespace {

using batchconv::TensorView;

// y-slice view of a (N, B*Cout, ...) concatenated output for bank b.
TensorView concat_slice(const Problem& p, int64_t b) {
  const ConvGeom& g = p.slice;
  const int64_t plane = g.oh * g.ow;
  std::vector<int64_t> shape = {g.n, g.cout}, strides = {p.batch * g.cout * plane, plane};
  if (!g.one_d) shape.push_back(g.oh), strides.push_back(g.ow);
  shape.push_back(g.ow), strides.push_back(1);
  return TensorView(p.y.data() + b * g.cout * plane, shape, strides);
}

std::vector<int64_t> tail(const std::vector<int64_t>& s) { return {s.begin() + 1, s.end()}; }

class Direct : public Method {
 public:
  Direct() {
    name = "batchconv";
    family = Family::Batchconv;
  }
  void run(Problem& p) override {
    const auto& s = p.spec;
    switch (s.op) {
      case Op::GroupedConv: batchconv::grouped_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc); break;
      case Op::BatchedWeightConv:
        batchconv::batched_weight_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc);
        break;
      case Op::BroadcastInputConv:
        batchconv::broadcast_input_conv(p.xv, p.wv, p.bias_view(), p.yv, s.desc, s.layout);
        break;
      case Op::BatchedLinear:
        batchconv::batched_linear(p.xv, p.wv, p.bias_view(), p.yv, s.desc.activation);
        impl = "variant: " + batchconv::last_linear_kernel();
        break;
    }
  }
};

// batched_linear with one kernel variant forced (the chooser's alternatives).
class LinearVariant : public Method {
 public:
  LinearVariant(batchconv::LinearKernel k, const char* id) : kernel_(k) {
    name = std::string("batchconv:") + id;
    family = Family::Batchconv;
  }
  void run(Problem& p) override {
    batchconv::set_linear_kernel(kernel_);
    try {
      batchconv::batched_linear(p.xv, p.wv, p.bias_view(), p.yv, p.spec.desc.activation);
    } catch (...) {
      batchconv::set_linear_kernel(batchconv::LinearKernel::Auto);
      throw;
    }
    batchconv::set_linear_kernel(batchconv::LinearKernel::Auto);
  }

 private:
  batchconv::LinearKernel kernel_;
};

// Dense conv: broadcast-input with the Concatenated layout and groups = 1 is a
// plain conv of the shared x with the B filter banks stacked, w (B*Cout, ...).
class Dense : public Method {
 public:
  Dense() {
    name = "batchconv:dense";
    family = Family::Batchconv;
  }
  void setup(Problem& p) override {
    auto ws = tail(p.spec.w_shape);
    ws[0] *= p.batch;
    w_ = TensorView(p.w.data(), ws);
    if (p.spec.bias) b_ = TensorView(p.b.data(), {p.batch * p.slice.cout});
  }
  void run(Problem& p) override {
    batchconv::grouped_conv(p.xv, w_, p.spec.bias ? &b_ : nullptr, p.yv, p.spec.desc);
  }

 private:
  TensorView w_, b_;
};

// Loop over the batch: one grouped_conv per slice b.
class Loop : public Method {
 public:
  Loop() {
    name = "batchconv:loop";
    family = Family::Naive;
  }
  void run(Problem& p) override {
    const auto& s = p.spec;
    const auto ws = tail(s.w_shape);
    const int64_t wstride = numel(ws), cout = ws[0];
    const bool bw = s.op == Op::BatchedWeightConv;
    const auto xs = bw ? tail(s.x_shape) : s.x_shape;
    const int64_t xstride = bw ? numel(xs) : 0;
    const bool batched_y = bw || s.layout == batchconv::BroadcastLayout::Batched;
    const int64_t ystride = numel(tail(p.y_shape));
    for (int64_t b = 0; b < p.batch; ++b) {
      TensorView x(p.x.data() + b * xstride, xs), w(p.w.data() + b * wstride, ws);
      TensorView bias(s.bias ? p.b.data() + b * cout : nullptr, {cout});
      TensorView y = batched_y ? TensorView(p.y.data() + b * ystride, tail(p.y_shape)) : concat_slice(p, b);
      batchconv::grouped_conv(x, w, s.bias ? &bias : nullptr, y, s.desc);
    }
  }
};

// What seed 1's author wrote: x.repeat(1, B, 1, 1) materialised, then one
// grouped conv with B*groups groups. Output is the Concatenated layout.
class RepeatGrouped : public Method {
 public:
  RepeatGrouped() {
    name = "batchconv:repeat+grouped";
    family = Family::Naive;
  }
  void setup(Problem& p) override {
    const ConvGeom& g = p.slice;
    inner_ = g.cin * g.h * g.w;
    rep_ = Buffer(static_cast<size_t>(g.n * p.batch * inner_));
    auto xs = p.spec.x_shape;
    xs[1] *= p.batch;
    xr_ = TensorView(rep_.data(), xs);
    auto ws = tail(p.spec.w_shape);
    ws[0] *= p.batch;
    w_ = TensorView(p.w.data(), ws);
    if (p.spec.bias) b_ = TensorView(p.b.data(), {p.batch * g.cout});
    desc_ = p.spec.desc;
    desc_.groups *= static_cast<int>(p.batch);
  }
  void run(Problem& p) override {
    repeat1(p.x.data(), rep_.data(), p.slice.n, p.batch, inner_, bench_threads());
    batchconv::grouped_conv(xr_, w_, p.spec.bias ? &b_ : nullptr, p.yv, desc_);
  }

 private:
  int64_t inner_ = 0;
  Buffer rep_;
  TensorView xr_, w_, b_;
  batchconv::ConvDesc desc_;
};

// The op with one schedule family forced (NCHW tensors, the chooser off).
class Forced : public Method {
 public:
  explicit Forced(batchconv::ScheduleFamily f) : family_(f) {
    name = f == batchconv::ScheduleFamily::Rows       ? "batchconv:rows"
           : f == batchconv::ScheduleFamily::Channels ? "batchconv:channels"
                                                      : "batchconv:lanes";
    family = Family::Batchconv;
  }
  void run(Problem& p) override {
    batchconv::set_schedule_family(family_);
    direct_.run(p);
    batchconv::set_schedule_family(batchconv::ScheduleFamily::Auto);
  }

 private:
  batchconv::ScheduleFamily family_;
  Direct direct_;
};

// x and y channels-last (NHWC, PyTorch's channels_last) and the weights
// packed once: the conv alone, like oneDNN's blocked-layout row. The
// reorders from and to problem's NCHW tensors are in setup and finish.
class ChannelsLast : public Method {
 public:
  ChannelsLast() {
    name = "batchconv:nhwc(conv-only)";
    family = Family::Batchconv;
    full_op = false;
  }
  void setup(Problem& p) override {
    const auto& s = p.spec;
    const int xc = s.op == Op::BatchedWeightConv ? 2 : 1;
    const bool batched_y = s.op == Op::BatchedWeightConv ||
                           (s.op == Op::BroadcastInputConv && s.layout == batchconv::BroadcastLayout::Batched);
    xb_ = Buffer(p.x.size());
    yb_ = Buffer(p.y.size());
    x_ = batchconv::channels_last(xb_.data(), s.x_shape, xc);
    y_ = batchconv::channels_last(yb_.data(), p.y_shape, batched_y ? 2 : 1);
    batchconv::reorder(p.xv, x_);
    packed_ = batchconv::PackedWeights(p.wv, s.desc.groups, s.op != Op::GroupedConv);
  }
  void run(Problem& p) override {
    const auto& s = p.spec;
    switch (s.op) {
      case Op::GroupedConv: batchconv::grouped_conv(x_, packed_, p.bias_view(), y_, s.desc); break;
      case Op::BatchedWeightConv:
        batchconv::batched_weight_conv(x_, packed_, p.bias_view(), y_, s.desc);
        break;
      case Op::BroadcastInputConv:
        batchconv::broadcast_input_conv(x_, packed_, p.bias_view(), y_, s.desc, s.layout);
        break;
      case Op::BatchedLinear: break;
    }
    impl = "family: " + batchconv::last_conv_family();
  }
  void finish(Problem& p) override { batchconv::reorder(y_, p.yv); }

 private:
  Buffer xb_, yb_;
  TensorView x_, y_;
  batchconv::PackedWeights packed_;
};

}  // namespace

void add_batchconv_methods(const Problem& p, MethodList* out) {
  auto add = [&](std::unique_ptr<Method> m, const std::string& what) {
    m->what = what;
    out->push_back(std::move(m));
  };
  const Op op = p.spec.op;
  add(std::make_unique<Direct>(), std::string("batchconv::") + op_name(op) + " on the NCHW tensors");
  if (op == Op::BroadcastInputConv && p.spec.layout == batchconv::BroadcastLayout::Concatenated) {
    if (p.spec.desc.groups == 1)
      add(std::make_unique<Dense>(), "batchconv::grouped_conv, groups=1, x shared, w as (B*Cout, Cin, ...)");
    add(std::make_unique<RepeatGrouped>(),
        "x.repeat(1,B,1,1) materialised, then batchconv::grouped_conv with groups=B*g");
  }
  if (op == Op::BatchedLinear) {
    add(std::make_unique<LinearVariant>(batchconv::LinearKernel::InPlace, "in_place"),
        "batched_linear forced to read x and w in place");
    add(std::make_unique<LinearVariant>(batchconv::LinearKernel::WeightPanels, "weight_panels"),
        "batched_linear forced to copy w's column tiles into panels per task");
    add(std::make_unique<LinearVariant>(batchconv::LinearKernel::AllPanels, "all_panels"),
        "batched_linear forced to copy w's column tiles and x's rows into panels per task");
  }
  if (op == Op::BatchedWeightConv || op == Op::BroadcastInputConv)
    add(std::make_unique<Loop>(), "loop over b of batchconv::grouped_conv on slice b (zero-copy)");
  if (op != Op::BatchedLinear) {
    add(std::make_unique<Forced>(batchconv::ScheduleFamily::Rows),
        "the op on the NCHW tensors, rows family forced (NCHW rows in vectors)");
    add(std::make_unique<Forced>(batchconv::ScheduleFamily::Channels),
        "the op on the NCHW tensors, channels family forced (output channels in vectors)");
    if (op != Op::BroadcastInputConv)
      add(std::make_unique<Forced>(batchconv::ScheduleFamily::Lanes),
          "the op on the NCHW tensors, lanes family forced ((channel, group) lanes; rows where it does not fit)");
    add(std::make_unique<ChannelsLast>(),
        "the op on channels-last (NHWC) x and y with PackedWeights; reorders not timed");
  }
}

}  // namespace bcbench

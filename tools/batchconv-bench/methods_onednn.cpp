// oneDNN 2.6 peers on the same NCHW memory, and the naive formulations run
// through oneDNN (repeat + grouped conv; a loop of per-slice convs).
#include <cstring>

#include "methods.h"
#include "onednn_conv.h"
#include "parallel.h"

namespace bcbench {
namespace {

using Layout = OnednnConv::Layout;

int64_t y_slice_elems(const ConvGeom& g) { return g.n * g.cout * g.oh * g.ow; }
const float* bias_ptr(const Problem& p, int64_t offset = 0) {
  return p.spec.bias ? p.b.data() + offset : nullptr;
}

// One conv straight on problem.x / w / bias / y (grouped conv, or the dense
// form of broadcast-input conv where w is read as (B*Cout, Cin, KH, KW)).
class Plain : public Method {
 public:
  explicit Plain(ConvGeom g) : g_(g) {}
  void setup(Problem& p) override {
    conv_ = std::make_unique<OnednnConv>(g_, p.spec.bias, Layout::Plain);
    impl = conv_->impl();
  }
  void run(Problem& p) override { conv_->execute(p.x.data(), p.w.data(), bias_ptr(p), p.y.data()); }

 protected:
  ConvGeom g_;
  std::unique_ptr<OnednnConv> conv_;
};

// oneDNN's preferred (blocked) layouts via format_tag::any; only the conv is
// timed, the reorders of x, w (setup) and y (finish) are not. With batch > 1
// it is the trick's grouped conv (groups = B*g) on the transposed x: what
// oneDNN's fastest conv does for a batched-weight problem once its operands
// are already blocked; the transposes are not timed either.
class AnyLayout : public Method {
 public:
  explicit AnyLayout(ConvGeom slice, int64_t batch = 1) : s_(slice), big_(slice), batch_(batch) {
    full_op = false;
    big_.cin *= batch, big_.cout *= batch, big_.groups *= batch;
  }
  void setup(Problem& p) override {
    conv_ = std::make_unique<OnednnConv>(big_, p.spec.bias, Layout::Any);
    impl = conv_->impl();
    src_ = Buffer(conv_->src_desc().get_size() / 4 + 1);
    wei_ = Buffer(conv_->weights_desc().get_size() / 4 + 1);
    dst_ = Buffer(conv_->dst_desc().get_size() / 4 + 1);
    const float* x = p.x.data();
    Buffer plain;
    if (batch_ > 1) {
      plain = Buffer(static_cast<size_t>(big_.n * big_.cin * big_.h * big_.w));
      transpose01(p.x.data(), plain.data(), batch_, s_.n, s_.cin * s_.h * s_.w, bench_threads());
      x = plain.data();
    }
    onednn_reorder(conv_->plain_src(), x, conv_->src_desc(), src_.data());
    onednn_reorder(conv_->plain_weights(), p.w.data(), conv_->weights_desc(), wei_.data());
  }
  void run(Problem& p) override { conv_->execute(src_.data(), wei_.data(), bias_ptr(p), dst_.data()); }
  void finish(Problem& p) override {
    if (batch_ == 1) {
      onednn_reorder(conv_->dst_desc(), dst_.data(), conv_->plain_dst(), p.y.data());
      return;
    }
    Buffer plain(static_cast<size_t>(y_slice_elems(big_)));
    onednn_reorder(conv_->dst_desc(), dst_.data(), conv_->plain_dst(), plain.data());
    transpose01(plain.data(), p.y.data(), s_.n, batch_, s_.cout * s_.oh * s_.ow, bench_threads());
  }

 private:
  ConvGeom s_, big_;
  int64_t batch_;
  std::unique_ptr<OnednnConv> conv_;
  Buffer src_, wei_, dst_;
};

// Loop over b: one primitive, executed on slice b of x (or the shared x),
// w[b], bias[b], y[b] (strided when y is the Concatenated layout).
class Loop : public Method {
 public:
  Loop(ConvGeom g, bool x_batched, bool y_concat) : g_(g), x_batched_(x_batched), y_concat_(y_concat) {}
  void setup(Problem& p) override {
    std::vector<int64_t> strides;
    const int64_t plane = g_.oh * g_.ow;
    (void)plane;
    conv_ = std::make_unique<OnednnConv>(g_, p.spec.bias, Layout::Plain);
    impl = conv_->impl();
    // Slice b of a Concatenated y is strided unless N = 1; oneDNN would run a
    // strided dst through its slow reference kernel, so convolve into a
    // temporary and copy it into place (what torch.cat does).
    if (y_concat_ && g_.n > 1) tmp_ = Buffer(static_cast<size_t>(y_slice_elems(g_)));
  }
  void run(Problem& p) override {
    const int64_t xs = x_batched_ ? g_.n * g_.cin * g_.h * g_.w : 0;
    const int64_t ws = g_.cout * (g_.cin / g_.groups) * g_.kh * g_.kw;
    const int64_t ys = y_concat_ ? g_.cout * g_.oh * g_.ow : y_slice_elems(g_);
    const int64_t plane = g_.cout * g_.oh * g_.ow;
    for (int64_t b = 0; b < p.batch; ++b) {
      float* dst = tmp_.size() ? tmp_.data() : p.y.data() + b * ys;
      conv_->execute(p.x.data() + b * xs, p.w.data() + b * ws, bias_ptr(p, b * g_.cout), dst);
      if (tmp_.size())  // tmp (N, Cout, ...) -> y[:, b*Cout:(b+1)*Cout]
        parallel_ranges(g_.n, copy_threads(g_.n * plane, bench_threads()), [&](int64_t lo, int64_t hi) {
          for (int64_t n = lo; n < hi; ++n)
            std::memcpy(p.y.data() + (n * p.batch + b) * plane, dst + n * plane, plane * sizeof(float));
        });
    }
  }

 private:
  ConvGeom g_;
  bool x_batched_, y_concat_;
  std::unique_ptr<OnednnConv> conv_;
  Buffer tmp_;
};

// Seed 2/3's grouped-conv trick with the correct transpose:
// x (B, N, C, H, W) -> (N, B*C, H, W); conv with groups = B*g and w read as
// (B*Cout, Cin/g, KH, KW); y (N, B*Cout, H', W') -> (B, N, Cout, H', W').
// conv_only: the two transposes happen in setup/finish, untimed.
class GroupedTrick : public Method {
 public:
  GroupedTrick(ConvGeom slice, int64_t batch, bool conv_only)
      : s_(slice), batch_(batch), conv_only_(conv_only) {
    full_op = !conv_only;
    big_ = slice;
    big_.cin *= batch, big_.cout *= batch, big_.groups *= batch;
  }
  void setup(Problem& p) override {
    conv_ = std::make_unique<OnednnConv>(big_, p.spec.bias, Layout::Plain);
    impl = conv_->impl();
    xt_ = Buffer(static_cast<size_t>(big_.n * big_.cin * big_.h * big_.w));
    yt_ = Buffer(static_cast<size_t>(y_slice_elems(big_)));
    if (conv_only_) transpose_in(p);
  }
  void run(Problem& p) override {
    if (!conv_only_) transpose_in(p);
    conv_->execute(xt_.data(), p.w.data(), bias_ptr(p), yt_.data());
    if (!conv_only_) transpose_out(p);
  }
  void finish(Problem& p) override {
    if (conv_only_) transpose_out(p);
  }

 private:
  void transpose_in(Problem& p) {
    transpose01(p.x.data(), xt_.data(), batch_, s_.n, s_.cin * s_.h * s_.w, bench_threads());
  }
  void transpose_out(Problem& p) {
    transpose01(yt_.data(), p.y.data(), s_.n, batch_, s_.cout * s_.oh * s_.ow, bench_threads());
  }
  ConvGeom s_, big_;
  int64_t batch_;
  bool conv_only_;
  std::unique_ptr<OnednnConv> conv_;
  Buffer xt_, yt_;
};

// Broadcast-input via x.repeat(1, B, 1, 1) materialised + grouped conv
// (Concatenated layout), or the dense conv followed by a transpose to the
// Batched layout (dense_transpose).
class RepeatOrDenseT : public Method {
 public:
  RepeatOrDenseT(ConvGeom slice, int64_t batch, bool dense_transpose)
      : s_(slice), batch_(batch), dense_t_(dense_transpose) {
    big_ = slice;
    big_.cout *= batch;
    if (!dense_t_) big_.cin *= batch, big_.groups *= batch;
  }
  void setup(Problem& p) override {
    conv_ = std::make_unique<OnednnConv>(big_, p.spec.bias, Layout::Plain);
    impl = conv_->impl();
    if (dense_t_) tmp_ = Buffer(static_cast<size_t>(y_slice_elems(big_)));
    else tmp_ = Buffer(static_cast<size_t>(big_.n * big_.cin * big_.h * big_.w));
  }
  void run(Problem& p) override {
    if (dense_t_) {
      conv_->execute(p.x.data(), p.w.data(), bias_ptr(p), tmp_.data());
      transpose01(tmp_.data(), p.y.data(), s_.n, batch_, s_.cout * s_.oh * s_.ow, bench_threads());
    } else {
      repeat1(p.x.data(), tmp_.data(), s_.n, batch_, s_.cin * s_.h * s_.w, bench_threads());
      conv_->execute(tmp_.data(), p.w.data(), bias_ptr(p), p.y.data());
    }
  }

 private:
  ConvGeom s_, big_;
  int64_t batch_;
  bool dense_t_;
  std::unique_ptr<OnednnConv> conv_;
  Buffer tmp_;
};

}  // namespace

void add_onednn_methods(const Problem& p, MethodList* out) {
  auto add = [&](std::unique_ptr<Method> m, const std::string& name, Family f, const std::string& what) {
    m->name = name;
    m->family = f;
    m->what = what;
    out->push_back(std::move(m));
  };
  const ConvGeom& g = p.slice;
  switch (p.spec.op) {
    case Op::GroupedConv: {
      auto plain = std::make_unique<Plain>(g);
      add(std::move(plain), "onednn:nchw", Family::Onednn, "oneDNN conv, NCHW src/dst, (g)oihw weights");
      add(std::make_unique<AnyLayout>(g), "onednn:any(conv-only)", Family::Onednn,
          "oneDNN conv in its preferred blocked layouts (format_tag::any); reorders not timed");
      break;
    }
    case Op::BatchedWeightConv:
      add(std::make_unique<GroupedTrick>(g, p.batch, false), "onednn:grouped-trick", Family::Onednn,
          "transpose x to (N,B*C,H,W), oneDNN grouped conv (groups=B*g), transpose y back");
      add(std::make_unique<GroupedTrick>(g, p.batch, true), "onednn:grouped-trick(conv-only)",
          Family::Onednn, "the grouped conv of the trick alone; both transposes not timed");
      add(std::make_unique<Loop>(g, true, false), "onednn:loop", Family::Onednn,
          p.batch == 1 ? "oneDNN NCHW conv on the one slice (B = 1: a plain conv, zero-copy)"
                       : "loop over b of a oneDNN NCHW conv on slice b (zero-copy)");
      if (p.batch == 1)  // the whole op is one plain conv: also show oneDNN's best layout
        add(std::make_unique<AnyLayout>(g), "onednn:any(conv-only)", Family::Onednn,
            "oneDNN conv in its preferred blocked layouts (format_tag::any); reorders not timed");
      else
        add(std::make_unique<AnyLayout>(g, p.batch), "onednn:grouped-trick-any(conv-only)",
            Family::Onednn,
            "the trick's grouped conv in oneDNN's preferred blocked layouts; transposes, reorders not timed");
      break;
    case Op::BroadcastInputConv: {
      const bool concat = p.spec.layout == batchconv::BroadcastLayout::Concatenated;
      if (g.groups == 1) {
        ConvGeom dense = g;
        dense.cout *= p.batch;
        if (concat)
          add(std::make_unique<Plain>(dense), "onednn:dense", Family::Onednn,
              "oneDNN dense conv of the shared x with w as (B*Cout, Cin, KH, KW)");
        else
          add(std::make_unique<RepeatOrDenseT>(g, p.batch, true), "onednn:dense+transpose",
              Family::Onednn, "oneDNN dense conv to (N,B*Cout,...), then transpose to (B,N,Cout,...)");
      }
      if (concat)
        add(std::make_unique<RepeatOrDenseT>(g, p.batch, false), "onednn:repeat+grouped", Family::Naive,
            "x.repeat(1,B,1,1) materialised, then oneDNN grouped conv with groups=B*g");
      add(std::make_unique<Loop>(g, false, concat), "onednn:loop", Family::Onednn,
          concat && g.n > 1 ? "loop over b of a oneDNN conv of the shared x with w[b] into a temporary, "
                              "copied into y's channel slice b"
                            : "loop over b of a oneDNN conv of the shared x with w[b] (zero-copy)");
      break;
    }
    case Op::BatchedLinear: break;
  }
}

MethodList make_methods(const Problem& p) {
  MethodList m;
  add_batchconv_methods(p, &m);
#ifdef BCBENCH_HAVE_DEVICE
  add_device_methods(p, &m);
#endif
  if (p.spec.op == Op::BatchedLinear) add_linear_methods(p, &m);
  else add_onednn_methods(p, &m);
  return m;
}

}  // namespace bcbench

#include "problem.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace bcbench {

using batchconv::TensorView;

const char* op_name(Op op) {
  switch (op) {
    case Op::GroupedConv: return "grouped_conv";
    case Op::BatchedWeightConv: return "batched_weight_conv";
    case Op::BroadcastInputConv: return "broadcast_input_conv";
    case Op::BatchedLinear: return "batched_linear";
  }
  return "?";
}

bool parse_op(const std::string& s, Op* op) {
  if (s == "grouped_conv" || s == "gconv" || s == "conv") *op = Op::GroupedConv;
  else if (s == "batched_weight_conv" || s == "bwconv") *op = Op::BatchedWeightConv;
  else if (s == "broadcast_input_conv" || s == "biconv") *op = Op::BroadcastInputConv;
  else if (s == "batched_linear" || s == "blinear" || s == "linear") *op = Op::BatchedLinear;
  else return false;
  return true;
}

Buffer::Buffer(size_t n) : n_(n) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, std::max<size_t>(n, 1) * sizeof(float)) != 0) throw std::bad_alloc();
  p_ = static_cast<float*>(p);
  std::memset(p_, 0, n * sizeof(float));  // first touch, outside any timing
}
Buffer::~Buffer() { std::free(p_); }
Buffer::Buffer(Buffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
Buffer& Buffer::operator=(Buffer&& o) noexcept {
  std::swap(p_, o.p_);
  std::swap(n_, o.n_);
  return *this;
}

bool ConvGeom::pointwise() const {
  return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0;
}

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "x" : "") + std::to_string(s[i]);
  return r;
}

void fill_random(float* p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = static_cast<float>(static_cast<int64_t>(s >> 40) - (1 << 23)) * (1.0f / (1 << 23));
  }
}

void poison_output(Problem& p) { std::memset(p.y.data(), 0xFF, p.y.size() * sizeof(float)); }

namespace {

// x (N, C, [H,] W) and w (Cout, C/g, [KH,] KW): the conv geometry in 2-D terms.
ConvGeom geom_of(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                 const batchconv::ConvDesc& d) {
  ConvGeom g;
  g.one_d = x.size() == 3;
  g.n = x[0];
  g.cin = x[1];
  g.cout = w[0];
  g.groups = d.groups;
  g.relu = d.activation == batchconv::Activation::ReLU;
  if (g.one_d) {
    g.w = x[2];
    g.kw = w[2];
    g.sw = d.stride[0], g.dw = d.dilation[0], g.pl = d.pad_begin[0], g.pr = d.pad_end[0];
    g.ow = batchconv::conv_output_size(g.w, g.kw, d.stride[0], d.dilation[0], d.pad_begin[0],
                                       d.pad_end[0], "width");
  } else {
    g.h = x[2], g.w = x[3], g.kh = w[2], g.kw = w[3];
    g.sh = d.stride[0], g.sw = d.stride[1], g.dh = d.dilation[0], g.dw = d.dilation[1];
    g.pt = d.pad_begin[0], g.pl = d.pad_begin[1], g.pb = d.pad_end[0], g.pr = d.pad_end[1];
    g.oh = batchconv::conv_output_size(g.h, g.kh, d.stride[0], d.dilation[0], d.pad_begin[0],
                                       d.pad_end[0], "height");
    g.ow = batchconv::conv_output_size(g.w, g.kw, d.stride[1], d.dilation[1], d.pad_begin[1],
                                       d.pad_end[1], "width");
  }
  return g;
}

std::vector<int64_t> drop_first(const std::vector<int64_t>& s) {
  return std::vector<int64_t>(s.begin() + 1, s.end());
}

}  // namespace

std::unique_ptr<Problem> make_problem(const ProblemSpec& spec, uint64_t seed) {
  auto p = std::make_unique<Problem>();
  p->spec = spec;
  const auto& xs = spec.x_shape;
  const auto& ws = spec.w_shape;
  // The runtime's shape functions validate the shapes (and want data pointers).
  if (xs.empty() || ws.empty()) throw std::invalid_argument(std::string(op_name(spec.op)) + ": x and w need shapes");
  for (const auto* s : {&xs, &ws})
    for (int64_t d : *s)
      if (d <= 0) throw std::invalid_argument(std::string(op_name(spec.op)) + ": shape " + shape_str(*s) +
                                              " has a non-positive dimension");
  p->x = Buffer(numel(xs));
  p->w = Buffer(numel(ws));
  TensorView x(p->x.data(), xs), w(p->w.data(), ws);
  std::vector<int64_t> bshape;
  switch (spec.op) {
    case Op::GroupedConv:
      p->y_shape = batchconv::grouped_conv_output_shape(x, w, spec.desc);
      p->slice = geom_of(xs, ws, spec.desc);
      bshape = {ws[0]};
      break;
    case Op::BatchedWeightConv:
      p->y_shape = batchconv::batched_weight_conv_output_shape(x, w, spec.desc);
      p->batch = xs[0];
      p->slice = geom_of(drop_first(xs), drop_first(ws), spec.desc);
      bshape = {ws[0], ws[1]};
      break;
    case Op::BroadcastInputConv:
      p->y_shape = batchconv::broadcast_input_conv_output_shape(x, w, spec.desc, spec.layout);
      p->batch = ws[0];
      p->slice = geom_of(xs, drop_first(ws), spec.desc);
      bshape = {ws[0], ws[1]};
      break;
    case Op::BatchedLinear: {
      if (ws.size() != 3)
        throw std::invalid_argument("batched_linear: w must have shape (B, K, M), got " + shape_str(ws));
      if (xs.size() != 2 && xs.size() != 3)
        throw std::invalid_argument("batched_linear: x must have shape (B, N, K) or (N, K), got " +
                                    shape_str(xs));
      p->shared_x = xs.size() == 2;
      if (xs.back() != ws[1])
        throw std::invalid_argument("batched_linear: x has K=" + std::to_string(xs.back()) +
                                    " but w " + shape_str(ws) + " expects K=" + std::to_string(ws[1]));
      if (!p->shared_x && xs[0] != ws[0])
        throw std::invalid_argument("batched_linear: x has B=" + std::to_string(xs[0]) + " but w " +
                                    shape_str(ws) + " has B=" + std::to_string(ws[0]));
      p->batch = ws[0];
      const int64_t n = xs[xs.size() - 2];
      p->y_shape = {ws[0], n, ws[2]};
      bshape = {ws[0], ws[2]};
      break;
    }
  }
  p->y = Buffer(numel(p->y_shape));
  fill_random(p->x.data(), p->x.size(), seed);
  fill_random(p->w.data(), p->w.size(), seed + 1);
  p->xv = TensorView(p->x.data(), xs);
  p->wv = TensorView(p->w.data(), ws);
  p->yv = TensorView(p->y.data(), p->y_shape);
  if (spec.bias) {
    p->b = Buffer(numel(bshape));
    fill_random(p->b.data(), p->b.size(), seed + 2);
    p->bv = TensorView(p->b.data(), bshape);
  }
  poison_output(*p);

  const double y_elems = static_cast<double>(numel(p->y_shape));
  if (spec.op == Op::BatchedLinear) {
    p->flops = 2.0 * y_elems * static_cast<double>(ws[1]);
  } else {
    const ConvGeom& g = p->slice;
    p->flops = 2.0 * y_elems * static_cast<double>(g.cin / g.groups * g.kh * g.kw);
  }
  p->io_bytes = 4.0 * static_cast<double>(p->x.size() + p->w.size() + p->y.size() +
                                          (spec.bias ? p->b.size() : 0));
  return p;
}

}  // namespace bcbench

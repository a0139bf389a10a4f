#include "conv_cases.h"

#include <array>
#include <random>
#include <sstream>
#include <stdexcept>

namespace batchconv::test {

std::vector<int64_t> ConvCase::spatial_shape(std::vector<int64_t> lead, int64_t c, int64_t h,
                                             int64_t w) const {
  lead.push_back(c);
  if (dims == 2) lead.push_back(h);
  lead.push_back(w);
  return lead;
}

namespace {
int64_t out_size(int64_t in, int64_t k, int s, int dil, int pb, int pe) {
  const int64_t span = in + pb + pe - static_cast<int64_t>(dil) * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;  // no output when the dilated kernel overhangs
}
char layout_letter(Layout l) {
  return l == Layout::Contiguous ? 'C' : l == Layout::Padded ? 'P' : 'I';
}
// Spatial index of the W axis in ConvDesc's arrays.
int wi(int dims) { return dims == 2 ? 1 : 0; }
}  // namespace

int64_t ConvCase::out_h() const {
  return dims == 2 ? out_size(H, KH, d.stride[0], d.dilation[0], d.pad_begin[0], d.pad_end[0]) : 1;
}
int64_t ConvCase::out_w() const {
  const int i = wi(dims);
  return out_size(W, KW, d.stride[i], d.dilation[i], d.pad_begin[i], d.pad_end[i]);
}

std::string ConvCase::describe() const {
  std::ostringstream s;
  s << name << ": " << dims << "-D B=" << B << " N=" << N << " Cin=" << cin() << " Cout=" << cout()
    << " (per group " << cin_g << "->" << cout_g << ")";
  s << " input=" << (dims == 2 ? std::to_string(H) + "x" : "") << W
    << " kernel=" << (dims == 2 ? std::to_string(KH) + "x" : "") << KW << " " << desc_str(d, dims)
    << " bias=" << (bias ? "on" : "off") << " layouts x/w/y=" << layout_name(x_layout) << "/"
    << layout_name(w_layout) << "/" << layout_name(y_layout)
    << (permuted ? " permuted-view" : "")
    << (layout == BroadcastLayout::Batched ? " out=Batched" : "");
  return s.str();
}

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.describe(); }

namespace {

struct Builder {
  ConvOp op;
  std::vector<ConvCase> cases;

  // Adds a case; hw = {h, w}, k = {kh, kw}, geometry pairs are (h, w). For
  // 1-D only the second element of each pair is used.
  ConvCase& add(int dims, int64_t B, int64_t N, int groups, int64_t cin_g, int64_t cout_g,
                std::array<int64_t, 2> hw, std::array<int64_t, 2> k, std::array<int, 2> s,
                std::array<int, 2> dil, std::array<int, 2> pb, std::array<int, 2> pe, bool bias,
                bool relu) {
    ConvCase c;
    c.dims = dims;
    c.B = op == ConvOp::Grouped ? 1 : B;
    c.N = N, c.cin_g = cin_g, c.cout_g = cout_g;
    c.d.groups = groups;
    c.d.activation = relu ? Activation::ReLU : Activation::None;
    c.bias = bias;
    if (dims == 2) {
      c.H = hw[0], c.W = hw[1], c.KH = k[0], c.KW = k[1];
      c.d.stride = s, c.d.dilation = dil, c.d.pad_begin = pb, c.d.pad_end = pe;
    } else {
      c.H = 1, c.W = hw[1], c.KH = 1, c.KW = k[1];
      c.d.stride = {s[1], 1}, c.d.dilation = {dil[1], 1};
      c.d.pad_begin = {pb[1], 0}, c.d.pad_end = {pe[1], 0};
    }
    cases.push_back(c);
    return cases.back();
  }

  // The dilated kernel fits in the padded input on every axis (a check on the
  // output size alone is fooled by C++'s truncating division).
  bool valid(const ConvCase& c) const {
    auto fits = [](int64_t in, int64_t k, int dil, int pb, int pe) {
      return in + pb + pe >= static_cast<int64_t>(dil) * (k - 1) + 1;
    };
    const int w = wi(c.dims);
    return fits(c.W, c.KW, c.d.dilation[w], c.d.pad_begin[w], c.d.pad_end[w]) &&
           (c.dims == 1 || fits(c.H, c.KH, c.d.dilation[0], c.d.pad_begin[0], c.d.pad_end[0]));
  }

  void name_all() {
    for (size_t i = 0; i < cases.size(); ++i) {
      ConvCase& c = cases[i];
      const int w = wi(c.dims);
      std::ostringstream s;
      s << "c" << i << "_" << c.dims << "d_B" << c.B << "_N" << c.N << "_g" << c.d.groups << "_"
        << c.cin_g << "to" << c.cout_g << "_in" << c.H << "x" << c.W << "_k" << c.KH << "x" << c.KW
        << "_s" << c.d.stride[0] << "x" << c.d.stride[w] << "_d" << c.d.dilation[0] << "x"
        << c.d.dilation[w] << "_p" << c.d.pad_begin[0] << "_" << c.d.pad_begin[w] << "_"
        << c.d.pad_end[0] << "_" << c.d.pad_end[w] << (c.bias ? "_bias" : "")
        << (c.d.activation == Activation::ReLU ? "_relu" : "") << "_" << layout_letter(c.x_layout)
        << layout_letter(c.w_layout) << layout_letter(c.y_layout) << (c.permuted ? "_perm" : "")
        << (c.layout == BroadcastLayout::Batched ? "_batched" : "");
      c.name = s.str();
    }
  }

  void edge_cases() {
    const bool t = true, f = false;
    add(2, 2, 2, 1, 3, 8, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);   // dense 3x3
    add(2, 3, 1, 1, 16, 16, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, f, f); // 1x1, N=1
    add(2, 2, 2, 8, 1, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, t); // depthwise
    add(2, 2, 1, 6, 1, 2, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, t, f);   // dw x2
    add(2, 1, 2, 5, 1, 3, {7, 11}, {5, 3}, {1, 1}, {2, 1}, {2, 0}, {3, 1}, f, t);  // dw x3
    add(2, 1, 1, 1, 1, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f);   // all ones
    add(2, 2, 3, 1, 2, 3, {1, 13}, {1, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, f, f);  // H=1
    add(2, 2, 2, 4, 16, 16, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);  // ResNeXt
    add(2, 3, 1, 1, 5, 17, {6, 33}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, t);  // Cout=17
    add(2, 2, 2, 1, 3, 4, {11, 9}, {3, 3}, {3, 2}, {1, 1}, {0, 0}, {0, 0}, t, f);   // stride
    add(2, 2, 1, 2, 2, 3, {13, 12}, {3, 3}, {1, 1}, {3, 2}, {0, 0}, {0, 0}, f, t);  // dilation
    add(2, 2, 2, 1, 4, 4, {8, 9}, {3, 2}, {1, 2}, {1, 1}, {2, 0}, {0, 3}, t, t);    // asym pad
    add(2, 1, 1, 1, 3, 5, {4, 5}, {5, 6}, {1, 1}, {1, 1}, {1, 0}, {0, 1}, t, f);    // out 1x1
    add(2, 2, 2, 3, 2, 2, {5, 6}, {1, 1}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, t, t);    // pad > k
    add(1, 4, 2, 4, 16, 16, {1, 50}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f); // seed 1
    add(1, 2, 2, 1, 3, 5, {1, 20}, {1, 3}, {1, 2}, {1, 1}, {0, 1}, {0, 2}, t, t);
    add(1, 2, 1, 2, 3, 2, {1, 17}, {1, 3}, {1, 1}, {1, 3}, {0, 0}, {0, 0}, f, f);
    add(1, 1, 2, 4, 1, 2, {1, 1}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}, t, f);    // length 1
    add(1, 3, 3, 8, 1, 1, {1, 31}, {1, 5}, {1, 3}, {1, 1}, {0, 2}, {0, 0}, f, t);   // dw 1-D
    // Non-contiguous views of every operand.
    const Layout P = Layout::Padded, I = Layout::InnerStrided;
    add(2, 2, 2, 2, 3, 4, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f).x_layout = P;
    add(2, 2, 2, 2, 3, 4, {7, 9}, {3, 3}, {2, 1}, {1, 1}, {1, 0}, {0, 1}, t, f).w_layout = P;
    add(2, 2, 2, 2, 3, 4, {7, 9}, {3, 3}, {1, 1}, {1, 2}, {1, 1}, {1, 1}, f, t).y_layout = P;
    // The API allows any strides; a last-axis stride != 1 needs the runtime to
    // handle it (e.g. a copy), so these few cases cover it for x, w and y.
    add(2, 2, 2, 2, 3, 4, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f).x_layout = I;
    add(1, 2, 2, 1, 3, 4, {1, 19}, {1, 3}, {1, 1}, {1, 1}, {0, 1}, {0, 1}, t, f).x_layout = I;
    add(2, 2, 1, 1, 3, 4, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, f, f).w_layout = I;
    add(2, 2, 1, 1, 3, 4, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, t).y_layout = I;
    ConvCase& all = add(2, 3, 2, 3, 2, 2, {6, 7}, {3, 2}, {1, 2}, {2, 1}, {1, 0}, {2, 1}, t, t);
    all.x_layout = all.w_layout = all.y_layout = P;
    if (op == ConvOp::BatchedWeight) {
      add(2, 3, 4, 1, 3, 5, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f).permuted = t;
      add(1, 2, 3, 2, 2, 2, {1, 15}, {1, 3}, {1, 2}, {1, 1}, {0, 1}, {0, 1}, f, t).permuted = t;
      add(2, 1, 3, 1, 4, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);  // B = 1
    }
    if (op == ConvOp::BroadcastInput) {
      for (bool perm : {false, true}) {
        ConvCase& c = add(2, 3, 2, 1, 3, 4, {8, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);
        c.layout = BroadcastLayout::Batched, c.permuted = perm;
        ConvCase& e = add(1, 4, 2, 2, 2, 3, {1, 21}, {1, 3}, {1, 2}, {1, 1}, {0, 1}, {0, 0}, t, t);
        e.layout = BroadcastLayout::Batched, e.permuted = perm;
      }
      add(2, 1, 2, 1, 3, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);  // B = 1
    }
  }

  void random_cases(int count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::initializer_list<int64_t> v) {
      return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
    };
    auto range = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    // Inner-strided views are covered by the edge cases only (see edge_cases()).
    const Layout layouts[] = {Layout::Contiguous, Layout::Contiguous, Layout::Contiguous,
                              Layout::Contiguous, Layout::Padded, Layout::Padded};
    int made = 0;
    while (made < count) {
      const int dims = range(0, 99) < 35 ? 1 : 2;
      const int64_t mode = range(0, 9);  // 0-3 dense, 4-5 depthwise, 6-9 grouped
      int groups = 1;
      int64_t cin_g = pick({1, 2, 3, 4, 5, 8, 16}), cout_g = pick({1, 2, 3, 4, 5, 8, 16, 17});
      if (mode >= 4 && mode <= 5) groups = static_cast<int>(range(2, 16)), cin_g = 1,
                                  cout_g = pick({1, 1, 2, 3});
      if (mode >= 6) groups = static_cast<int>(pick({2, 3, 4}));
      auto sp = [&] { return static_cast<int>(pick({1, 1, 2, 3})); };
      auto pd = [&] { return static_cast<int>(pick({0, 0, 1, 2, 3})); };
      ConvCase& c = add(dims, pick({1, 2, 3, 5}), pick({1, 2, 3}), groups, cin_g, cout_g,
                        {range(1, 11), dims == 2 ? range(1, 35) : range(1, 64)},
                        {pick({1, 2, 3, 5}), pick({1, 2, 3, 5})}, {sp(), sp()}, {sp(), sp()},
                        {pd(), pd()}, {pd(), pd()}, range(0, 1) == 1, range(0, 1) == 1);
      c.x_layout = layouts[range(0, 5)];
      c.w_layout = layouts[range(0, 5)];
      c.y_layout = layouts[range(0, 5)];
      if (op == ConvOp::BatchedWeight) c.permuted = range(0, 3) == 0;
      if (op == ConvOp::BroadcastInput && range(0, 1) == 1) {
        c.layout = BroadcastLayout::Batched;
        c.permuted = range(0, 2) == 0;
      }
      const int64_t cost = c.B * c.N * c.cout() * c.out_h() * c.out_w() * c.cin_g * c.KH * c.KW;
      if (!valid(c) || cost > 2000000) {
        cases.pop_back();
        continue;
      }
      ++made;
    }
  }

  // Medium sizes, so the kernels' vectorised tiles, channel blocks and
  // parallel splits run full as well as with tails.
  void medium_cases(int count, uint64_t seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::initializer_list<int64_t> v) {
      return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
    };
    auto range = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    int made = 0;
    while (made < count) {
      const int dims = range(0, 3) == 0 ? 1 : 2;
      int groups = static_cast<int>(pick({1, 1, 2, 4, 8}));
      int64_t cin_g = pick({4, 8, 16, 24, 32}), cout_g = pick({8, 16, 24, 32, 48});
      if (range(0, 4) == 0) groups = static_cast<int>(range(16, 64)), cin_g = 1, cout_g = pick({1, 2});
      auto sp = [&] { return static_cast<int>(pick({1, 1, 2})); };
      auto pd = [&] { return static_cast<int>(pick({0, 1, 2})); };
      ConvCase& c = add(dims, pick({1, 2, 3}), pick({1, 2}), groups, cin_g, cout_g,
                        {range(8, 24), dims == 2 ? range(16, 70) : range(32, 300)},
                        {pick({1, 3, 5}), pick({1, 3, 5})}, {sp(), sp()}, {sp(), sp()},
                        {pd(), pd()}, {pd(), pd()}, range(0, 1) == 1, range(0, 1) == 1);
      if (op == ConvOp::BatchedWeight) c.permuted = range(0, 3) == 0;
      if (op == ConvOp::BroadcastInput && range(0, 1) == 1) c.layout = BroadcastLayout::Batched;
      if (range(0, 3) == 0) c.x_layout = Layout::Padded;
      if (range(0, 3) == 0) c.y_layout = Layout::Padded;
      const int64_t cost = c.B * c.N * c.cout() * c.out_h() * c.out_w() * c.cin_g * c.KH * c.KW;
      if (!valid(c) || cost > 12000000) {
        cases.pop_back();
        continue;
      }
      ++made;
    }
  }

  void large_cases() {
    const bool t = true, f = false;
    if (op == ConvOp::Grouped) {
      add(2, 1, 2, 1, 32, 64, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, t);
      add(2, 1, 1, 64, 1, 1, {30, 30}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, t, f);
      add(2, 1, 2, 8, 8, 8, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, f, t);
      add(1, 1, 2, 1, 16, 32, {1, 500}, {1, 5}, {1, 1}, {1, 1}, {0, 2}, {0, 2}, t, f);
      // Long reductions (1024 and 2304 terms): float accumulation within the bound.
      add(2, 1, 1, 1, 1024, 16, {4, 4}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f);
      add(2, 1, 1, 1, 256, 32, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);
    } else if (op == ConvOp::BatchedWeight) {
      add(2, 4, 8, 1, 3, 16, {16, 16}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f);
      add(2, 1, 4, 1, 32, 32, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, t);
    } else {
      add(1, 4, 1, 1, 16, 16, {1, 2000}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, t, f);
      ConvCase& c = add(2, 3, 2, 1, 8, 16, {12, 12}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, t, f);
      c.layout = BroadcastLayout::Batched;
    }
  }
};

}  // namespace

std::vector<ConvCase> conv_cases(ConvOp op) {
  Builder b{op, {}};
  b.edge_cases();
  const int count = op == ConvOp::Grouped ? 300 : 230;
  b.random_cases(count, 20261130u + static_cast<uint64_t>(op));
  b.medium_cases(25, 20261200u + static_cast<uint64_t>(op));
  b.large_cases();
  b.name_all();
  for (const ConvCase& c : b.cases)
    if (!b.valid(c)) throw std::logic_error("test bug: invalid geometry in " + c.describe());
  return b.cases;
}

std::vector<ConvCase> long_reduction_cases(ConvOp op) {
  // Each has >= 64 output channels per group and >= 64 taps.
  Builder b{op, {}};
  const std::array<int, 2> s1{1, 1}, s2{2, 2}, d2{2, 2}, p0{0, 0}, p1{1, 1}, p2{2, 2};
  b.add(2, 1, 2, 1, 3, 64, {28, 28}, {7, 7}, s1, s1, p0, p0, false, false);  // seed 2
  b.add(2, 2, 3, 1, 3, 64, {28, 28}, {7, 7}, s1, s1, p0, p0, true, true);
  b.add(2, 3, 2, 1, 8, 64, {9, 19}, {3, 3}, s1, s1, p1, p1, true, false);   // odd width
  b.add(2, 1, 1, 1, 8, 72, {7, 18}, {3, 3}, s1, s1, p2, p0, false, true);   // asymmetric pad
  b.add(2, 2, 2, 1, 8, 64, {15, 41}, {3, 3}, s2, s1, p1, p1, true, false);  // stride 2
  b.add(2, 1, 2, 1, 8, 64, {12, 24}, {3, 3}, s1, d2, p2, p2, false, false);  // dilation 2
  b.add(2, 2, 2, 2, 8, 64, {9, 19}, {3, 3}, s1, s1, p0, p0, true, false);   // two groups
  b.add(2, 1, 1, 1, 16, 80, {5, 35}, {3, 3}, s1, s1, p0, p0, false, false);  // 33 columns
  b.add(2, 3, 2, 1, 3, 64, {14, 24}, {5, 5}, s1, s1, p1, p1, true, true);
  b.add(1, 2, 2, 1, 32, 64, {1, 36}, {1, 3}, s1, s1, p1, p1, true, false);  // 1-D
  b.name_all();
  return b.cases;
}

}  // namespace batchconv::test

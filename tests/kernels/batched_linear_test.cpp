// batched_linear: x (B, N, K) or shared (N, K), w (B, K, M), bias (B, M) ->
// y (B, N, M), swept over sizes, bias, ReLU and memory layouts (including
// transposed views: w stored (B, M, K) like nn.Linear's weight), against the
// double-precision reference on fresh random data; every case through each
// kernel variant (x and w in place, weight panels, both panels) and through
// the chooser's pick.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "conv_chooser.h"
#include "linear_chooser.h"
#include "reference.h"
#include "test_support.h"

namespace batchconv::test {
namespace {

enum class LinLayout { Contiguous, Padded, InnerStrided, Transposed };

struct LinearCase {
  std::string name;
  bool shared = false;  // x (N, K) shared by all B weight matrices
  int64_t B = 1, N = 1, K = 1, M = 1;
  bool bias = false, relu = false;
  LinLayout x_layout = LinLayout::Contiguous, w_layout = LinLayout::Contiguous;
  Layout y_layout = Layout::Contiguous;
};

void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

const char* lin_name(LinLayout l) {
  const char* names[] = {"C", "P", "I", "T"};
  return names[static_cast<int>(l)];
}

std::vector<LinearCase> linear_cases() {
  std::vector<LinearCase> cases;
  auto add = [&](bool shared, int64_t B, int64_t N, int64_t K, int64_t M, bool bias, bool relu) {
    LinearCase c;
    c.shared = shared, c.B = B, c.N = N, c.K = K, c.M = M, c.bias = bias, c.relu = relu;
    cases.push_back(c);
    return &cases.back();
  };
  add(false, 1, 1, 1, 1, true, false);
  add(false, 1, 7, 16, 16, true, true);     // B = 1
  add(true, 4, 1000, 16, 16, true, false);  // seed 1: 4 layers 16->16 on a shared x
  add(false, 3, 5, 1, 9, false, false);     // K = 1
  add(false, 3, 5, 9, 1, true, true);       // M = 1
  add(true, 1, 2, 3, 4, false, true);
  add(false, 100, 10, 50, 75, true, false);  // seed 3's BatchLinearLayer, smaller N
  add(false, 4, 64, 128, 96, true, true);    // a larger one
  add(false, 2, 5, 17, 33, true, false)->w_layout = LinLayout::Transposed;
  add(false, 2, 5, 17, 33, true, false)->x_layout = LinLayout::Transposed;
  add(true, 3, 6, 20, 7, false, true)->x_layout = LinLayout::Padded;
  add(false, 3, 6, 20, 7, true, false)->y_layout = Layout::Padded;
  add(false, 3, 6, 20, 7, true, false)->x_layout = LinLayout::InnerStrided;
  add(true, 4, 9, 16, 16, true, false)->w_layout = LinLayout::Transposed;  // nn.Linear weights, seed 1
  std::mt19937_64 rng(20261131u);
  auto range = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  // Views with a last-axis stride != 1 (inner-strided, transposed) are
  // covered by the explicit cases above only.
  const LinLayout lls[] = {LinLayout::Contiguous, LinLayout::Contiguous, LinLayout::Contiguous,
                           LinLayout::Contiguous, LinLayout::Padded, LinLayout::Padded};
  for (int i = 0; i < 220; ++i) {
    LinearCase* c = add(range(0, 3) == 0, range(1, 8), range(1, 24), range(1, 70), range(1, 40),
                        range(0, 1) == 1, range(0, 1) == 1);
    c->x_layout = lls[range(0, 5)];
    c->w_layout = lls[range(0, 5)];
    c->y_layout = range(0, 3) == 0 ? Layout::Padded : Layout::Contiguous;
  }
  for (int i = 0; i < 20; ++i)  // medium sizes: full vector tiles as well as tails
    add(range(0, 3) == 0, range(1, 6), range(16, 100), range(32, 200), range(16, 130),
        range(0, 1) == 1, range(0, 1) == 1);
  // The panels' task structure: more than one block of row tiles (8 tiles of
  // up to 12 rows) and of column tiles (16 tiles of up to 32 columns), tails
  // of both, K of a few hundred, and scalar columns with a long K.
  add(false, 1, 250, 520, 530, true, true);   // what the chooser gives both panels
  add(true, 2, 101, 70, 600, true, false);    // 19 column tiles, 9 row tiles
  add(false, 3, 200, 300, 10, false, true);   // scalar columns (weight panel)
  add(false, 2, 97, 40, 17, true, false)->w_layout = LinLayout::Transposed;
  add(true, 2, 130, 33, 515, false, false)->x_layout = LinLayout::Transposed;
  for (int i = 0; i < 8; ++i)
    add(range(0, 1) == 1, range(1, 3), range(90, 260), range(100, 600), range(1, 600),
        range(0, 1) == 1, range(0, 1) == 1);
  for (size_t i = 0; i < cases.size(); ++i) {
    LinearCase& c = cases[i];
    std::ostringstream s;
    s << "l" << i << (c.shared ? "_shared" : "") << "_B" << c.B << "_N" << c.N << "_K" << c.K
      << "_M" << c.M << (c.bias ? "_bias" : "") << (c.relu ? "_relu" : "") << "_x"
      << lin_name(c.x_layout) << "_w" << lin_name(c.w_layout)
      << (c.y_layout == Layout::Padded ? "_yP" : "_yC");
    c.name = s.str();
  }
  return cases;
}

// A matrix-batch tensor of `shape` whose last two dims may be stored transposed.
Tensor make(const std::vector<int64_t>& shape, LinLayout l) {
  if (l == LinLayout::Contiguous) return Tensor(shape, Layout::Contiguous);
  if (l == LinLayout::Padded) return Tensor(shape, Layout::Padded);
  if (l == LinLayout::InnerStrided) return Tensor(shape, Layout::InnerStrided);
  const size_t r = shape.size();
  std::vector<int64_t> storage = shape;
  std::swap(storage[r - 1], storage[r - 2]);
  std::vector<int64_t> strides(r);
  strides[r - 2] = 1;                        // rows are contiguous in storage...
  strides[r - 1] = shape[r - 2];             // ...and columns step over them
  if (r == 3) strides[0] = shape[1] * shape[2];
  return Tensor::with_strides(shape, storage, strides);
}

void check_case(const LinearCase& c);

const LinearKernel kKernels[] = {LinearKernel::Auto, LinearKernel::InPlace, LinearKernel::WeightPanels,
                                 LinearKernel::AllPanels};
const char* kernel_name(LinearKernel k) {
  const char* names[] = {"auto", "in_place", "weight_panels", "all_panels"};
  return names[static_cast<int>(k)];
}

class BatchedLinearSweep : public ::testing::TestWithParam<LinearCase> {
 protected:
  void TearDown() override { set_linear_kernel(LinearKernel::Auto); }
};

TEST_P(BatchedLinearSweep, MatchesReference) {
  for (LinearKernel k : kKernels) {
    SCOPED_TRACE(kernel_name(k));
    set_linear_kernel(k);
    check_case(GetParam());
    if (k != LinearKernel::Auto) {
      EXPECT_EQ(last_linear_kernel(), kernel_name(k));
    }
  }
}

void check_case(const LinearCase& c) {
  auto rng = case_rng(c.name);
  Tensor x = make(c.shared ? std::vector<int64_t>{c.N, c.K} : std::vector<int64_t>{c.B, c.N, c.K},
                  c.x_layout);
  Tensor w = make({c.B, c.K, c.M}, c.w_layout);
  Tensor bias({c.B, c.M}, Layout::Contiguous);
  Tensor y({c.B, c.N, c.M}, c.y_layout);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  x.fill_random(rng, nan);
  w.fill_random(rng, nan);
  bias.fill_random(rng, nan);
  poison_output(y);
  const std::vector<float> x0 = x.storage(), w0 = w.storage();
  const TensorView* bv = c.bias ? bias.view_ptr() : nullptr;
  const Activation act = c.relu ? Activation::ReLU : Activation::None;
  try {
    batched_linear(x.view(), w.view(), bv, y.view(), act);
  } catch (const std::exception& e) {
    FAIL() << c.name << ": threw on valid input: " << e.what();
  }
  std::vector<int64_t> shape;
  const auto ref = ref::batched_linear(x.view(), w.view(), bv, act, &shape);
  expect_matches(y, ref, shape, c.name);
  EXPECT_EQ(0, std::memcmp(x.storage().data(), x0.data(), x0.size() * sizeof(float)))
      << c.name << ": x was modified";
  EXPECT_EQ(0, std::memcmp(w.storage().data(), w0.data(), w0.size() * sizeof(float)))
      << c.name << ": w was modified";
}

INSTANTIATE_TEST_SUITE_P(Sweep, BatchedLinearSweep, ::testing::ValuesIn(linear_cases()),
                         [](const ::testing::TestParamInfo<LinearCase>& i) { return i.param.name; });

// The chooser's picks (linear_chooser.h) for AVX-512 and AVX2 facts.
TEST(LinearChooser, Decisions) {
  using batchconv_gen::LinearPanels;
  struct Want {
    const char* what;
    int64_t n, k, m;
    LinearPanels avx512, avx2;
  };
  const Want wants[] = {
      {"MLP layer 256 x 1024 -> 1024", 256, 1024, 1024, LinearPanels::All, LinearPanels::All},
      {"classifier head 1024 -> 10", 256, 1024, 10, LinearPanels::Weights, LinearPanels::None},
      {"seed 3's layer 50 -> 75", 10, 50, 75, LinearPanels::None, LinearPanels::None},
      {"seed 1: 16 -> 16 per layer", 1000000, 16, 16, LinearPanels::None, LinearPanels::None},
      {"8 output columns", 1000, 64, 8, LinearPanels::Weights, LinearPanels::None},
      {"256 columns: 8 tiles of 32, 16 of 16", 1000, 1024, 256, LinearPanels::None, LinearPanels::All},
      {"one row tile", 12, 1024, 1024, LinearPanels::None, LinearPanels::All},
      {"short K", 1000, 256, 1024, LinearPanels::None, LinearPanels::None},
  };
  for (int vec : {16, 8}) {
    batchconv_gen::TargetFacts t;
    t.vector_floats = vec;
    t.registers = vec == 16 ? 32 : 16;
    for (const Want& w : wants) {
      const LinearPanels want = vec == 16 ? w.avx512 : w.avx2;
      EXPECT_EQ(batchconv_gen::linear_panels_name(batchconv_gen::choose_linear_panels(w.n, w.k, w.m, t)),
                std::string(batchconv_gen::linear_panels_name(want)))
          << w.what << " (vec " << vec << ")";
    }
  }
}

// The runtime runs the variant the chooser picks for the variant Halide
// selected on this machine, and records it.
TEST(LinearChooser, RuntimeFollowsIt) {
  set_linear_kernel(LinearKernel::Auto);
  const batchconv_gen::TargetFacts facts = batchconv_gen::facts_of_variant(selected_target());
  auto rng = case_rng("linear_runtime_choice");
  for (const auto& s : std::vector<std::array<int64_t, 3>>{{256, 512, 600}, {100, 64, 5}, {10, 50, 75}}) {
    const int64_t n = s[0], k = s[1], m = s[2];
    Tensor x({1, n, k}, Layout::Contiguous), w({1, k, m}, Layout::Contiguous), y({1, n, m}, Layout::Contiguous);
    x.fill_random(rng, std::numeric_limits<float>::quiet_NaN());
    w.fill_random(rng, std::numeric_limits<float>::quiet_NaN());
    batched_linear(x.view(), w.view(), nullptr, y.view());
    const char* want[] = {"in_place", "weight_panels", "all_panels"};
    EXPECT_EQ(last_linear_kernel(), want[static_cast<int>(batchconv_gen::choose_linear_panels(n, k, m, facts))])
        << n << " x " << k << " -> " << m << " on " << selected_target();
  }
}

}  // namespace
}  // namespace batchconv::test

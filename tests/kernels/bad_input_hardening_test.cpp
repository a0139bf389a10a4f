// Bad input the runtime must refuse before it computes or allocates anything:
// a strided view too large to pack (checked before the scratch copy), an
// output overlapping an input, and an Activation value outside the enum.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "bad_input_support.h"

namespace batchconv::test {
namespace {

const std::string kTooLarge = "2147483647|32-bit";

// A view with a non-unit inner stride is packed into scratch before the
// kernel runs; a huge one must be refused first. The view points at 8 floats
// (any copy would read far past them) with zero strides but the inner one.
TEST(HardeningBadInput, HugeStridedViewIsRefusedBeforeTheScratchCopy) {
  std::array<float, 8> dummy{};
  Tensor w = T({1, 1, 3, 3});
  std::vector<float> out(9, kSentinel);
  TensorView x(dummy.data(), {1, 1, 46341, 46341}, {0, 0, 0, 2});  // 2.1e9 elements, inner stride 2
  expect_error([&] {
    grouped_conv(x, w.view(), nullptr, TensorView(out.data(), {1, 1, 46339, 46339}), ConvDesc{});
  }, {"grouped_conv", word("x"), kTooLarge}, {});
  // An element count that overflows 64 bits is refused too, not wrapped.
  TensorView xx(dummy.data(), {1, 1, int64_t(1) << 40, int64_t(1) << 40}, {0, 0, 0, 2});
  expect_error([&] {
    grouped_conv(xx, w.view(), nullptr, TensorView(out.data(), {1, 1, 3, 3}), ConvDesc{});
  }, {"grouped_conv", word("x"), kTooLarge}, {});
  for (float v : out) EXPECT_EQ(v, kSentinel);
}

// One buffer holding w and then y, with y starting inside w.
TEST(HardeningBadInput, OutputOverlappingWeightsIsRefused) {
  Problem p = grouped_problem();
  const int64_t wn = 6 * 2 * 3 * 3, yn = 2 * 6 * 5 * 5;
  std::vector<float> buf(static_cast<size_t>(wn + yn), 0.5f);
  TensorView w(buf.data(), {6, 2, 3, 3});
  TensorView y(buf.data() + wn - 10, {2, 6, 5, 5});
  const std::vector<float> before = buf;
  expect_error([&] { grouped_conv(p.x.view(), w, p.bias.view_ptr(), y, p.d); },
               {"grouped_conv", word("y"), "shares memory with w"}, {});
  EXPECT_EQ(buf, before) << "y was written";

  // y overlapping x (in place) and bias are refused as well, for every op.
  Problem b = batched_problem();
  TensorView bx = b.x.view();
  TensorView by(bx.data, {3, 2, 6, 5, 5});
  expect_error([&] { batched_weight_conv(bx, b.w.view(), nullptr, by, b.d); },
               {"batched_weight_conv", "shares memory with x"}, {});
  Problem c = broadcast_problem();
  std::vector<float> cbuf(3 * 6 * 4 * 9 + 2 * 18 * 5 * 5, 0.25f);
  TensorView cw(cbuf.data(), {3, 6, 4, 3, 3});
  expect_error([&] { broadcast_input_conv(c.x.view(), cw, c.bias.view_ptr(),
                                          TensorView(cbuf.data() + 100, {2, 18, 5, 5}), c.d,
                                          BroadcastLayout::Concatenated); },
               {"broadcast_input_conv", "shares memory with w"}, {});
  Problem l = linear_problem();
  TensorView lb = l.bias.view();
  std::vector<float> lbuf(3 * 5 * 6 + 18, 0.f);
  TensorView bias_in(lbuf.data(), lb.shape);
  TensorView y_over(lbuf.data() + 4, {3, 5, 6});
  expect_error([&] { batched_linear(l.x.view(), l.w.view(), &bias_in, y_over); },
               {"batched_linear", "shares memory with bias"}, {});
}

TEST(HardeningBadInput, InvalidActivationIsRefused) {
  Problem p = grouped_problem();
  p.d.activation = static_cast<Activation>(7);
  expect_error([&] { grouped_conv(p.x.view(), p.w.view(), p.bias.view_ptr(), p.y.view(), p.d); },
               {"grouped_conv", "activation = 7", "Activation::ReLU"}, {&p.y});
  Problem b = batched_problem();
  b.d.activation = static_cast<Activation>(-1);
  expect_error([&] { batched_weight_conv(b.x.view(), b.w.view(), b.bias.view_ptr(), b.y.view(), b.d); },
               {"batched_weight_conv", "activation = -1"}, {&b.y});
  Problem l = linear_problem();
  expect_error([&] {
    batched_linear(l.x.view(), l.w.view(), l.bias.view_ptr(), l.y.view(), static_cast<Activation>(2));
  }, {"batched_linear", "activation = 2"}, {&l.y});
}

}  // namespace
}  // namespace batchconv::test

#include "conv_check.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <limits>

#include "conv_chooser.h"
#include "reference.h"

namespace batchconv::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<int64_t> row_major(const std::vector<int64_t>& extent) {
  std::vector<int64_t> s(extent.size(), 1);
  for (int i = static_cast<int>(extent.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * extent[i + 1];
  return s;
}

// BATCHCONV_TEST_CHANNELS_LAST=1: x and y of every case whose layout is plain
// row-major are channels-last instead (channel stride 1, the memory of
// PyTorch's channels_last), so the whole sweep runs in that layout too.
bool channels_last_from_env() {
  static const bool on = [] {
    const char* v = std::getenv("BATCHCONV_TEST_CHANNELS_LAST");
    return v && std::string(v) == "1";
  }();
  return on;
}

// `shape` with axis `cdim` innermost in memory, every other axis row-major.
Tensor channels_last_tensor(const std::vector<int64_t>& shape, int cdim) {
  std::vector<int64_t> storage, strides(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    if (static_cast<int>(i) != cdim) storage.push_back(shape[i]);
  storage.push_back(shape[cdim]);
  strides[cdim] = 1;
  int64_t step = shape[cdim];
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (i == cdim) continue;
    strides[i] = step;
    step *= shape[i];
  }
  return Tensor::with_strides(shape, storage, strides);
}

// An activation of a case: channels-last where the environment asks for it
// and the case's layout is plain row-major, else in the case's layout.
Tensor activation(const std::vector<int64_t>& shape, Layout layout, int cdim) {
  if (channels_last_from_env() && layout == Layout::Contiguous) return channels_last_tensor(shape, cdim);
  return Tensor(shape, layout);
}

// x of a batched-weight case: (B, N, Cin, ...), possibly a view of (N, B, Cin, ...) memory.
Tensor make_batched_x(const ConvCase& c) {
  const auto shape = c.spatial_shape({c.B, c.N}, c.cin(), c.H, c.W);
  if (!c.permuted) return activation(shape, c.x_layout, 2);
  auto storage = shape;
  std::swap(storage[0], storage[1]);
  auto strides = row_major(storage);
  std::swap(strides[0], strides[1]);
  return Tensor::with_strides(shape, storage, strides);
}

// y of a broadcast-input case; the permuted Batched one lives in Concatenated memory.
Tensor make_broadcast_y(const ConvCase& c) {
  const int64_t oh = c.out_h(), ow = c.out_w();
  if (c.layout == BroadcastLayout::Concatenated)
    return activation(c.spatial_shape({c.N}, c.B * c.cout(), oh, ow), c.y_layout, 1);
  const auto shape = c.spatial_shape({c.B, c.N}, c.cout(), oh, ow);
  if (!c.permuted) return activation(shape, c.y_layout, 2);
  const auto storage = c.spatial_shape({c.N}, c.B * c.cout(), oh, ow);
  const int64_t plane = oh * ow;
  std::vector<int64_t> strides{c.cout() * plane, c.B * c.cout() * plane, plane};
  if (c.dims == 2) strides.push_back(ow);
  strides.push_back(1);
  return Tensor::with_strides(shape, storage, strides);
}

// BATCHCONV_TEST_FAMILY=rows|channels|lanes forces a schedule family for
// the whole process (one ctest entry per family); unset: the chooser decides.
void apply_family_from_env() {
  static const bool applied = [] {
    const char* f = std::getenv("BATCHCONV_TEST_FAMILY");
    if (f && std::string(f) == "rows") set_schedule_family(ScheduleFamily::Rows);
    if (f && std::string(f) == "channels") set_schedule_family(ScheduleFamily::Channels);
    if (f && std::string(f) == "lanes") set_schedule_family(ScheduleFamily::Lanes);
    return true;
  }();
  (void)applied;
}

// The family a forced run of case `c` reports: the forced one, except that
// forced lanes runs the rows family where its kernels do not take the call
// (a broadcast-input conv, a Cout_g that does not divide a vector, fewer
// than a vector of output channels in all).
std::string expected_family(const std::string& forced, ConvOp op, const ConvCase& c) {
  if (forced != "lanes") return forced;
  const batchconv_gen::TargetFacts t = batchconv_gen::facts_of_variant(selected_target());
  const bool fits = op != ConvOp::BroadcastInput && batchconv_gen::lanes_kernel_fits(c.cout_g, t) &&
                    c.cout() >= t.vector_floats;
  return fits ? "lanes" : "rows";
}

}  // namespace

void check_conv_case(ConvOp op, const ConvCase& c) {
  apply_family_from_env();
  const std::string what = c.name;
  SCOPED_TRACE(c.describe());
  auto rng = case_rng(c.name);
  const int64_t oh = c.out_h(), ow = c.out_w();
  Tensor x, w, bias, y;
  switch (op) {
    case ConvOp::Grouped:
      x = activation(c.spatial_shape({c.N}, c.cin(), c.H, c.W), c.x_layout, 1);
      w = Tensor(c.spatial_shape({c.cout()}, c.cin_g, c.KH, c.KW), c.w_layout);
      bias = Tensor({c.cout()}, c.w_layout);
      y = activation(c.spatial_shape({c.N}, c.cout(), oh, ow), c.y_layout, 1);
      break;
    case ConvOp::BatchedWeight:
      x = make_batched_x(c);
      w = Tensor(c.spatial_shape({c.B, c.cout()}, c.cin_g, c.KH, c.KW), c.w_layout);
      bias = Tensor({c.B, c.cout()}, c.w_layout);
      y = activation(c.spatial_shape({c.B, c.N}, c.cout(), oh, ow), c.y_layout, 2);
      break;
    case ConvOp::BroadcastInput:
      x = activation(c.spatial_shape({c.N}, c.cin(), c.H, c.W), c.x_layout, 1);
      w = Tensor(c.spatial_shape({c.B, c.cout()}, c.cin_g, c.KH, c.KW), c.w_layout);
      bias = Tensor({c.B, c.cout()}, c.w_layout);
      y = make_broadcast_y(c);
      break;
  }
  x.fill_random(rng, kNaN);
  w.fill_random(rng, kNaN);
  bias.fill_random(rng, kNaN);
  poison_output(y);
  const std::vector<float> x0 = x.storage(), w0 = w.storage(), b0 = bias.storage();
  const TensorView* bv = c.bias ? bias.view_ptr() : nullptr;

  std::vector<int64_t> ref_shape, runtime_shape;
  std::vector<double> ref;
  try {
    switch (op) {
      case ConvOp::Grouped:
        runtime_shape = grouped_conv_output_shape(x.view(), w.view(), c.d);
        grouped_conv(x.view(), w.view(), bv, y.view(), c.d);
        ref = ref::grouped_conv(x.view(), w.view(), bv, c.d, &ref_shape);
        break;
      case ConvOp::BatchedWeight:
        runtime_shape = batched_weight_conv_output_shape(x.view(), w.view(), c.d);
        batched_weight_conv(x.view(), w.view(), bv, y.view(), c.d);
        ref = ref::batched_weight_conv(x.view(), w.view(), bv, c.d, &ref_shape);
        break;
      case ConvOp::BroadcastInput:
        runtime_shape = broadcast_input_conv_output_shape(x.view(), w.view(), c.d, c.layout);
        broadcast_input_conv(x.view(), w.view(), bv, y.view(), c.d, c.layout);
        ref = ref::broadcast_input_conv(x.view(), w.view(), bv, c.d, c.layout, &ref_shape);
        break;
    }
  } catch (const std::exception& e) {
    FAIL() << what << ": threw on valid input: " << e.what();
  }
  if (const char* forced = std::getenv("BATCHCONV_TEST_FAMILY")) {
    EXPECT_EQ(last_conv_family(), expected_family(forced, op, c)) << what << ": ran another schedule family";
  }
  EXPECT_EQ(shape_str(runtime_shape), shape_str(ref_shape)) << what << ": *_output_shape helper";
  expect_matches(y, ref, ref_shape, what);
  EXPECT_TRUE(same_bits(x.storage(), x0)) << what << ": x was modified";
  EXPECT_TRUE(same_bits(w.storage(), w0)) << what << ": w was modified";
  EXPECT_TRUE(same_bits(bias.storage(), b0)) << what << ": bias was modified";
}

}  // namespace batchconv::test

// External conformance: the Conv cases of ONNX's own backend test data
// (Debian's libonnx-testdata) through batchconv::grouped_conv, compared with
// the outputs stored there. The double-precision reference is checked on the
// same data, so it too is tied to an outside source.
//
// The cases are the directories matching node/test_basic_conv_*,
// node/test_conv_with_*, pytorch-converted/test_Conv{1,2,3}d*; every name in
// kExpected must be found (a missing or empty data directory fails, it does not
// pass silently). 3-D cases are reported as skipped: batchconv has 1-D and 2-D
// convolutions only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <filesystem>
#include <iostream>

#include "onnx_conv_case.h"
#include "reference.h"

namespace batchconv::conformance {
namespace {

const std::vector<std::string> kPrefixes = {
    "node/test_basic_conv_", "node/test_conv_with_", "pytorch-converted/test_Conv1d",
    "pytorch-converted/test_Conv2d", "pytorch-converted/test_Conv3d"};

// What libonnx-testdata 1.12 ships for those prefixes.
const std::vector<std::string> kExpected = {
    "node/test_basic_conv_with_padding", "node/test_basic_conv_without_padding",
    "node/test_conv_with_autopad_same", "node/test_conv_with_strides_and_asymmetric_padding",
    "node/test_conv_with_strides_no_padding", "node/test_conv_with_strides_padding",
    "pytorch-converted/test_Conv1d", "pytorch-converted/test_Conv1d_dilated",
    "pytorch-converted/test_Conv1d_groups", "pytorch-converted/test_Conv1d_pad1",
    "pytorch-converted/test_Conv1d_pad1size1", "pytorch-converted/test_Conv1d_pad2",
    "pytorch-converted/test_Conv1d_pad2size1", "pytorch-converted/test_Conv1d_stride",
    "pytorch-converted/test_Conv2d", "pytorch-converted/test_Conv2d_depthwise",
    "pytorch-converted/test_Conv2d_depthwise_padded", "pytorch-converted/test_Conv2d_depthwise_strided",
    "pytorch-converted/test_Conv2d_depthwise_with_multiplier", "pytorch-converted/test_Conv2d_dilated",
    "pytorch-converted/test_Conv2d_groups", "pytorch-converted/test_Conv2d_groups_thnn",
    "pytorch-converted/test_Conv2d_no_bias", "pytorch-converted/test_Conv2d_padding",
    "pytorch-converted/test_Conv2d_strided", "pytorch-converted/test_Conv3d",
    "pytorch-converted/test_Conv3d_dilated", "pytorch-converted/test_Conv3d_dilated_strided",
    "pytorch-converted/test_Conv3d_groups", "pytorch-converted/test_Conv3d_no_bias",
    "pytorch-converted/test_Conv3d_stride", "pytorch-converted/test_Conv3d_stride_padding"};

// The expected cases plus anything else a newer data package adds.
std::vector<std::string> all_cases() {
  auto v = kExpected;
  for (const auto& c : discover_cases(onnx_testdata_root(), kPrefixes)) v.push_back(c);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

TEST(OnnxConvConformance, DiscoversTheExpectedCases) {
  const std::string root = onnx_testdata_root();
  const auto found = discover_cases(root, kPrefixes);
  std::cout << "ONNX backend Conv cases under " << root << " (" << found.size() << "):\n";
  for (const auto& f : found) std::cout << "  " << f << "\n";
  for (const auto& e : kExpected)
    EXPECT_NE(std::find(found.begin(), found.end(), e), found.end())
        << "missing " << root << "/" << e << " (is libonnx-testdata installed?)";
}

class OnnxConv : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxConv, MatchesStoredOutput) {
  const std::string dir = onnx_testdata_root() + "/" + GetParam();
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << "missing case directory " << dir;
  OnnxConvCase c;
  try {
    c = load_onnx_conv_case(dir);
  } catch (const std::exception& e) {
    FAIL() << "cannot load: " << e.what();
  }
  if (c.spatial_dims == 3)
    GTEST_SKIP() << GetParam() << ": 3-D convolution is not supported by batchconv (1-D and 2-D only)";
  for (DataSet& ds : c.data_sets) {
    SCOPED_TRACE(ds.dir + " attributes: " + c.attributes + " x" + shape_str(ds.x.shape) + " W" +
                 shape_str(ds.w.shape) + (ds.bias.data.empty() ? "" : " B" + shape_str(ds.bias.shape)));
    TensorView x(ds.x.data.data(), ds.x.shape), w(ds.w.data.data(), ds.w.shape);
    TensorView b(ds.bias.data.data(), ds.bias.shape);
    const TensorView* bp = ds.bias.data.empty() ? nullptr : &b;
    std::vector<float> out(ds.y.data.size(), std::numeric_limits<float>::quiet_NaN());
    TensorView y(out.data(), ds.y.shape);
    const std::vector<double> expected(ds.y.data.begin(), ds.y.data.end());
    try {
      EXPECT_EQ(shape_str(grouped_conv_output_shape(x, w, c.desc)), shape_str(ds.y.shape));
      grouped_conv(x, w, bp, y, c.desc);
    } catch (const std::exception& e) {
      FAIL() << "grouped_conv threw: " << e.what();
    }
    // The stored outputs were computed in float32 by the exporters; on these
    // small problems (at most 27 products per output) float rounding stays
    // far below the 1e-5 relative bound, so that bound is used as is.
    const double err = ref::max_rel_error(y, expected);
    EXPECT_LT(err, 1e-5) << "grouped_conv vs stored output";
    std::vector<int64_t> ref_shape;
    const auto r = ref::grouped_conv(x, w, bp, c.desc, &ref_shape);
    ASSERT_EQ(shape_str(ref_shape), shape_str(ds.y.shape)) << "reference output shape";
    double max_diff = 0, max_abs = 0;
    for (size_t i = 0; i < r.size(); ++i)
      max_diff = std::max(max_diff, std::fabs(r[i] - expected[i])),
      max_abs = std::max(max_abs, std::fabs(expected[i]));
    EXPECT_LT(max_diff / std::max(1.0, max_abs), 1e-5) << "reference vs stored output";
    std::cout << "  " << GetParam() << ": rel err " << err << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Backend, OnnxConv, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           std::replace_if(n.begin(), n.end(), [](char ch) { return !std::isalnum(ch); }, '_');
                           return n;
                         });

}  // namespace
}  // namespace batchconv::conformance

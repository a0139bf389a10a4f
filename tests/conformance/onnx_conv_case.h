// Loads one Conv case of ONNX's backend test data (libonnx-testdata): the
// Conv node's attributes from model.onnx mapped onto a batchconv::ConvDesc,
// its x / W / B from initializers or test_data_set_*/input_*.pb, and the
// stored output_0.pb of every data set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::conformance {

struct FloatTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct DataSet {
  std::string dir;  // .../test_data_set_N
  FloatTensor x, w, bias, y;  // bias.data empty when the node has none
};

struct OnnxConvCase {
  std::string dir;
  int spatial_dims = 0;  // 1, 2 or 3 (batchconv supports 1 and 2)
  ConvDesc desc;         // groups, strides, dilations, pads (auto_pad resolved)
  std::string attributes;  // the node's attributes as read, for messages
  std::vector<DataSet> data_sets;
};

// Throws std::runtime_error naming the file and what is wrong. Pads of 3-D
// cases are not mapped (spatial_dims tells the caller to skip them).
OnnxConvCase load_onnx_conv_case(const std::string& dir);

// The data root: $BATCHCONV_ONNX_TESTDATA if set, else the compiled-in default.
std::string onnx_testdata_root();

// Case directories (relative to the root, e.g. "node/test_basic_conv_with_padding")
// whose name starts with one of the prefixes, sorted.
std::vector<std::string> discover_cases(const std::string& root,
                                        const std::vector<std::string>& relative_prefixes);

}  // namespace batchconv::conformance

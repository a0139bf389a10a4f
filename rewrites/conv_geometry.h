// Conv-specific questions shared by the conv rewrites: reading a Conv's geometry (from its
// attributes and its weight's shape, never assumed), comparing two geometries, output sizes, and
// small builders for the tensors and nodes the rewrites emit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::rewrites {

struct ConvGeometry {
  ir::Node* node = nullptr;
  ir::Value* x = nullptr;
  ir::Value* w = nullptr;
  ir::Value* b = nullptr;              // nullptr when there is no bias
  std::vector<int64_t> wshape;         // (M, Cin/group, k...)
  int64_t group = 1;
  int64_t spatial = 0;                 // number of spatial dims
  std::vector<int64_t> strides, dilations, pads;  // defaults filled in; pads = begins then ends
  std::string auto_pad = "NOTSET";
  int64_t out_channels() const { return wshape[0]; }
  int64_t in_per_group() const { return wshape[1]; }
};

// Reads a Conv (domain ""). On failure returns nullopt and sets *reason.
std::optional<ConvGeometry> read_conv(ir::Node* n, std::string* reason);

// "" when a and b have the same geometry (spatial rank, kernel, Cin/group, strides, pads, dilations,
// auto_pad, group, bias presence); else what differs, naming both nodes' values.
std::string geometry_mismatch(const ConvGeometry& a, const ConvGeometry& b);

// Output spatial sizes for known input spatial sizes; nullopt when not computable.
std::optional<std::vector<int64_t>> conv_output_spatial(const ConvGeometry& c,
                                                        const std::vector<int64_t>& in_spatial);

// Float data of a constant weight/bias value (copy); nullopt when not a readable float constant.
std::optional<std::vector<float>> float_data(const ir::Value* v);

// Builders.
ir::Tensor int64_tensor(const std::vector<int64_t>& values);
ir::Tensor float_tensor(std::vector<int64_t> shape, std::vector<float> data);
void set_float_shape(ir::Value* v, const std::optional<std::vector<int64_t>>& shape);
void copy_attrs(const ir::Node* from, ir::Node* to);
void set_int_attr(ir::Node* n, const std::string& key, int64_t value);
void set_ints_attr(ir::Node* n, const std::string& key, const std::vector<int64_t>& values);
std::string shape_str(const std::vector<int64_t>& s);

}  // namespace batchconv::rewrites

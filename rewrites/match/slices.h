// "Which contiguous range of which axis of which tensor is this value?" for Slice (attribute form
// before opset 10, input form from 10) and Split outputs (attribute 'split' before opset 13, input
// from 13, or equal parts). Generic graph search: knows nothing about the consumers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace batchconv::rewrites::match {

struct AxisRange {
  ir::Value* data = nullptr;  // the sliced tensor
  ir::Node* node = nullptr;   // the Slice or Split
  int64_t axis = 0;           // normalised
  int64_t start = 0, end = 0; // [start, end), clamped to the axis size
};

// The range v selects, with one axis sliced at step 1. Needs the data's static shape (to resolve
// negative and clamped bounds). On failure returns nullopt and sets *why.
std::optional<AxisRange> axis_range_of(const ir::Value* v, std::string* why);

}  // namespace batchconv::rewrites::match

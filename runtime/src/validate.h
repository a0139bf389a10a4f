// Internal: shape checks shared by the entry points. Every failure throws
// batchconv::Error naming the op, the argument, its shape and what was
// expected.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::detail {

std::string shape_string(const std::vector<int64_t>& shape);

// Throws "<op>: <msg>".
[[noreturn]] void fail(const char* op, const std::string& msg);

// t has a non-null pointer, rank in [min_rank, max_rank], positive sizes
// and one stride per dimension.
void check_tensor(const char* op, const char* name, const TensorView& t, int min_rank,
                  int max_rank, const char* layout);

// Geometry fields: stride, dilation >= 1, padding >= 0, groups >= 1, and a
// valid activation.
void check_desc(const char* op, const ConvDesc& d, int spatial_dims);
void check_activation(const char* op, Activation a);

// t.shape == expected, else "<name> has shape (..) but <why>: expected (..)".
void check_shape(const char* op, const char* name, const TensorView& t,
                 const std::vector<int64_t>& expected, const std::string& why);

// Channels and groups of a conv: cin % groups, cout % groups, w's Cin_g.
// `x_desc`/`w_desc` describe the shapes for messages.
void check_groups(const char* op, const TensorView& x, int64_t cin, const TensorView& w,
                  int64_t cout, int64_t w_cin_g, int groups);

// Output spatial sizes of a conv with spatial input `in` (H, W or W) and
// kernel `k`; throws when the kernel does not fit.
std::vector<int64_t> conv_spatial_out(const char* op, const TensorView& x,
                                      const std::vector<int64_t>& in,
                                      const std::vector<int64_t>& k, const ConvDesc& d);

// y must be well-formed, have exactly `expected` shape, and no two of its
// elements may share memory.
void check_output(const char* op, const TensorView& y, const std::vector<int64_t>& expected);

// y's memory must not overlap any of the inputs (null entries are skipped).
void check_no_overlap(const char* op, const TensorView& y,
                      const std::vector<std::pair<const char*, const TensorView*>>& inputs);

}  // namespace batchconv::detail

// Internal helpers shared by the interpreter's kernels.
#pragma once

#include <string>
#include <vector>

#include "interpreter/interpreter.h"

namespace batchconv::interp {

using ir::Attribute;
using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;

// Kernels throw KernelError with a plain message; run_node prefixes the node.
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& what);

using Registry = std::map<std::string, Kernel>;  // key: "Op" or "domain.Op"
void register_math_kernels(Registry& r);
void register_shape_kernels(Registry& r);
void register_slice_kernels(Registry& r);
void register_conv_kernels(Registry& r);
void register_nn_kernels(Registry& r);
void register_reduce_kernels(Registry& r);

Tensor make_tensor(ir::DType dtype, std::vector<int64_t> shape);
Tensor int_tensor(std::vector<int64_t> shape, std::vector<int64_t> values);
std::string shape_str(const std::vector<int64_t>& s);

// Required input k (not omitted), and the integer values of an int tensor.
const Tensor& in(const Inputs& ins, size_t k, const char* what);
const Tensor* opt_in(const Inputs& ins, size_t k);
std::vector<int64_t> ints_of(const Tensor& t, const char* what);
// A float value as an int64, failing (naming `what`) on NaN, infinity or a
// value outside int64's range, where a plain cast is undefined behaviour.
int64_t float_to_int64(double v, const char* what);
// Element k as double / set element k, whatever the storage.
double get(const Tensor& t, int64_t k);
void set(Tensor& t, int64_t k, double v);
void copy_elem(const Tensor& src, int64_t s, Tensor& dst, int64_t d);

// Fails unless t's dtype is modelled and its data matches its shape.
void check_data(const Tensor& t, const std::string& what);

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape);
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what);
// Numpy broadcasting of two shapes; fails naming both.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Flat index into `src` (of shape src_shape, right-aligned and broadcast)
// for each element of out_shape, in row-major order.
std::vector<int64_t> broadcast_index(const std::vector<int64_t>& src_shape, const std::vector<int64_t>& out_shape);

}  // namespace batchconv::interp

// The reference interpreter: runs an IR graph on concrete tensors, to verify
// that rewrites keep the function (batchconv-opt --verify, tests) and to fold
// constants (fold_constants uses these kernels, not a second implementation).
//
// Float tensors are computed in float32 (conv and matmul accumulate in
// double); integer tensors in int64. Plain loops, meant to be obviously
// right rather than fast.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::interp {

using ir::Tensor;

// Errors name the node: "node 'conv3' (Conv): group 3 does not divide 64 input channels".
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Inputs are nullptr for omitted optional inputs. `opset` is the model's
// version of the node's domain (it selects attribute vs input forms).
using Kernel = std::function<std::vector<Tensor>(const ir::Node&, const std::vector<const Tensor*>&, int64_t opset)>;

// nullptr when the op has no kernel.
const Kernel* find_kernel(const std::string& domain, const std::string& op_type);
bool supports(const ir::Node& n);
// Every (domain, op_type) with a kernel, "Conv" or "batchconv.BatchedWeightConv".
std::vector<std::string> supported_ops();

// Runs one node; any failure becomes an Error naming the node.
std::vector<Tensor> run_node(const ir::Node& n, const std::vector<const Tensor*>& inputs, int64_t opset);

using TensorMap = std::map<std::string, Tensor>;

// Runs the whole graph. `inputs` gives every graph input that is not an
// initializer (initializer-backed inputs may be overridden). Returns the graph
// outputs by name. Throws Error on a missing input, a wrong input shape, an op
// without a kernel (naming the node) or a kernel error.
TensorMap run(const ir::Model& model, const TensorMap& inputs);

// Uniform [-1, 1) float / small non-negative ints for every non-initializer
// graph input. Symbolic dims take their value from `dims` (by dim_param name)
// or `default_dim`.
// Elements one tensor, all inputs together, and all live tensors together may
// hold (default 2^28). Process-wide; lowered by the fuzz targets so that no
// single input runs for long under the sanitizers.
int64_t element_limit();
void set_element_limit(int64_t n);

TensorMap random_inputs(const ir::Model& model, uint64_t seed, const std::map<std::string, int64_t>& dims = {},
                        int64_t default_dim = 2);

// Largest |a-b| / max(1, |b|) over the elements (infinity when shapes or
// dtypes differ).
double max_relative_difference(const Tensor& a, const Tensor& b);

}  // namespace batchconv::interp

// A small, strict .npy reader/writer for float32 tensors, so that batchconv-bench
// inputs and outputs can be exchanged with numpy / PyTorch.
//
// Accepted: format versions 1.0, 2.0 and 3.0; descr '<f4' (float32, little-
// endian; '=f4' is accepted on this little-endian host); fortran_order False
// (C order); any rank, including 0. Anything else (float64, big-endian, object
// arrays, Fortran order, truncated data, trailing bytes) is an error naming the
// file and what was expected. Written files are version 1.0 (2.0 when the
// header would not fit), '<f4', C order, header padded to 64 bytes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bcbench {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // numel(shape) floats, C order
};

NpyArray read_npy(const std::string& path);
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data);

// Parses a header dict such as "{'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }" (exposed for the tests). `what` prefixes errors.
void parse_npy_header(const std::string& header, const std::string& what,
                      std::vector<int64_t>* shape);

}  // namespace bcbench

// Shared helpers for the kernel tests: fresh random data with a printed seed,
// owned tensors that can be viewed contiguously or through non-contiguous
// strides, and a check of a kernel's output against the reference.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::test {

// Relative error bound of the kernel tests: max|y - ref| / max(1, max|ref|).
constexpr double kTolerance = 1e-5;

// The run's base seed: BATCHCONV_TEST_SEED if set (to reproduce a failure),
// otherwise drawn once from std::random_device. Every failure message prints it.
uint64_t base_seed();
// A generator for one test case, derived from the base seed and the case's name.
std::mt19937_64 case_rng(const std::string& case_name);
// "seed=123 (rerun with BATCHCONV_TEST_SEED=123 --gtest_filter=*<name>*)".
std::string seed_note(const std::string& case_name);

std::string shape_str(const std::vector<int64_t>& shape);  // "(2, 3, 5)"
std::string desc_str(const ConvDesc& d, int dims);          // "s=2x1 d=1x1 p=1,0/0,2 g=3 relu"
int64_t product(const std::vector<int64_t>& shape);

// How a tensor's memory is laid out behind its view.
enum class Layout {
  Contiguous,   // plain row-major
  Padded,       // embedded in a larger buffer: every dim padded, innermost stride 1
  InnerStrided, // padded and the innermost stride is 2
};
const char* layout_name(Layout l);

// A tensor that owns its storage. Storage outside the view is filled with NaN
// (inputs: reading it poisons the result) or with a sentinel (outputs: writing
// it is detected by untouched_outside_view()).
class Tensor {
 public:
  Tensor() = default;
  // Allocates storage for `shape` laid out as `layout`.
  Tensor(std::vector<int64_t> shape, Layout layout);
  // A view of existing storage with explicit strides (e.g. a permuted view).
  static Tensor with_strides(std::vector<int64_t> shape, std::vector<int64_t> storage_shape,
                             std::vector<int64_t> strides);

  TensorView view() { return TensorView(storage_.data() + offset_, shape_, strides_); }
  TensorView* view_ptr() { view_ = view(); return &view_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  std::vector<float>& storage() { return storage_; }

  // Fills the view with U(-1, 1) and everything outside it with `outside`.
  void fill_random(std::mt19937_64& rng, float outside);
  // Fills the view with `in_view` and everything outside it with `outside`.
  void fill(float in_view, float outside);
  // Element at a row-major index of the view.
  float& at(const std::vector<int64_t>& index);
  // True when storage outside the view still holds `outside` everywhere.
  bool untouched_outside_view(float outside) const;
  // Contiguous copy of the view's elements.
  std::vector<float> to_contiguous() const;

 private:
  std::vector<int64_t> shape_, strides_;
  int64_t offset_ = 0;  // of the view's first element in storage_
  std::vector<float> storage_;
  std::vector<char> in_view_;  // 1 where storage belongs to the view
  TensorView view_;
  void mark_view();
};

// Sentinel written around outputs; a finite value a kernel never produces by chance.
constexpr float kSentinel = -7777.25f;

// Prepares an output: NaN inside the view (an element left unwritten fails the
// check) and kSentinel outside it.
void poison_output(Tensor& y);

// Checks y against ref; on failure the message names the case and the seed.
// Also checks that y's storage outside its view was not written.
void expect_matches(Tensor& y, const std::vector<double>& ref,
                    const std::vector<int64_t>& ref_shape, const std::string& case_name);

}  // namespace batchconv::test

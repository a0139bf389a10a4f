#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>

#include "reference.h"

namespace batchconv::test {

uint64_t base_seed() {
  static const uint64_t seed = [] {
    if (const char* env = std::getenv("BATCHCONV_TEST_SEED"))
      return static_cast<uint64_t>(std::strtoull(env, nullptr, 10));
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

std::mt19937_64 case_rng(const std::string& case_name) {
  return std::mt19937_64(base_seed() ^ std::hash<std::string>{}(case_name));
}

std::string seed_note(const std::string& case_name) {
  std::ostringstream s;
  s << "seed=" << base_seed() << " (rerun: BATCHCONV_TEST_SEED=" << base_seed()
    << " <test binary> --gtest_filter='*" << case_name << "*')";
  return s.str();
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream s;
  s << "(";
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ")";
  return s.str();
}

std::string desc_str(const ConvDesc& d, int dims) {
  std::ostringstream s;
  if (dims == 2) {
    s << "stride=" << d.stride[0] << "x" << d.stride[1] << " dilation=" << d.dilation[0] << "x"
      << d.dilation[1] << " pad(h,w begin/end)=" << d.pad_begin[0] << "," << d.pad_begin[1] << "/"
      << d.pad_end[0] << "," << d.pad_end[1];
  } else {
    s << "stride=" << d.stride[0] << " dilation=" << d.dilation[0] << " pad=" << d.pad_begin[0]
      << "/" << d.pad_end[0];
  }
  s << " groups=" << d.groups << (d.activation == Activation::ReLU ? " relu" : "");
  return s.str();
}

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t v : shape) n *= v;
  return n;
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Padded: return "padded";
    case Layout::InnerStrided: return "inner-strided";
  }
  return "?";
}

namespace {
std::vector<int64_t> row_major(const std::vector<int64_t>& extent) {
  std::vector<int64_t> s(extent.size(), 1);
  for (int i = static_cast<int>(extent.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * extent[i + 1];
  return s;
}

// Calls f(offset) for every element of the view, in row-major order.
void for_each_offset(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides,
                     const std::function<void(int64_t)>& f) {
  const int64_t n = product(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < shape.size(); ++k) off += idx[k] * strides[k];
    f(off);
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}
}  // namespace

Tensor::Tensor(std::vector<int64_t> shape, Layout layout) : shape_(std::move(shape)) {
  const size_t r = shape_.size();
  std::vector<int64_t> extent = shape_;
  if (layout == Layout::Contiguous) {
    strides_ = row_major(extent);
  } else {
    // One element of margin before and after every dim; the innermost gets more.
    const int64_t inner_step = layout == Layout::InnerStrided ? 2 : 1;
    for (size_t i = 0; i < r; ++i) extent[i] = shape_[i] + 2;
    extent[r - 1] = shape_[r - 1] * inner_step + 3;
    strides_ = row_major(extent);
    for (size_t i = 0; i + 1 < r; ++i) offset_ += strides_[i];
    offset_ += 1;
    strides_[r - 1] = inner_step;
  }
  // At least one element, so an empty view still has a non-null pointer.
  storage_.assign(static_cast<size_t>(std::max<int64_t>(1, product(extent))), 0.0f);
  mark_view();
}

Tensor Tensor::with_strides(std::vector<int64_t> shape, std::vector<int64_t> storage_shape,
                            std::vector<int64_t> strides) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.storage_.assign(static_cast<size_t>(std::max<int64_t>(1, product(storage_shape))), 0.0f);
  t.mark_view();
  return t;
}

void Tensor::mark_view() {
  in_view_.assign(storage_.size(), 0);
  for_each_offset(shape_, strides_, [&](int64_t off) { in_view_[offset_ + off] = 1; });
}

void Tensor::fill_random(std::mt19937_64& rng, float outside) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < storage_.size(); ++i) storage_[i] = in_view_[i] ? u(rng) : outside;
}

void Tensor::fill(float in_view, float outside) {
  for (size_t i = 0; i < storage_.size(); ++i) storage_[i] = in_view_[i] ? in_view : outside;
}

void poison_output(Tensor& y) { y.fill(std::numeric_limits<float>::quiet_NaN(), kSentinel); }

float& Tensor::at(const std::vector<int64_t>& index) {
  int64_t off = offset_;
  for (size_t k = 0; k < index.size(); ++k) off += index[k] * strides_[k];
  return storage_[static_cast<size_t>(off)];
}

bool Tensor::untouched_outside_view(float outside) const {
  for (size_t i = 0; i < storage_.size(); ++i)
    if (!in_view_[i] && !(storage_[i] == outside)) return false;
  return true;
}

std::vector<float> Tensor::to_contiguous() const {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(product(shape_)));
  for_each_offset(shape_, strides_, [&](int64_t off) { out.push_back(storage_[offset_ + off]); });
  return out;
}

void expect_matches(Tensor& y, const std::vector<double>& ref,
                    const std::vector<int64_t>& ref_shape, const std::string& case_name) {
  ASSERT_EQ(shape_str(y.shape()), shape_str(ref_shape))
      << case_name << ": test bug, y allocated with the wrong shape";
  const double err = ref::max_rel_error(y.view(), ref);
  EXPECT_LT(err, kTolerance) << case_name << ": relative error " << err << " (NaN/inf or unwritten "
                             << "elements count as huge); " << seed_note(case_name);
  EXPECT_TRUE(y.untouched_outside_view(kSentinel))
      << case_name << ": the kernel wrote outside y's view; " << seed_note(case_name);
}

}  // namespace batchconv::test

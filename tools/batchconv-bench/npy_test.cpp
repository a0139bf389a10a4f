// .npy reader/writer: round trips and a clear error for each unsupported file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "npy.h"

namespace bcbench {
namespace {

std::string tmp(const std::string& name) {
  return (testing::TempDir().empty() ? std::string("/tmp/") : testing::TempDir()) + "bcnpy_" + name;
}

void write_raw(const std::string& path, const std::string& dict, size_t data_bytes, int version = 1) {
  std::string h = dict;
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY", 6);
  f.put(static_cast<char>(version));
  f.put(0);
  const uint32_t n = static_cast<uint32_t>(h.size());
  f.put(static_cast<char>(n & 255));
  f.put(static_cast<char>((n >> 8) & 255));
  if (version > 1) f.put(0), f.put(0);
  f << h;
  f << std::string(data_bytes, '\0');
}

std::string error_of(const std::string& path) {
  try {
    read_npy(path);
  } catch (const NpyError& e) {
    return e.what();
  }
  return "";
}

TEST(Npy, RoundTripsRandomShapes) {
  std::mt19937 rng(7);
  for (int rank = 0; rank <= 5; ++rank) {
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) shape.push_back(1 + rng() % 5), n *= shape.back();
    std::vector<float> v(n);
    for (auto& x : v) x = std::uniform_real_distribution<float>(-3, 3)(rng);
    const std::string p = tmp("rt" + std::to_string(rank) + ".npy");
    write_npy(p, shape, v.data());
    NpyArray a = read_npy(p);
    EXPECT_EQ(a.shape, shape);
    EXPECT_EQ(a.data, v);
  }
}

TEST(Npy, ReadsVersion2AndZeroSizedArrays) {
  const std::string p = tmp("v2.npy");
  write_raw(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, 2);
  EXPECT_EQ(read_npy(p).shape, (std::vector<int64_t>{2, 3}));
  const std::string z = tmp("zero.npy");
  write_npy(z, {0, 4}, nullptr);
  EXPECT_EQ(read_npy(z).data.size(), 0u);
}

TEST(Npy, RejectsFloat64WithAHint) {
  const std::string p = tmp("f8.npy");
  write_raw(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16);
  const std::string e = error_of(p);
  EXPECT_NE(e.find("'<f8'"), std::string::npos) << e;
  EXPECT_NE(e.find("float32"), std::string::npos) << e;
}

TEST(Npy, RejectsBigEndianFortranOrderAndOtherTypes) {
  const std::string p = tmp("bad.npy");
  write_raw(p, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8);
  EXPECT_NE(error_of(p).find("big-endian"), std::string::npos);
  write_raw(p, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16);
  EXPECT_NE(error_of(p).find("fortran_order"), std::string::npos);
  write_raw(p, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16);
  EXPECT_NE(error_of(p).find("not supported"), std::string::npos);
  write_raw(p, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8);
  EXPECT_NE(error_of(p).find("not supported"), std::string::npos);
}

TEST(Npy, RejectsTruncatedAndTrailingDataAndBadMagic) {
  const std::string p = tmp("trunc.npy");
  write_raw(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 60);
  EXPECT_NE(error_of(p).find("truncated data"), std::string::npos);
  write_raw(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 20);
  EXPECT_NE(error_of(p).find("trailing"), std::string::npos);
  {
    std::ofstream f(p, std::ios::binary);
    f << "hello, not numpy";
  }
  EXPECT_NE(error_of(p).find("magic"), std::string::npos);
  EXPECT_NE(error_of(tmp("does_not_exist.npy")).find("cannot open"), std::string::npos);
}

TEST(Npy, RejectsMalformedHeaders) {
  std::vector<int64_t> shape;
  EXPECT_THROW(parse_npy_header("{'descr': '<f4', 'shape': (2,), }", "h", &shape), NpyError);
  EXPECT_THROW(parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", "h", &shape),
               NpyError);
  EXPECT_THROW(parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': 7, }", "h", &shape), NpyError);
  EXPECT_THROW(parse_npy_header("not a dict", "h", &shape), NpyError);
  parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1, 2), }", "h", &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{3, 1, 2}));
}

}  // namespace
}  // namespace bcbench

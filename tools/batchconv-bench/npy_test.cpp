// .npy reader/writer: round trips and a clear error for each unsupported file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include "alloc_counter.h"
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

// A 92-byte file claiming 4 GiB of data is refused before any of it is allocated.
TEST(Npy, HugeClaimIsRefusedBeforeAllocating) {
  const std::string p = tmp("huge.npy");
  write_raw(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 32768, 32768), }", 0);
  ASSERT_TRUE(mem::counting_active());
  mem::reset_peak();
  const int64_t live0 = mem::live_bytes();
  const std::string e = error_of(p);
  EXPECT_NE(e.find("truncated data"), std::string::npos) << e;
  EXPECT_NE(e.find("4294967296 bytes"), std::string::npos) << e;
  EXPECT_LT(mem::peak_bytes() - live0, int64_t(1) << 20);
}

TEST(Npy, DirectoryIsNotAFile) {
  const std::string d = tmp("dir.npy");
  ::mkdir(d.c_str(), 0755);
  const std::string e = error_of(d);
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}

// write_npy goes through a temporary file: a failed write keeps the old file
// whole, and leaves no temporary behind.
TEST(Npy, FailedWriteKeepsTheOldFile) {
  const std::string dir = tmp("wdir");
  std::filesystem::remove_all(dir);
  ::mkdir(dir.c_str(), 0755);
  const std::string p = dir + "/y.npy";
  const float v[3] = {1, 2, 3};
  write_npy(p, {3}, v);
  // /dev/full fails every write; a target in a folder we cannot write to fails at creation.
  EXPECT_THROW(write_npy("/dev/full", {3}, v), NpyError);
  ::chmod(dir.c_str(), 0555);
  const bool root = ::geteuid() == 0;
  if (!root) EXPECT_THROW(write_npy(p, {3}, v), NpyError);
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(read_npy(p).data, std::vector<float>(v, v + 3));
  // A write that fails midway (the file size limit is hit after the header).
  {
    std::vector<float> big(1000, 5.f);
    struct rlimit old_limit;
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old_limit;
    small.rlim_cur = 1024;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    EXPECT_THROW(write_npy(p, {1000}, big.data()), NpyError);
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    ::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(read_npy(p).data, std::vector<float>(v, v + 3));
    int entries = 0;
    if (DIR* dp = ::opendir(dir.c_str())) {
      while (dirent* de = ::readdir(dp)) entries += de->d_name[0] != '.' || std::string(de->d_name).size() > 2;
      ::closedir(dp);
    }
    EXPECT_EQ(entries, 1) << "a temporary file was left in " << dir;
  }
  // A symlink target is refused outright instead of being replaced by a file.
  const std::string link = dir + "/link.npy";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(p.c_str(), link.c_str()), 0);
  EXPECT_THROW(write_npy(link, {3}, v), NpyError);
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

}  // namespace
}  // namespace bcbench

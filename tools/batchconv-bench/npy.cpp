#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace bcbench {
namespace {

const char kMagic[] = "\x93NUMPY";

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Returns the text of the value of key `key` in the header dict: up to the
// next top-level ',' or '}' (a tuple counts as one value).
std::string dict_value(const std::string& h, const std::string& key, const std::string& what) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) k = h.find("\"" + key + "\"");
  if (k == std::string::npos) throw NpyError(what + ": header has no '" + key + "' entry: " + h);
  size_t colon = h.find(':', k);
  if (colon == std::string::npos) throw NpyError(what + ": malformed header: " + h);
  size_t i = colon + 1;
  int depth = 0;
  size_t start = i;
  for (; i < h.size(); ++i) {
    char c = h[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return trim(h.substr(start, i - start));
}

int64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw NpyError(what + ": negative dimension in shape");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 4 / d)
      throw NpyError(what + ": shape has too many elements");
    n *= d;
  }
  return n;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

void parse_npy_header(const std::string& header, const std::string& what,
                      std::vector<int64_t>* shape) {
  std::string h = trim(header);
  if (h.empty() || h.front() != '{' || h.back() != '}')
    throw NpyError(what + ": header is not a Python dict literal: " + h);
  std::string descr = dict_value(h, "descr", what);
  if (descr != "'<f4'" && descr != "'=f4'" && descr != "\"<f4\"") {
    std::string hint;
    if (descr == "'<f8'") hint = " (float64: save x.astype(numpy.float32))";
    else if (descr == "'>f4'") hint = " (big-endian float32: save x.astype('<f4'))";
    throw NpyError(what + ": dtype " + descr + " is not supported; expected float32 little-endian '<f4'" +
                   hint);
  }
  std::string fortran = dict_value(h, "fortran_order", what);
  if (fortran == "True")
    throw NpyError(what + ": fortran_order is True; expected C order (save numpy.ascontiguousarray(x))");
  if (fortran != "False") throw NpyError(what + ": bad fortran_order value " + fortran);
  std::string tup = dict_value(h, "shape", what);
  if (tup.size() < 2 || tup.front() != '(' || tup.back() != ')')
    throw NpyError(what + ": shape is not a tuple: " + tup);
  shape->clear();
  std::stringstream ss(tup.substr(1, tup.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    if (item.find_first_not_of("0123456789") != std::string::npos || item.size() > 18)
      throw NpyError(what + ": bad dimension '" + item + "' in shape " + tup);
    shape->push_back(std::stoll(item));
  }
}

NpyArray read_npy(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw NpyError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) throw NpyError(path + ": not a regular file (expected a .npy file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw NpyError(path + ": cannot open for reading");
  char magic[6];
  if (!f.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0)
    throw NpyError(path + ": not a .npy file (missing \\x93NUMPY magic)");
  unsigned char ver[2];
  if (!f.read(reinterpret_cast<char*>(ver), 2)) throw NpyError(path + ": truncated header");
  uint32_t hlen = 0;
  if (ver[0] == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) throw NpyError(path + ": truncated header");
    hlen = b[0] | (b[1] << 8);
  } else if (ver[0] == 2 || ver[0] == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) throw NpyError(path + ": truncated header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
    if (hlen > (1u << 24)) throw NpyError(path + ": header length " + std::to_string(hlen) + " is implausible");
  } else {
    throw NpyError(path + ": unsupported .npy format version " + std::to_string(ver[0]) + "." +
                   std::to_string(ver[1]) + " (expected 1.0, 2.0 or 3.0)");
  }
  std::string header(hlen, '\0');
  if (!f.read(&header[0], hlen)) throw NpyError(path + ": truncated header");
  NpyArray a;
  parse_npy_header(header, path, &a.shape);
  const int64_t n = checked_numel(a.shape, path);
  // The size the header claims is checked against the file before any memory is taken.
  const int64_t data_at = static_cast<int64_t>(f.tellg());
  const int64_t have = static_cast<int64_t>(st.st_size) - data_at;
  if (have < n * 4)
    throw NpyError(path + ": truncated data: the header's shape " + shape_text(a.shape) + " needs " +
                   std::to_string(n * 4) + " bytes of float32, the file has " + std::to_string(have));
  if (have > n * 4)
    throw NpyError(path + ": trailing bytes after the " + std::to_string(n) + " float32 values");
  a.data.resize(static_cast<size_t>(n));
  if (n > 0 && !f.read(reinterpret_cast<char*>(a.data.data()), n * 4))
    throw NpyError(path + ": truncated data: expected " + std::to_string(n * 4) + " bytes of float32");
  return a;
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  std::string tup = "(";
  for (int64_t d : shape) tup += std::to_string(d) + ", ";
  if (shape.size() > 1) tup.resize(tup.size() - 2);       // "(2, 3)"
  else if (shape.size() == 1) tup.resize(tup.size() - 1);  // "(5,)"
  tup += ")";
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + tup + ", }";
  // Version 1.0 stores the header length in 2 bytes; 2.0 in 4.
  int version = (dict.size() + 1 + 10 > 65535) ? 2 : 1;
  size_t prefix = version == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  const int64_t n = checked_numel(shape, path);
  // Written to a temporary file beside the target, then renamed: a failed
  // write leaves the old file (or none) and no temporary behind.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    throw NpyError(path + ": exists and is not a regular file; refusing to replace it");
  const size_t slash = path.rfind('/');
  std::string tmpl = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".npy-tmp-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw NpyError(path + ": cannot create a temporary file beside it (" + std::strerror(errno) + ")");
  const std::string tmp(name.data());
  auto put = [&](const void* p, size_t len) {
    const char* c = static_cast<const char*>(p);
    while (len > 0) {
      const ssize_t w = ::write(fd, c, len);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      c += w, len -= static_cast<size_t>(w);
    }
    return true;
  };
  const char v[2] = {static_cast<char>(version), 0};
  uint32_t hl = static_cast<uint32_t>(dict.size());
  const char l4[4] = {char(hl & 255), char((hl >> 8) & 255), char((hl >> 16) & 255), char(hl >> 24)};
  bool ok = put(kMagic, 6) && put(v, 2) && put(l4, version == 1 ? 2 : 4) && put(dict.data(), dict.size()) &&
            (n == 0 || put(data, static_cast<size_t>(n) * 4)) && ::fchmod(fd, 0644) == 0;
  const int err = errno;
  if (::close(fd) != 0 && ok) ok = false;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    ::unlink(tmp.c_str());
    throw NpyError(path + ": write failed (" + std::strerror(e) + "); the file is left as it was");
  }
}

}  // namespace bcbench

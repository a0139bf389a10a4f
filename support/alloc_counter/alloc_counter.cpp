// Counting replacements for the malloc family (see alloc_counter.h). glibc
// supports replacing malloc from the main program; the wrappers forward to
// glibc's own __libc_* entry points and only add two relaxed atomic updates.
#include "alloc_counter.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
std::atomic<bool> g_active{false};

inline void note_alloc(void* p) {
  if (!p) return;
  const int64_t n = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t now = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  g_active.store(true, std::memory_order_relaxed);
}

inline void note_free(void* p) {
  if (!p) return;
  g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
}

int64_t status_field_bytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t klen = std::strlen(key);
  while (std::getline(f, line)) {
    if (line.compare(0, klen, key) == 0) return std::stoll(line.substr(klen)) * 1024;  // "kB"
  }
  return -1;
}

}  // namespace

extern "C" {

void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  note_alloc(p);
  return p;
}

void free(void* p) {
  note_free(p);
  __libc_free(p);
}

void* calloc(size_t a, size_t b) {
  void* p = __libc_calloc(a, b);
  note_alloc(p);
  return p;
}

void* realloc(void* old, size_t n) {
  const int64_t old_n = old ? static_cast<int64_t>(malloc_usable_size(old)) : 0;
  void* p = __libc_realloc(old, n);
  if (p) {
    g_live.fetch_sub(old_n, std::memory_order_relaxed);
    note_alloc(p);
  } else if (n == 0 && old) {
    g_live.fetch_sub(old_n, std::memory_order_relaxed);  // realloc(p, 0) freed p
  }
  return p;
}

void* memalign(size_t align, size_t n) {
  void* p = __libc_memalign(align, n);
  note_alloc(p);
  return p;
}

void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

int posix_memalign(void** out, size_t align, size_t n) {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  void* p = memalign(align, n);
  if (!p && n != 0) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t n) { return memalign(static_cast<size_t>(sysconf(_SC_PAGESIZE)), n); }

void* pvalloc(size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return memalign(page, (n + page - 1) / page * page);
}

}  // extern "C"

namespace bcbench::mem {

// Start-up (iostreams, locale) always allocates, so the flag is set by now.
bool counting_active() { return g_active.load(); }
int64_t live_bytes() { return g_live.load(); }
void reset_peak() { g_peak.store(g_live.load()); }
int64_t peak_bytes() { return g_peak.load(); }

int64_t rss_bytes() { return status_field_bytes("VmRSS:"); }
int64_t rss_peak_bytes() { return status_field_bytes("VmHWM:"); }
bool reset_rss_peak() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return (std::fclose(f) == 0) && ok;
}
void trim() { malloc_trim(0); }

}  // namespace bcbench::mem

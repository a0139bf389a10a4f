// Halide's scratch allocations in the CPU kernels (a task's padded input,
// staged rows, packed weights) come from a per-thread cache of freed blocks
// instead of straight from malloc.
//
// The blocks are a few hundred KiB to a few MiB, allocated and freed by
// every task of every call. glibc serves such sizes with fresh mmaps (or
// trims them back to the system), so each task paid a page fault per 4 KiB
// of its scratch: a 128-image 64-channel 56x56 conv took 185 ms alone
// against 133 ms once another kernel had raised glibc's mmap threshold
// (120k against 52k page faults for the same calls; batchconv-bench, Intel
// Xeon, 2 threads). A freed block stays with the thread that freed it, in
// size classes of 1/8 of a power of two; each thread keeps at most
// kThreadBytes (the oldest blocks go first), and its blocks are released
// when it exits. Blocks are 128-byte aligned with readable slack before and
// after, as halide_malloc requires.
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "HalideRuntime.h"

namespace batchconv::detail {
namespace {

constexpr size_t kAlign = 128;                  // header and alignment
constexpr size_t kSlack = 64;                   // readable bytes past the end
constexpr size_t kThreadBytes = size_t{64} << 20;
constexpr int kSlots = 32;

struct ThreadCache {
  void* raw[kSlots];
  size_t cap[kSlots];
  int count = 0;
  size_t bytes = 0;
};

pthread_key_t g_key;

void release(void* p) {
  auto* c = static_cast<ThreadCache*>(p);
  for (int k = 0; k < c->count; ++k) std::free(c->raw[k]);
  delete c;
}

ThreadCache* cache() {
  void* p = pthread_getspecific(g_key);
  if (p) return static_cast<ThreadCache*>(p);
  auto* c = new (std::nothrow) ThreadCache;
  if (c && pthread_setspecific(g_key, c) != 0) {
    delete c;
    c = nullptr;
  }
  return c;
}

size_t size_class(size_t n) {
  if (n <= 4096) return 4096;
  const int e = 63 - __builtin_clzll(static_cast<unsigned long long>(n - 1));
  const size_t step = size_t{1} << (e - 3);
  return (n + step - 1) / step * step;
}

void* scratch_malloc(void*, size_t n) {
  const size_t cap = size_class(n + kSlack);
  if (ThreadCache* c = cache()) {
    for (int k = c->count - 1; k >= 0; --k) {
      if (c->cap[k] != cap) continue;
      void* raw = c->raw[k];
      c->bytes -= cap;
      for (int j = k + 1; j < c->count; ++j) c->raw[j - 1] = c->raw[j], c->cap[j - 1] = c->cap[j];
      --c->count;
      return static_cast<char*>(raw) + kAlign;
    }
  }
  void* raw = std::aligned_alloc(kAlign, kAlign + cap);
  if (!raw) return nullptr;
  *static_cast<size_t*>(raw) = cap;
  return static_cast<char*>(raw) + kAlign;
}

void scratch_free(void*, void* p) {
  if (!p) return;
  void* raw = static_cast<char*>(p) - kAlign;
  const size_t cap = *static_cast<size_t*>(raw);
  ThreadCache* c = cap <= kThreadBytes ? cache() : nullptr;
  if (!c) {
    std::free(raw);
    return;
  }
  while (c->count > 0 && (c->count == kSlots || c->bytes + cap > kThreadBytes)) {
    std::free(c->raw[0]);  // the oldest
    c->bytes -= c->cap[0];
    for (int j = 1; j < c->count; ++j) c->raw[j - 1] = c->raw[j], c->cap[j - 1] = c->cap[j];
    --c->count;
  }
  c->raw[c->count] = raw;
  c->cap[c->count] = cap;
  ++c->count;
  c->bytes += cap;
}

// Installed when the library loads, before any kernel can allocate.
struct Install {
  Install() {
    if (pthread_key_create(&g_key, release) != 0) return;  // keep Halide's allocator
    halide_set_custom_malloc(scratch_malloc);
    halide_set_custom_free(scratch_free);
  }
} g_install;

}  // namespace
}  // namespace batchconv::detail

#include "output_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace batchconv_python {
namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

std::size_t round_up(std::size_t b) { return (b + kHuge - 1) / kHuge * kHuge; }

std::size_t default_limit() {
  if (const char* env = std::getenv("BATCHCONV_OUTPUT_CACHE_BYTES")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return static_cast<std::size_t>(v);
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::size_t{1} << 30;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 4;
}

struct Pool {
  std::mutex m;
  std::multimap<std::size_t, void*> free;  // mapped size -> block
  std::size_t cached = 0;
  std::size_t limit = default_limit();
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: tensors may outlive static destruction
  return *p;
}

void unmap(void* p, std::size_t mapped) { munmap(p, mapped); }

// A fresh 2 MiB aligned mapping of `mapped` bytes, advised onto huge pages.
void* map_fresh(std::size_t mapped) {
  const std::size_t over = mapped + kHuge;
  void* raw = mmap(nullptr, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + kHuge - 1) & ~(kHuge - 1);
  if (aligned > base) munmap(raw, aligned - base);
  const std::uintptr_t end = base + over, used_end = aligned + mapped;
  if (end > used_end) munmap(reinterpret_cast<void*>(used_end), end - used_end);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  madvise(p, mapped, MADV_HUGEPAGE);  // a hint: failure leaves ordinary pages
#endif
  return p;
}

// Drops cached blocks, largest first, until at most `keep` bytes remain. Lock held.
void trim_locked(Pool& P, std::size_t keep) {
  while (P.cached > keep && !P.free.empty()) {
    auto it = std::prev(P.free.end());
    P.cached -= it->first;
    unmap(it->second, it->first);
    P.free.erase(it);
  }
}

}  // namespace

void* pool_take(std::size_t bytes, std::size_t* mapped) {
  const std::size_t want = round_up(bytes);
  Pool& P = pool();
  {
    std::lock_guard<std::mutex> lock(P.m);
    // The smallest cached block that fits, wasting at most a quarter of it.
    auto it = P.free.lower_bound(want);
    if (it != P.free.end() && it->first - want <= it->first / 4) {
      void* p = it->second;
      *mapped = it->first;
      P.cached -= it->first;
      P.free.erase(it);
      return p;
    }
  }
  *mapped = want;
  return map_fresh(want);
}

void pool_give(void* p, std::size_t mapped) noexcept {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  if (mapped > P.limit) {
    unmap(p, mapped);
    return;
  }
  trim_locked(P, P.limit - mapped);
  P.free.emplace(mapped, p);
  P.cached += mapped;
}

void pool_set_limit(std::size_t bytes) {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  P.limit = bytes;
  trim_locked(P, bytes);
}

std::size_t pool_limit() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  return P.limit;
}

std::size_t pool_cached() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  return P.cached;
}

void pool_empty() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  trim_locked(P, 0);
}

}  // namespace batchconv_python

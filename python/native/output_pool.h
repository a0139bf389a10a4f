// A cache of the package's large CPU outputs (conv outputs and input
// gradients), the CPU counterpart of PyTorch's CUDA caching allocator.
//
// Memory the kernel writes for the first time costs a page fault per page,
// taken inside the kernel's parallel loops; with the operating system
// handing out fresh zeroed pages on every call (PyTorch's CPU allocator
// returns large blocks to it), a MAML layer's forward + backward spent about
// a fifth of its time there. A block freed by its last tensor goes back to
// this cache instead, already mapped (on transparent huge pages where the
// kernel allows), and the next output of about its size reuses it.
//
// Bounded: at most limit() bytes are kept while unused (default a quarter
// of physical memory, BATCHCONV_OUTPUT_CACHE_BYTES or set_limit() to
// change, 0 to turn caching off); the rest is returned to the system.
// empty() returns every unused block now. Only outputs of at least
// kMinBytes come from here; smaller ones are torch.empty's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace batchconv_python {

constexpr std::size_t kMinBytes = std::size_t{4} << 20;

// One block of at least `bytes`, 2 MiB aligned; its mapped size in *mapped.
// Throws std::bad_alloc when the system has no memory for it.
void* pool_take(std::size_t bytes, std::size_t* mapped);
// Returns a block from pool_take (cached or unmapped, within the limit).
void pool_give(void* p, std::size_t mapped) noexcept;

void pool_set_limit(std::size_t bytes);
std::size_t pool_limit();
std::size_t pool_cached();  // bytes held unused now
void pool_empty();

}  // namespace batchconv_python

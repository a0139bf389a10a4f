// Heap accounting for "peak extra memory": the bench executables replace
// glibc's malloc family (alloc_counter.cpp, compiled into each executable) with
// thin wrappers that count live bytes (malloc_usable_size of each block) and
// keep a high-water mark. Every heap allocation in the process goes through
// them: C++ new, oneDNN's scratchpads, the Halide runtime's halide_malloc,
// libgomp, and the bench's own temporaries (repeat buffers, transposes).
// Memory obtained with a direct mmap() (not via malloc) is not seen; the RSS
// high-water mark below is reported beside it as a cross-check.
#pragma once

#include <cstdint>

namespace bcbench::mem {

// True when the counting malloc is linked into this executable and active.
bool counting_active();
// Bytes currently allocated through malloc and not yet freed.
int64_t live_bytes();
// Sets the high-water mark to the current live bytes.
void reset_peak();
// Highest live_bytes() since the last reset_peak().
int64_t peak_bytes();

// Resident set size and its high-water mark from /proc/self/status, in bytes
// (-1 when unavailable). reset_rss_peak() writes "5" to /proc/self/clear_refs.
int64_t rss_bytes();
int64_t rss_peak_bytes();
bool reset_rss_peak();

// Returns freed heap memory to the OS (malloc_trim), so that an RSS delta
// measured next starts from a clean state.
void trim();

}  // namespace bcbench::mem

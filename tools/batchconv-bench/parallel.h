// Minimal helpers for the naive formulations' data movement (repeat,
// transpose): split a range over `threads` std::threads.
#pragma once

#include <cstdint>
#include <functional>

namespace bcbench {

// Calls fn(begin, end) on disjoint sub-ranges of [0, n) from `threads` threads.
void parallel_ranges(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn);

// dst[j][i][:] = src[i][j][:] for a contiguous (a, b, inner) src and (b, a, inner) dst.
void transpose01(const float* src, float* dst, int64_t a, int64_t b, int64_t inner, int threads);

// dst (n, copies, inner) = src (n, inner) repeated `copies` times along axis 1
// (what x.repeat(1, copies, 1, 1) materialises).
void repeat1(const float* src, float* dst, int64_t n, int64_t copies, int64_t inner, int threads);

// `threads`, or 1 when copying `floats` floats is too small to split.
int copy_threads(int64_t floats, int threads);

// Threads the naive formulations use (the bench's --threads).
int bench_threads();
void set_bench_threads(int n);

}  // namespace bcbench

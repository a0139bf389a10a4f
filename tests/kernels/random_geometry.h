// Test helper: the taps and geometry of a random conv, shared by the
// families' random sweeps.
#pragma once

#include <cstdint>
#include <vector>

#include "batchconv/batchconv.h"

namespace batchconv::test {

// With `dims` spatial axes (1 or 2): KW from {1, 3, 3, 5} and KH from
// {1, 3, 3, 2} (1 for 1-D); stride 1-2 down the rows and, one time in four,
// 2-3 along them; dilation 1-2 down the rows and, one time in five, 2
// along them; padding 0-2 on each side of each axis. A 1-D conv's two
// entries are alike, whichever the API reads. `pick(lo, hi)` draws an int
// in [lo, hi].
template <typename Pick>
void draw_taps_and_geometry(Pick&& pick, int dims, int64_t* kh, int64_t* kw, ConvDesc* d) {
  *kw = std::vector<int>{1, 3, 3, 5}[pick(0, 3)];
  *kh = dims == 2 ? std::vector<int>{1, 3, 3, 2}[pick(0, 3)] : 1;
  d->stride = {dims == 2 ? pick(1, 2) : 1, pick(0, 3) == 0 ? pick(2, 3) : 1};
  d->dilation = {dims == 2 ? pick(1, 2) : 1, pick(0, 4) == 0 ? 2 : 1};
  d->pad_begin = {dims == 2 ? pick(0, 2) : 0, pick(0, 2)};
  d->pad_end = {dims == 2 ? pick(0, 2) : 0, pick(0, 2)};
  if (dims == 1) {
    d->stride[0] = d->stride[1];
    d->dilation[0] = d->dilation[1];
    d->pad_begin[0] = d->pad_begin[1];
    d->pad_end[0] = d->pad_end[1];
  }
}

}  // namespace batchconv::test

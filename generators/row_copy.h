// Dense copies of whole image rows into a staged Func, for the backward
// kernels. The staged Func's pure definition is zeros (the padding); two
// updates copy the rows: first every full vector of each row, then one
// vector ending at the row's end, which rewrites columns the first update
// already copied with the same values. Both vectorise without a scalar tail
// or per-lane bounds tests. A row narrower than a vector is written by the
// second update alone, its lanes past the row writing zeros; rows are then
// written in order, so lanes that run into the next row are overwritten by
// it. (Halide's ShiftInwards would do this, but is not allowed on updates.)
#pragma once

#include <functional>
#include <vector>

#include "Halide.h"

namespace batchconv_gen {

struct RowCopy {
  Halide::RDom full;  // (lane, vector, row)
  Halide::RDom last;  // (lane, row)
  int first_update = 0;
  Halide::Expr width;
};

// dst(at(col, row)) = src(from(col, row)) for col < width, row < height.
// `at` and `from` give the whole argument lists (the other dimensions as the
// caller's pure Vars).
using RowIndex = std::function<std::vector<Halide::Expr>(Halide::Expr col, Halide::Expr row)>;

inline RowCopy define_row_copy(Halide::Func dst, Halide::Func src, Halide::Expr width,
                               Halide::Expr height, int vec, const RowIndex& at,
                               const RowIndex& from, const std::string& name) {
  using namespace Halide;
  RowCopy c;
  c.first_update = dst.num_update_definitions();
  c.width = width;
  c.full = RDom(0, vec, 0, width / vec, 0, height, name + "_full");
  Expr col = c.full.y * vec + c.full.x;
  dst(at(col, c.full.z)) = src(from(col, c.full.z));
  c.last = RDom(0, vec, 0, height, name + "_last");
  Expr last = max(width - vec, 0) + c.last.x;
  dst(at(last, c.last.y)) = select(last < width, src(from(min(last, width - 1), c.last.y)), 0.0f);
  return c;
}

// Distinct lanes write distinct columns of a row: no race, which Halide
// cannot prove for the computed destination index itself. The row wider
// than a vector is specialised, so the select and min of the last vector
// fold away there.
inline void schedule_row_copy(Halide::Func dst, const RowCopy& c, int vec) {
  if (vec <= 1) return;
  dst.update(c.first_update).allow_race_conditions().vectorize(c.full.x);
  Halide::Stage last = dst.update(c.first_update + 1);
  last.specialize(c.width >= vec).allow_race_conditions().vectorize(c.last.x);
  last.allow_race_conditions().vectorize(c.last.x);
}

}  // namespace batchconv_gen

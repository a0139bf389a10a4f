// Finds "a tensor repeated R times along one axis" behind a value, in the forms exporters write:
//   Tile(x, repeats)                    with one repeat count != 1 (through a no-op all-ones Expand)
//   Concat(x, x, ..., x, axis)          the same value R times
//   Reshape(Expand(Unsqueeze(x, a), s)) R copies stacked at a new axis a, merged into axis a (tiled)
//                                       or into axis a-1 (interleaved)
// optionally followed by Identity / Unsqueeze nodes (layout-only: they insert axes, which shifts the
// repeated axis). Generic graph search: knows nothing about the consumer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::rewrites::match {

struct Repeat {
  ir::Value* source = nullptr;         // the un-repeated tensor x
  ir::Value* repeated = nullptr;       // output of the repeat itself (before the layout chain)
  int64_t axis = -1;                   // repeated axis, in the rank of the value searched from
  int64_t count = 0;                   // R
  std::string form;                    // "Tile", "Concat" or "Unsqueeze/Expand/Reshape"
  std::vector<ir::Node*> layout_chain;  // Unsqueeze/Identity nodes from `repeated` to the value, in order
  int64_t rank = -1;                   // rank of the value searched from (-1: unknown)
  bool interleaved = false;            // element i of the axis is x's element i / count (repeat_interleave),
                                       // not i mod size (tile)
};

struct RepeatSearch {
  bool found = false;
  Repeat repeat;
  std::string reason;  // why no tiled repeat was found (when !found)
};

// Looks for a repeat behind v: tiled, or interleaved (Reshape(Expand(Unsqueeze(x, a))) merging the new
// axis into the one before it, as x.unsqueeze(2).expand(...).reshape(...) writes repeat_interleave).
RepeatSearch find_repeat(ir::Value* v);

}  // namespace batchconv::rewrites::match

#include "match/slices.h"

#include <algorithm>
#include <vector>

#include "match/graph_search.h"

namespace batchconv::rewrites::match {

using ir::Node;
using ir::Value;

namespace {

std::optional<AxisRange> fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return std::nullopt;
}

// An optional int list given as input `index` (nullptr or missing: absent) or as attribute `attr`;
// empty when neither. nullopt when given but not constant.
std::optional<std::vector<int64_t>> input_or_attr(const Node* n, size_t index, const char* attr) {
  if (n->inputs.size() > index && n->inputs[index]) return constant_ints(n->inputs[index]);
  if (n->attr(attr)) return n->attr_ints(attr);
  return std::vector<int64_t>{};
}

std::optional<AxisRange> from_slice(const Node* n, std::string* why) {
  Value* data = n->inputs.empty() ? nullptr : n->inputs[0];
  if (!data) return fail(why, "Slice without data");
  auto shape = static_shape(data);
  if (!shape) return fail(why, "shape of sliced tensor '" + data->name + "' is not static");
  const int64_t rank = static_cast<int64_t>(shape->size());
  const bool attr_form = n->inputs.size() < 2;  // opset < 10
  auto starts = attr_form ? std::optional(n->attr_ints("starts")) : input_or_attr(n, 1, "starts");
  auto ends = attr_form ? std::optional(n->attr_ints("ends")) : input_or_attr(n, 2, "ends");
  auto axes = attr_form ? std::optional(n->attr_ints("axes")) : input_or_attr(n, 3, "axes");
  auto steps = attr_form ? std::optional(std::vector<int64_t>{}) : input_or_attr(n, 4, "steps");
  if (!starts || !ends || !axes || !steps) return fail(why, "Slice bounds are not constant");
  if (starts->size() != 1 || ends->size() != 1) return fail(why, "Slice cuts more than one axis");
  if (axes->empty()) axes = std::vector<int64_t>{0};
  if (axes->size() != 1) return fail(why, "Slice axes do not match its starts");
  if (!steps->empty() && (steps->size() != 1 || (*steps)[0] != 1)) return fail(why, "Slice step is not 1");
  auto axis = normalize_axis((*axes)[0], rank);
  if (!axis) return fail(why, "Slice axis out of range");
  const int64_t dim = (*shape)[*axis];
  auto clamp = [&](int64_t v) {
    if (v < 0) v += dim;
    return std::clamp<int64_t>(v, 0, dim);
  };
  AxisRange r{data, const_cast<Node*>(n), *axis, clamp((*starts)[0]), clamp((*ends)[0])};
  if (r.end < r.start) r.end = r.start;
  return r;
}

std::optional<AxisRange> from_split(const Value* v, std::string* why) {
  const Node* n = v->producer;
  Value* data = n->inputs.empty() ? nullptr : n->inputs[0];
  if (!data) return fail(why, "Split without data");
  auto shape = static_shape(data);
  if (!shape) return fail(why, "shape of split tensor '" + data->name + "' is not static");
  auto axis = normalize_axis(n->attr_int("axis", 0), static_cast<int64_t>(shape->size()));
  if (!axis) return fail(why, "Split axis out of range");
  auto sizes = input_or_attr(n, 1, "split");
  if (!sizes) return fail(why, "Split sizes are not constant");
  const int64_t dim = (*shape)[*axis], parts = static_cast<int64_t>(n->outputs.size());
  if (sizes->empty()) {
    if (parts == 0 || dim % parts != 0) return fail(why, "Split into unequal parts of unknown size");
    sizes = std::vector<int64_t>(parts, dim / parts);
  }
  if (static_cast<int64_t>(sizes->size()) != parts) return fail(why, "Split sizes do not match its outputs");
  for (int64_t s : *sizes)
    if (s < 0 || s > dim) return fail(why, "Split size " + std::to_string(s) + " is outside 0.." + std::to_string(dim));
  int64_t start = 0;
  for (int64_t k = 0; k < parts; ++k) {
    if (n->outputs[k] == v) return AxisRange{data, const_cast<Node*>(n), *axis, start, start + (*sizes)[k]};
    start += (*sizes)[k];
  }
  return fail(why, "value is not an output of its Split");
}

}  // namespace

std::optional<AxisRange> axis_range_of(const Value* v, std::string* why) {
  const Node* n = v ? v->producer : nullptr;
  if (!n || !n->domain.empty() || (n->op_type != "Slice" && n->op_type != "Split"))
    return fail(why, "'" + (v ? v->name : std::string("?")) + "' is not a Slice or Split output");
  return n->op_type == "Slice" ? from_slice(n, why) : from_split(v, why);
}

}  // namespace batchconv::rewrites::match

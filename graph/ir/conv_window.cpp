#include "ir/conv_window.h"

#include <limits>

namespace batchconv::ir {

namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

// Sizes are dims of at most 2^31 - 1 (the importer's limit); these bounds
// keep every intermediate below 2^63.
constexpr int64_t kMaxAttr = (int64_t(1) << 31) - 1;

}  // namespace

WindowAttrs window_attrs(const Node& n, int64_t spatial, bool dilations) {
  WindowAttrs a;
  const size_t s = static_cast<size_t>(spatial);
  a.kernel_shape = n.attr_ints("kernel_shape");
  a.strides = n.attr_ints("strides", std::vector<int64_t>(s, 1));
  a.dilations = dilations ? n.attr_ints("dilations", std::vector<int64_t>(s, 1)) : std::vector<int64_t>(s, 1);
  a.pads = n.attr_ints("pads", std::vector<int64_t>(2 * s, 0));
  if (const Attribute* ap = n.attr("auto_pad"); ap && !ap->s.empty()) a.auto_pad = ap->s;
  a.ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  const std::string sp = std::to_string(spatial) + " spatial dims";
  if (!a.kernel_shape.empty() && a.kernel_shape.size() != s)
    throw WindowError("kernel_shape " + list(a.kernel_shape) + " does not match " + sp);
  if (a.strides.size() != s) throw WindowError("strides " + list(a.strides) + " do not match " + sp);
  if (a.dilations.size() != s) throw WindowError("dilations " + list(a.dilations) + " do not match " + sp);
  if (a.pads.size() != 2 * s) throw WindowError("pads " + list(a.pads) + " do not match " + sp + " (begins, then ends)");
  for (int64_t v : a.kernel_shape)
    if (v < 1 || v > kMaxAttr) throw WindowError("kernel_shape " + list(a.kernel_shape) + " must be in 1.." + std::to_string(kMaxAttr));
  for (int64_t v : a.strides)
    if (v < 1 || v > kMaxAttr) throw WindowError("strides " + list(a.strides) + " must be in 1.." + std::to_string(kMaxAttr));
  for (int64_t v : a.dilations)
    if (v < 1 || v > kMaxAttr) throw WindowError("dilations " + list(a.dilations) + " must be in 1.." + std::to_string(kMaxAttr));
  for (int64_t v : a.pads)
    if (v < 0 || v > kMaxAttr) throw WindowError("pads " + list(a.pads) + " must be in 0.." + std::to_string(kMaxAttr));
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER")
    throw WindowError("auto_pad '" + a.auto_pad + "' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  return a;
}

Window conv_window(const WindowAttrs& a, const std::vector<int64_t>& in, std::vector<int64_t> kernel) {
  const size_t s = in.size();
  if (kernel.empty()) {
    if (a.kernel_shape.empty()) throw WindowError("kernel_shape is required");
    kernel = a.kernel_shape;
  } else if (!a.kernel_shape.empty() && a.kernel_shape != kernel) {
    throw WindowError("kernel_shape " + list(a.kernel_shape) + " does not match the weight's kernel " + list(kernel));
  }
  if (kernel.size() != s || a.strides.size() != s || a.dilations.size() != s || a.pads.size() != 2 * s)
    throw WindowError("the window attributes do not match " + std::to_string(s) + " spatial dims");
  Window w;
  w.kernel = kernel;
  w.strides = a.strides;
  w.dilations = a.dilations;
  for (size_t d = 0; d < s; ++d) {
    const int64_t i = in[d], k = kernel[d], st = a.strides[d];
    if (i < 1 || i > kMaxAttr || k < 1 || k > kMaxAttr)
      throw WindowError("input size " + std::to_string(i) + " or kernel size " + std::to_string(k) + " out of range");
    const int64_t span = (k - 1) * a.dilations[d] + 1;  // < 2^62
    int64_t pb = a.pads[d], pe = a.pads[d + s];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      const int64_t o = (i + st - 1) / st;
      const int64_t total = std::max<int64_t>(0, (o - 1) * st + span - i);
      pb = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (a.auto_pad == "VALID") {
      pb = pe = 0;
    }
    const int64_t padded = i + pb + pe;
    if (padded < span)
      throw WindowError("kernel extent " + std::to_string(span) + " exceeds padded input " + std::to_string(padded));
    const int64_t room = padded - span;
    int64_t o = (a.ceil_mode ? (room + st - 1) / st : room / st) + 1;
    if (a.ceil_mode && (o - 1) * st >= i + pb) --o;  // the last window must start inside the input or left pad
    w.pad_begin.push_back(pb);
    w.pad_end.push_back(pe);
    w.out.push_back(o);
  }
  return w;
}

}  // namespace batchconv::ir

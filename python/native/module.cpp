// batchconv._native: the batchconv C++ API for the Python package. Tensors
// cross as (data pointer, shape, strides) triples of plain integers taken
// from torch's data_ptr()/shape/stride(), so the kernels read and write
// torch's memory in place and this module links no libtorch. Validation
// errors (batchconv::Error) arrive in Python as batchconv._native.Error, a
// ValueError. The GIL is released while a kernel runs.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "batchconv/backward.h"
#include "batchconv/batchconv.h"
#include "omp_pool.h"
#include "output_pool.h"
#include "variant.h"

namespace py = pybind11;

namespace {

using View = std::tuple<std::uintptr_t, std::vector<int64_t>, std::vector<int64_t>>;
using Ints = std::vector<int>;

batchconv::TensorView to_view(const View& v) {
  return batchconv::TensorView(reinterpret_cast<float*>(std::get<0>(v)), std::get<1>(v),
                               std::get<2>(v));
}

// Spatial lists are (H, W) for 2-D, (W) for 1-D, as in ConvDesc.
batchconv::ConvDesc to_desc(const Ints& stride, const Ints& dilation, const Ints& pad_begin,
                            const Ints& pad_end, int groups) {
  const size_t n = stride.size();
  if (n < 1 || n > 2 || dilation.size() != n || pad_begin.size() != n || pad_end.size() != n) {
    throw batchconv::Error("geometry: stride, dilation, pad_begin and pad_end need 1 or 2 entries each");
  }
  batchconv::ConvDesc d;
  for (size_t i = 0; i < n; i++) {
    d.stride[i] = stride[i];
    d.dilation[i] = dilation[i];
    d.pad_begin[i] = pad_begin[i];
    d.pad_end[i] = pad_end[i];
  }
  d.groups = groups;
  return d;
}

batchconv::BroadcastLayout to_layout(const std::string& layout) {
  if (layout == "concat") return batchconv::BroadcastLayout::Concatenated;
  if (layout == "batched") return batchconv::BroadcastLayout::Batched;
  throw batchconv::Error("layout: '" + layout + "' is neither 'concat' nor 'batched'");
}

[[noreturn]] void bad_op(const std::string& op) {
  throw batchconv::Error("op: '" + op + "' is not one of 'grouped', 'batched', 'broadcast'");
}

void conv(const std::string& op, const View& x, const View& w, const std::optional<View>& bias,
          const View& y, const Ints& stride, const Ints& dilation, const Ints& pad_begin,
          const Ints& pad_end, int groups, const std::string& layout, bool relu) {
  batchconv::ConvDesc d = to_desc(stride, dilation, pad_begin, pad_end, groups);
  if (relu) d.activation = batchconv::Activation::ReLU;
  const auto tx = to_view(x), tw = to_view(w), ty = to_view(y);
  batchconv::TensorView tb;
  if (bias) tb = to_view(*bias);
  const batchconv::TensorView* pb = bias ? &tb : nullptr;
  py::gil_scoped_release release;
  if (op == "grouped") batchconv::grouped_conv(tx, tw, pb, ty, d);
  else if (op == "batched") batchconv::batched_weight_conv(tx, tw, pb, ty, d);
  else if (op == "broadcast") batchconv::broadcast_input_conv(tx, tw, pb, ty, d, to_layout(layout));
  else bad_op(op);
}

void conv_backward_input(const std::string& op, const View& dy, const View& w, const View& dx,
                         const Ints& stride, const Ints& dilation, const Ints& pad_begin,
                         const Ints& pad_end, int groups, const std::string& layout) {
  const batchconv::ConvDesc d = to_desc(stride, dilation, pad_begin, pad_end, groups);
  const auto tdy = to_view(dy), tw = to_view(w), tdx = to_view(dx);
  py::gil_scoped_release release;
  if (op == "grouped") batchconv::grouped_conv_backward_input(tdy, tw, tdx, d);
  else if (op == "batched") batchconv::batched_weight_conv_backward_input(tdy, tw, tdx, d);
  else if (op == "broadcast")
    batchconv::broadcast_input_conv_backward_input(tdy, tw, tdx, d, to_layout(layout));
  else bad_op(op);
}

void conv_backward_weight(const std::string& op, const View& x, const View& dy, const View& dw,
                          const Ints& stride, const Ints& dilation, const Ints& pad_begin,
                          const Ints& pad_end, int groups, const std::string& layout) {
  const batchconv::ConvDesc d = to_desc(stride, dilation, pad_begin, pad_end, groups);
  const auto tx = to_view(x), tdy = to_view(dy), tdw = to_view(dw);
  py::gil_scoped_release release;
  if (op == "grouped") batchconv::grouped_conv_backward_weight(tx, tdy, tdw, d);
  else if (op == "batched") batchconv::batched_weight_conv_backward_weight(tx, tdy, tdw, d);
  else if (op == "broadcast")
    batchconv::broadcast_input_conv_backward_weight(tx, tdy, tdw, d, to_layout(layout));
  else bad_op(op);
}

void linear(const View& x, const View& w, const std::optional<View>& bias, const View& y) {
  const auto tx = to_view(x), tw = to_view(w), ty = to_view(y);
  batchconv::TensorView tb;
  if (bias) tb = to_view(*bias);
  const batchconv::TensorView* pb = bias ? &tb : nullptr;
  py::gil_scoped_release release;
  batchconv::batched_linear(tx, tw, pb, ty);
}

// One block of the output cache (output_pool.h) as a writable Python
// buffer of floats: torch.frombuffer keeps it alive as long as the tensor's
// storage, and its end hands the memory back to the cache.
class PooledBlock {
 public:
  explicit PooledBlock(std::int64_t count) : count_(count) {
    if (count <= 0 || count > (std::int64_t{1} << 40)) {
      throw batchconv::Error("output cache: " + std::to_string(count) + " floats is not a size between 1 and 2^40");
    }
    data_ = batchconv_python::pool_take(static_cast<std::size_t>(count) * sizeof(float), &mapped_);
  }
  ~PooledBlock() { batchconv_python::pool_give(data_, mapped_); }
  PooledBlock(const PooledBlock&) = delete;
  PooledBlock& operator=(const PooledBlock&) = delete;
  float* data() const { return static_cast<float*>(data_); }
  std::int64_t count() const { return count_; }

 private:
  std::int64_t count_;
  void* data_ = nullptr;
  std::size_t mapped_ = 0;
};

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "batchconv's C++ API over (data_ptr, shape, strides) views; use the batchconv package";
  py::register_exception<batchconv::Error>(m, "Error", PyExc_ValueError);
  batchconv_python::install_omp_pool();
  m.def("conv", &conv, py::arg("op"), py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("y"),
        py::arg("stride"), py::arg("dilation"), py::arg("pad_begin"), py::arg("pad_end"),
        py::arg("groups"), py::arg("layout"), py::arg("relu") = false);
  m.def("conv_backward_input", &conv_backward_input, py::arg("op"), py::arg("dy"), py::arg("w"),
        py::arg("dx"), py::arg("stride"), py::arg("dilation"), py::arg("pad_begin"),
        py::arg("pad_end"), py::arg("groups"), py::arg("layout"));
  m.def("conv_backward_weight", &conv_backward_weight, py::arg("op"), py::arg("x"), py::arg("dy"),
        py::arg("dw"), py::arg("stride"), py::arg("dilation"), py::arg("pad_begin"),
        py::arg("pad_end"), py::arg("groups"), py::arg("layout"));
  m.def("linear", &linear, py::arg("x"), py::arg("w"), py::arg("bias"), py::arg("y"));
  m.def("set_num_threads", &batchconv::set_num_threads, py::arg("n"));
  m.def("num_threads", &batchconv::num_threads);
  m.def("selected_target", &batchconv::selected_target);
  py::class_<PooledBlock>(m, "PooledBlock", py::buffer_protocol())
      .def(py::init<std::int64_t>(), py::arg("count"))
      .def_buffer([](PooledBlock& b) {
        return py::buffer_info(b.data(), sizeof(float), py::format_descriptor<float>::format(), 1,
                               {b.count()}, {static_cast<py::ssize_t>(sizeof(float))});
      });
  m.attr("pool_min_bytes") = batchconv_python::kMinBytes;
  m.def("pool_set_limit", &batchconv_python::pool_set_limit, py::arg("bytes"));
  m.def("pool_limit", &batchconv_python::pool_limit);
  m.def("pool_cached", &batchconv_python::pool_cached);
  m.def("pool_empty", &batchconv_python::pool_empty);
  // Test hooks: run a lower multi-target variant of the kernels in this process.
  m.def("_restrict_variant", &batchconv_python::restrict_variant, py::arg("name"));
  m.def("_dispatched_variant", &batchconv_python::dispatched_variant);
  m.def("_last_parallel_team", &batchconv_python::last_parallel_team);
}

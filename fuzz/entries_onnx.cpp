// Fuzz entries over ONNX models: binary, text, --verify.
#include <onnx/onnx_pb.h>

#include <string>

#include "entries.h"
#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "pass.h"

namespace batchconv::fuzz {

namespace {

constexpr size_t kMaxBytes = size_t(1) << 20;

bool parse_binary(const uint8_t* data, size_t size, onnx::ModelProto* p) {
  return size <= kMaxBytes && p->ParseFromArray(data, static_cast<int>(size));
}

void rewrite(ir::Model& m, bool emit_batchconv_ops) {
  rewrites::PassOptions o;
  o.emit_batchconv_ops = emit_batchconv_ops;
  for (const auto& pass : rewrites::default_pipeline()) {
    pass.run(m, o);
    m.graph.topological_order();
  }
}

}  // namespace

void onnx_binary(const uint8_t* data, size_t size) {
  interp::set_element_limit(int64_t(1) << 20);  // constant folding runs the interpreter
  if (size < 1) return;
  onnx::ModelProto p;
  if (!parse_binary(data + 1, size - 1, &p)) return;
  try {
    auto m = io::import_model(std::move(p), "fuzz.onnx");
    rewrite(*m, data[0] & 1);
    onnx::ModelProto out = io::export_model(*m);
    io::check_model(out, "fuzz.onnx (rewritten)");
  } catch (const std::exception&) {
  }
}

void onnx_text(const uint8_t* data, size_t size) {
  interp::set_element_limit(int64_t(1) << 20);
  if (size > kMaxBytes) return;
  try {
    auto m = io::parse_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnxtxt");
    rewrite(*m, false);
    io::print_model(*m);
  } catch (const std::exception&) {
  }
}

void verify(const uint8_t* data, size_t size) {
  interp::set_element_limit(int64_t(1) << 20);  // each input a fraction of a second under ASan
  onnx::ModelProto p;
  if (!parse_binary(data, size, &p)) return;
  try {
    auto before = io::import_model(std::move(p), "fuzz.onnx");
    auto after = io::clone_model(*before);
    rewrite(*after, false);
    // Symbolic dims get small sizes: the interpreter's limits bound the rest.
    interp::TensorMap in = interp::random_inputs(*before, 1, {}, 3);
    interp::run(*before, in);
    interp::run(*after, in);
  } catch (const std::exception&) {
  }
}

}  // namespace batchconv::fuzz

// Fuzz entry over the model compiler, up to Halide code generation.
#include <onnx/onnx_pb.h>

#include "compile.h"
#include "entries.h"
#include "interpreter/interpreter.h"
#include "lower.h"
#include "onnx/onnx_io.h"
#include "runtime_weights.h"

namespace batchconv::fuzz {

void lower(const uint8_t* data, size_t size) {
  interp::set_element_limit(int64_t(1) << 20);  // constant folding runs the interpreter
  if (size < 1 || size > (size_t(1) << 20)) return;
  onnx::ModelProto p;
  if (!p.ParseFromArray(data + 1, static_cast<int>(size - 1))) return;
  try {
    std::unique_ptr<ir::Model> m = io::import_model(std::move(p), "fuzz.onnx");
    compiler::bind_input_shapes(*m, "fuzz.onnx", {});
    compiler::LowerOptions lo;
    compiler::RuntimeWeightPlan plan;
    if (data[0] & 1) {
      std::vector<std::string> fired;
      plan = compiler::plan_runtime_weights(m, "fuzz.onnx", true, &fired);
      lo.runtime_weights = true;
      lo.weight_plan = &plan;
    } else {
      compiler::run_rewrites(*m);
    }
    compiler::lower_model(*m, "fuzz.onnx", lo);
  } catch (const std::exception&) {
  }
}

}  // namespace batchconv::fuzz

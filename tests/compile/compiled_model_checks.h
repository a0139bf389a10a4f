// The checks every compiled model of the tests passes (compiled_model.h's
// registry entries): its stored PyTorch outputs and the reference
// interpreter on fresh random inputs (and fresh runtime weights), to 1e-4
// relative. Shared by the CPU tests and the GPU ones; no libHalide needed.
#pragma once

#include <memory>
#include <string>

#include "compiled_model.h"
#include "interpreter/interpreter.h"
#include "ir/graph.h"

namespace batchconv::testing {

// tests/models/<stem>.onnx (BATCHCONV_MODELS_DIR).
std::string model_path(const CompiledModel& m);
// The model as the app sees it: runtime weights are the model file's own initializers.
std::unique_ptr<ir::Model> compiled_view(const CompiledModel& m);
// Runs the compiled model; `values` by ONNX name for inputs and weights.
// A library compiled with --dynamic-batch runs at the batch of its first input in `values`.
interp::TensorMap run_compiled(const CompiledModel& m, const interp::TensorMap& values);

void expect_matches_stored_outputs(const CompiledModel& m);
void expect_matches_interpreter(const CompiledModel& m);

}  // namespace batchconv::testing

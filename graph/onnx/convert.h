// Internal: conversions between ONNX protos and IR pieces (types, attributes).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "ir/graph.h"

namespace batchconv::io {

ir::DType dtype_from_onnx(int32_t elem_type);
int32_t dtype_to_onnx(ir::DType t, int32_t fallback = 0);

// `what` names the value for errors ("file: value 'x'").
ir::TypeInfo type_from_proto(const onnx::TypeProto& t, const std::string& what);
void type_to_proto(const ir::TypeInfo& t, onnx::TypeProto* out);

ir::Attribute attribute_from_proto(const onnx::AttributeProto& a, const std::string& what);
void attribute_to_proto(const std::string& name, const ir::Attribute& a, onnx::AttributeProto* out);

// ONNX shape inference on a model built for it: value_info cleared, float
// initializers over 64 elements passed as typed graph inputs (inference needs
// their shapes, not their data; copying weights would cost more than
// inferring). inference_copy copies only what inference reads;
// strip_for_inference does the same in place. run_inference swallows
// inference errors (types then stay unknown). It runs without ONNX's data
// propagation: ONNX 1.12's propagators read shape data they never check (Mul
// of an empty shape dereferences its missing first entry), and what they
// would compute, shapes built by Shape/Gather/Concat chains, fold_constants
// computes in the project's own (fuzzed) interpreter before inference runs
// again.
onnx::ModelProto inference_copy(const onnx::ModelProto& proto);
void strip_for_inference(onnx::ModelProto& proto);
void run_inference(onnx::ModelProto& proto);
// Keeps ONNX's inference functions only for inferred_ops() (the standard ops
// the project reads), with checks in front of those that assume what they do
// not check, and makes every other op's infer nothing (once per process, in
// ONNX's schema registry; inference_guards.cpp). run_inference and
// check_model call it.
void install_inference_guards();
const std::vector<std::string>& inferred_ops();

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace batchconv::io

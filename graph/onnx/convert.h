// Internal: conversions between ONNX protos and IR pieces (types, attributes).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

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
// inference errors (types then stay unknown).
onnx::ModelProto inference_copy(const onnx::ModelProto& proto);
void strip_for_inference(onnx::ModelProto& proto);
void run_inference(onnx::ModelProto& proto);
// Wraps ONNX's conv/pool inference functions with rank checks (once per
// process; inference_guards.cpp). run_inference and check_model call it.
void install_inference_guards();

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);

}  // namespace batchconv::io

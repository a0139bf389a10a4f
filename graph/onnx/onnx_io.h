// ONNX <-> graph IR: import, export, ONNX text syntax, atomic file writes.
//
// Binary files are onnx::ModelProto; text files (.onnxtxt, .txt) use ONNX's
// text syntax (onnx/defs/parser.h). Every error is an io::Error whose message
// starts with the file (or "<text>") and names the node or value at fault.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "ir/graph.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace batchconv::io {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Highest ONNX IR version this build understands (ONNX 1.12).
constexpr int64_t kMaxIrVersion = 8;
// Dimensions above this are rejected as corrupt rather than allocated (and
// before ONNX's shape inference could be asked to build a shape that large).
constexpr int64_t kMaxDim = (int64_t(1) << 31) - 1;
// Tensors above this many elements are rejected likewise.
constexpr int64_t kMaxElements = int64_t(1) << 40;

// ModelProto -> IR. Runs ONNX shape inference on a copy to fill value types.
// Throws Error on missing/undefined inputs, duplicate producers, cycles,
// bad initializers, huge dims, unsupported IR versions.
std::unique_ptr<ir::Model> import_model(const onnx::ModelProto& proto, const std::string& origin);
// Same, consuming the proto: shape inference runs on it in place (no copy of a large graph).
std::unique_ptr<ir::Model> import_model(onnx::ModelProto&& proto, const std::string& origin);
// Conv/pool ranks (X, W and the spatial attributes agree); throws Error naming
// the node. import_model runs it after shape inference; passes that refresh
// types (io::infer_shapes) run it again.
void check_ranks(const ir::Model& model, const std::string& origin);
// IR -> ModelProto, nodes in topological order, only initializers still used.
onnx::ModelProto export_model(const ir::Model& model);
// Same, into a message the caller owns (e.g. on a protobuf Arena).
void export_into(const ir::Model& model, onnx::ModelProto* out);

// Tensor conversions (shared with the importer of attributes and by tests).
ir::Tensor tensor_from_proto(const onnx::TensorProto& t, const std::string& what);
onnx::TensorProto tensor_to_proto(const ir::Tensor& t, const std::string& name);

// Files. is_text_path: .onnxtxt / .txt / .onnxtext.
bool is_text_path(const std::string& path);
onnx::ModelProto read_model_proto(const std::string& path);
// Writes atomically: temp file in the same folder, fsync, rename; on any
// failure the temp file is removed and the destination is left untouched.
void write_model_proto(const onnx::ModelProto& proto, const std::string& path);
// A destination that exists but is not a regular file (a symlink, a device,
// a folder) is refused, never replaced.
void write_file_atomic(const std::string& path, const std::string& bytes);
// Throws Error when `output` names the same file as any of `inputs` (after
// links), so that no tool writes over its own input.
void check_not_an_input(const std::string& output, const std::vector<std::string>& inputs);

std::unique_ptr<ir::Model> load_model(const std::string& path);
void save_model(const ir::Model& model, const std::string& path);

// ONNX text syntax. Names that are not identifiers in that syntax ("input.4",
// "onnx::Conv_3") are printed sanitized ("input_4", "onnx__Conv_3").
// Node names, value_info and metadata_props have no text form in ONNX 1.12,
// and a rank-0 graph input/output type ("int64[]") reads back as rank unknown.
// max_elements >= 0 elides the data of larger initializers as "{...}" (for
// people; such text does not parse back).
std::string to_text(const onnx::ModelProto& proto, int64_t max_elements = -1);
onnx::ModelProto parse_text(const std::string& text, const std::string& origin);
std::string print_model(const ir::Model& model);  // to_text(export_model(model))
std::unique_ptr<ir::Model> parse_model(const std::string& text, const std::string& origin = "<text>");

// Deep copy through export/import.
std::unique_ptr<ir::Model> clone_model(const ir::Model& model);

// Refreshes value types from ONNX shape inference (keeps known shapes where
// inference has nothing). Errors inside inference are ignored.
void infer_shapes(ir::Model& model);

// onnx::checker::check_model plus strict shape inference; throws Error naming
// what the checker said.
void check_model(const onnx::ModelProto& proto, const std::string& origin);

}  // namespace batchconv::io

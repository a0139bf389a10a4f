// batchconv's graph IR: values, nodes and use lists, small and easy to match on.
//
// A Graph owns Nodes and Values. Every Value has at most one producer (a Node,
// or none for graph inputs and initializers) and a use list of (node, input
// index). Attributes keep ONNX's kinds. Constant data (initializers, folded
// constants) lives on the Value as a Tensor.
//
// Mutation goes through Graph methods so use lists stay right; passes match
// first and mutate last (see STYLE.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace batchconv::ir {

enum class DType { Float, Double, Int64, Int32, Int8, UInt8, Bool, Float16, Other };

// Dense tensor data, row-major. Float data is kept as float, integer-like as int64.
struct Tensor {
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  std::vector<float> f;    // when dtype is Float (or Double/Float16, converted)
  std::vector<int64_t> i;  // when dtype is an integer or Bool kind
  // Serialized onnx::TensorProto of the original data when the dtype is held
  // lossily above (Double, Float16, Other); export writes it back verbatim.
  // Whoever changes such a tensor's data must clear it.
  std::string onnx_proto;
  // Product of the dims: -1 when one is negative, INT64_MAX when it overflows
  // (so that every size limit still rejects it).
  int64_t numel() const;
  bool is_float() const { return dtype == DType::Float || dtype == DType::Double || dtype == DType::Float16; }
};

// A dimension is known (>= 0) or symbolic (-1 with a name, possibly empty).
struct Dim {
  int64_t value = -1;
  std::string param;
  bool known() const { return value >= 0; }
};

struct TypeInfo {
  DType dtype = DType::Float;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown
  int32_t onnx_elem_type = 0;  // ONNX TensorProto data type when dtype is Other (0: unknown)
  std::string onnx_type;       // serialized onnx::TypeProto for non-tensor types (sequences, ...)
};

struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings, Tensor, Graph, Other };
  Kind kind = Kind::Other;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> t;
  std::string raw;  // serialized onnx::AttributeProto for kinds we do not model (Graph, ...)
};

struct Node;

struct Use {
  Node* node;
  int index;  // input slot
};

struct Value {
  std::string name;
  TypeInfo type;
  Node* producer = nullptr;           // nullptr for graph inputs / initializers
  int producer_output = 0;
  std::vector<Use> uses;
  std::shared_ptr<Tensor> constant;   // set for initializers and folded constants
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool declared = false;  // had a value_info entry in the source model (exported again)
  bool pinned = false;    // read by name from a subgraph attribute: never rename or remove
  bool keep = false;      // initializer already unused in the source model: exported anyway
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                 // "" = ai.onnx
  std::vector<Value*> inputs;         // nullptr for an omitted optional input
  std::vector<Value*> outputs;
  std::map<std::string, Attribute> attrs;
  std::string doc_string;
  // Outer-scope values that subgraph attributes (If/Loop/Scan bodies) read by
  // name. Not in use lists; they keep their producers alive and ordered first.
  std::vector<Value*> implicit_inputs;
  size_t order = 0;    // insertion index, for a stable topological order
  bool dead = false;   // removed from the graph (kept allocated until the Graph dies)
  size_t position = 0; // index in Graph::nodes() (maintained by the Graph)

  const Attribute* attr(const std::string& k) const;
  int64_t attr_int(const std::string& k, int64_t def) const;
  std::vector<int64_t> attr_ints(const std::string& k, std::vector<int64_t> def = {}) const;
};

class Graph {
 public:
  std::string name;
  std::vector<Value*> inputs;   // ordered graph inputs (excluding pure initializers)
  std::vector<Value*> outputs;  // ordered graph outputs

  // Nodes in insertion order; topological_order() gives a valid schedule.
  // Do not mutate the graph while iterating this vector: iterate a
  // topological_order() snapshot instead (removed nodes stay allocated).
  const std::vector<std::unique_ptr<Node>>& nodes() const { compact(); return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }

  Value* add_value(const std::string& name);         // name made unique if taken
  Value* add_initializer(const std::string& name, Tensor t);
  Value* find_value(const std::string& name) const;  // nullptr if absent
  Node* add_node(const std::string& op_type, std::vector<Value*> inputs,
                 std::vector<Value*> outputs, const std::string& name = "");
  void set_input(Node* n, int index, Value* v);      // keeps use lists right
  void replace_all_uses(Value* from, Value* to);     // including graph outputs
  void remove_node(Node* n);                         // its outputs must be unused
  int remove_dead_nodes();                           // returns how many removed
  void remove_unused_initializers();
  std::vector<Node*> topological_order() const;      // throws on a cycle, naming a node in it
  std::string unique_name(const std::string& base);

  // Graph-level documentation, renaming, and output-name bookkeeping:
  std::string doc_string;
  void rename_value(Value* v, const std::string& name);  // throws if the name is taken
  // Whether replace_all_uses(from, to) keeps graph output names: false when
  // `from` is a graph output and `to` cannot take over its name (a graph
  // input, another graph output, an initializer, or a pinned value).
  bool can_replace_all_uses(const Value* from, const Value* to) const;
  size_t num_nodes() const;
  // Drops a value that has no producer, no uses and is not a graph input or
  // output (e.g. a consumed initializer); its name becomes free. The object
  // stays allocated until the Graph dies.
  void remove_value(Value* v);
  void reserve(size_t nodes, size_t values);  // capacity hint for importers
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

 private:
  void compact() const;
  mutable std::vector<std::unique_ptr<Node>> nodes_;
  mutable std::vector<std::unique_ptr<Node>> removed_;  // removed nodes stay valid for callers holding pointers
  mutable size_t dead_count_ = 0;
  size_t next_order_ = 0;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Value>> removed_values_;
  std::unordered_map<std::string, Value*> by_name_;
  std::unordered_map<std::string, int> node_names_;          // node names in use
  std::unordered_map<std::string, int64_t> name_counters_;   // next suffix per base name
};

// "'conv3' (Conv)" for messages; op_type#order when unnamed.
std::string describe(const Node* n);
// Bytes per element of a dtype (0 for Other).
int64_t dtype_size(DType t);
const char* dtype_name(DType t);
// a * b for a, b >= 0, saturating at INT64_MAX instead of overflowing (sizes
// that large are then refused by whatever limit applies).
int64_t mul_sat(int64_t a, int64_t b);
// Whether a float value converts to int64 (truncating) without undefined
// behaviour: not NaN or infinite and within [-2^63, 2^63).
bool fits_int64(double v);

// What surrounds the graph in an ONNX model, kept verbatim on export.
struct Model {
  Graph graph;
  int64_t ir_version = 8;
  std::vector<std::pair<std::string, int64_t>> opset_imports;  // (domain, version)
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  int64_t opset(const std::string& domain = "") const;  // 0 if not imported
};

}  // namespace batchconv::ir

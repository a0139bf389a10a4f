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
#include <vector>

namespace batchconv::ir {

enum class DType { Float, Double, Int64, Int32, Int8, UInt8, Bool, Float16, Other };

// Dense tensor data, row-major. Float data is kept as float, integer-like as int64.
struct Tensor {
  DType dtype = DType::Float;
  std::vector<int64_t> shape;
  std::vector<float> f;    // when dtype is Float (or Double/Float16, converted)
  std::vector<int64_t> i;  // when dtype is an integer or Bool kind
  int64_t numel() const;
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
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;                 // "" = ai.onnx
  std::vector<Value*> inputs;         // nullptr for an omitted optional input
  std::vector<Value*> outputs;
  std::map<std::string, Attribute> attrs;
  std::string doc_string;

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
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
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

 private:
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> by_name_;
};

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

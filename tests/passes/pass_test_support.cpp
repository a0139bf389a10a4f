#include "pass_test_support.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sstream>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"

namespace batchconv::testing {

std::string dims(const std::vector<int64_t>& shape) {
  std::ostringstream o;
  for (size_t i = 0; i < shape.size(); ++i) o << (i ? "," : "") << shape[i];
  return o.str();
}

void ModelText::weight(const std::string& name, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::ostringstream o;
  o.precision(9);
  o << "float[" << dims(shape) << "] " << name << " = {";
  for (int64_t i = 0; i < n; ++i) o << (i ? "," : "") << u(rng_);
  o << "}";
  inits_.push_back(o.str());
}

void ModelText::ints(const std::string& name, const std::vector<int64_t>& values) {
  inits_.push_back("int64[" + std::to_string(values.size()) + "] " + name + " = {" + dims(values) + "}");
}

std::string ModelText::str() const {
  std::ostringstream o;
  o << "<ir_version: 8, opset_import: [\"\" : " << opset_ << "]>\n";
  o << "test_graph (";
  for (size_t i = 0; i < inputs_.size(); ++i) o << (i ? ", " : "") << inputs_[i];
  o << ") => (";
  for (size_t i = 0; i < outputs_.size(); ++i) o << (i ? ", " : "") << outputs_[i];
  o << ")\n";
  if (!inits_.empty()) {
    o << "<";
    for (size_t i = 0; i < inits_.size(); ++i) o << (i ? ", " : "") << inits_[i];
    o << ">\n";
  }
  o << "{\n";
  for (const auto& n : nodes_) o << "  " << n << "\n";
  o << "}\n";
  return o.str();
}

std::unique_ptr<ir::Model> parse(const std::string& text) { return io::parse_model(text, "<test>"); }
std::unique_ptr<ir::Model> clone(const ir::Model& m) { return io::clone_model(m); }

int count_ops(const ir::Model& m, const std::string& op_type, const std::string& domain) {
  int n = 0;
  for (const auto& node : m.graph.nodes())
    if (!node->dead && node->op_type == op_type && node->domain == domain) ++n;
  return n;
}

const ir::Node* only(const ir::Model& m, const std::string& op_type, const std::string& domain) {
  const ir::Node* found = nullptr;
  for (const auto& node : m.graph.nodes())
    if (!node->dead && node->op_type == op_type && node->domain == domain) {
      EXPECT_EQ(found, nullptr) << "more than one " << op_type;
      found = node.get();
    }
  EXPECT_NE(found, nullptr) << "no " << op_type;
  return found;
}

rewrites::PassResult run_pass(ir::Model& m, const std::string& name, const rewrites::PassOptions& o) {
  for (const auto& p : rewrites::default_pipeline())
    if (p.name == name) return p.run(m, o);
  ADD_FAILURE() << "no pass named " << name;
  return {};
}

std::vector<rewrites::PassResult> run_pipeline(ir::Model& m, const rewrites::PassOptions& o) {
  std::vector<rewrites::PassResult> out;
  for (const auto& p : rewrites::default_pipeline()) out.push_back(p.run(m, o));
  return out;
}

void expect_same_function(const ir::Model& before, const ir::Model& after, double tol, int trials) {
  for (int t = 0; t < trials; ++t) {
    auto inputs = interp::random_inputs(before, 1000 + t);
    interp::TensorMap want, got;
    try {
      want = interp::run(before, inputs);
      got = interp::run(after, inputs);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "interpreter: " << e.what();
      return;
    }
    ASSERT_EQ(want.size(), got.size());
    for (const auto& [name, w] : want) {
      auto it = got.find(name);
      ASSERT_NE(it, got.end()) << "output '" << name << "' missing after the rewrite";
      EXPECT_LE(interp::max_relative_difference(it->second, w), tol) << "output '" << name << "', trial " << t;
    }
  }
}

static std::vector<std::string> names(const std::vector<ir::Value*>& vs) {
  std::vector<std::string> out;
  for (const auto* v : vs) out.push_back(v->name);
  return out;
}

void expect_sound_rewrite(const ir::Model& before, const ir::Model& after, double tol, int trials) {
  expect_same_function(before, after, tol, trials);
  try {
    io::check_model(io::export_model(after), "<rewritten>");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "checker: " << e.what() << "\n" << io::print_model(after);
  }
  EXPECT_EQ(names(before.graph.inputs), names(after.graph.inputs));
  EXPECT_EQ(names(before.graph.outputs), names(after.graph.outputs));
  for (const auto& imp : before.opset_imports) EXPECT_EQ(after.opset(imp.first), imp.second) << imp.first;
  for (const auto& imp : after.opset_imports)
    if (imp.first != "batchconv") EXPECT_EQ(before.opset(imp.first), imp.second) << "added import " << imp.first;
  EXPECT_EQ(before.metadata_props, after.metadata_props);
  EXPECT_EQ(before.ir_version, after.ir_version);
  EXPECT_EQ(before.producer_name, after.producer_name);
  // Initializers unused before the rewrite are kept; any initializer still there has its data.
  for (const auto& v : before.graph.values()) {
    if (!v->constant || v->producer || v->is_graph_input) continue;
    const ir::Value* a = after.graph.find_value(v->name);
    if (v->uses.empty()) {
      ASSERT_TRUE(a && a->constant) << "unconsumed initializer '" << v->name << "' dropped";
    }
    if (a && a->constant) {
      EXPECT_EQ(a->constant->f, v->constant->f) << v->name;
      EXPECT_EQ(a->constant->i, v->constant->i) << v->name;
    }
  }
  // And they survive export.
  auto proto = io::export_model(after);
  for (const auto& v : before.graph.values()) {
    if (!v->constant || v->producer || v->is_graph_input || !v->uses.empty()) continue;
    bool found = false;
    for (const auto& t : proto.graph().initializer()) found |= t.name() == v->name;
    EXPECT_TRUE(found) << "unconsumed initializer '" << v->name << "' not exported";
  }
}

std::string skip_reason(const rewrites::PassResult& r, const std::string& node) {
  for (const auto& s : r.skips)
    if (s.node == node) return s.reason;
  return "";
}

}  // namespace batchconv::testing

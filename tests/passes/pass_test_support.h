// Shared helpers for the rewrite tests: models in ONNX text syntax with random weights, running a
// pass, and the checks every rewrite must pass (same function on random inputs through the
// reference interpreter; checker + shape inference; graph interface, opsets, metadata and
// unconsumed initializers kept).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "pass.h"

namespace batchconv::testing {

// Builds the text of one model: `inputs` like "float[2,4,5] x", initializers added with add_*.
class ModelText {
 public:
  ModelText(int64_t opset, uint64_t seed) : opset_(opset), rng_(seed) {}
  void input(const std::string& decl) { inputs_.push_back(decl); }
  void output(const std::string& decl) { outputs_.push_back(decl); }
  // Random uniform [-1, 1) float initializer.
  void weight(const std::string& name, const std::vector<int64_t>& shape);
  void ints(const std::string& name, const std::vector<int64_t>& values);
  void node(const std::string& line) { nodes_.push_back(line); }
  std::string str() const;

 private:
  int64_t opset_;
  std::mt19937_64 rng_;
  std::vector<std::string> inputs_, outputs_, inits_, nodes_;
};

std::string dims(const std::vector<int64_t>& shape);  // "2,4,5"

std::unique_ptr<ir::Model> parse(const std::string& text);
std::unique_ptr<ir::Model> clone(const ir::Model& m);

int count_ops(const ir::Model& m, const std::string& op_type, const std::string& domain = "");
// The only node with this op type (fails the test and returns nullptr if not exactly one).
const ir::Node* only(const ir::Model& m, const std::string& op_type, const std::string& domain = "");

// Runs one pass of the default pipeline by name on `m`.
rewrites::PassResult run_pass(ir::Model& m, const std::string& name, const rewrites::PassOptions& o = {});
// Runs the whole default pipeline.
std::vector<rewrites::PassResult> run_pipeline(ir::Model& m, const rewrites::PassOptions& o = {});

// Every check a rewrite must pass, as gtest failures: same outputs as `before` on `trials` random
// inputs (max relative difference <= tol); export passes onnx::checker and strict shape inference;
// inputs/outputs (names, order), opset imports (a "batchconv" import may be added), metadata and
// initializers of `before` not consumed by the rewrite are kept.
void expect_sound_rewrite(const ir::Model& before, const ir::Model& after, double tol = 1e-5, int trials = 2);
// Only the numerical part.
void expect_same_function(const ir::Model& before, const ir::Model& after, double tol = 1e-5, int trials = 2);

// The reason recorded for a skip of node `node` (empty when none).
std::string skip_reason(const rewrites::PassResult& r, const std::string& node);

}  // namespace batchconv::testing

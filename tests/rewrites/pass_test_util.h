// Helpers for the clean-up pass tests: run a pass on a model in text syntax,
// compare the function before and after on random inputs, list ops.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"
#include "pass.h"

namespace batchconv::testing {

struct Rewritten {
  std::unique_ptr<ir::Model> before, after;
  rewrites::PassResult result;  // of the last pass
  int fired = 0;                // over all passes
};

inline const rewrites::Pass& pass_named(const std::string& name) {
  for (const auto& p : rewrites::default_pipeline())
    if (p.name == name) return p;
  throw std::runtime_error("no pass " + name);
}

inline Rewritten run_passes(const std::string& text, const std::vector<std::string>& passes) {
  Rewritten r;
  r.before = io::parse_model(text, "<test>");
  r.after = io::clone_model(*r.before);
  for (const auto& name : passes) {
    r.result = pass_named(name).run(*r.after, rewrites::PassOptions{});
    r.fired += r.result.fired;
  }
  // The result must still be a valid model: export, checker, import again.
  onnx::ModelProto p = io::export_model(*r.after);
  io::check_model(p, "<rewritten>");
  r.after = io::import_model(p, "<rewritten>");
  return r;
}

// Op types in topological order, e.g. {"Tile", "Conv"}.
inline std::vector<std::string> ops(const ir::Model& m) {
  std::vector<std::string> out;
  for (const ir::Node* n : m.graph.topological_order()) out.push_back(n->op_type);
  return out;
}

// Both models compute the same outputs (relative 1e-5) on fresh random inputs.
inline void expect_same_function(const ir::Model& a, const ir::Model& b, const std::map<std::string, int64_t>& dims = {}) {
  for (uint64_t seed : {11u, 12u}) {
    auto in = interp::random_inputs(a, seed, dims, 3);
    auto ya = interp::run(a, in), yb = interp::run(b, in);
    ASSERT_EQ(ya.size(), yb.size());
    for (const auto& [name, t] : ya) {
      ASSERT_TRUE(yb.count(name)) << "output " << name << " missing after the pass";
      EXPECT_LE(interp::max_relative_difference(yb.at(name), t), 1e-5) << "output " << name;
    }
  }
}

inline bool has_skip(const rewrites::PassResult& r, const std::string& needle) {
  for (const auto& s : r.skips)
    if (s.reason.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace batchconv::testing

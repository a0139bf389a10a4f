// batchconv-opt's work on one model: passes, explain/stats/verbose, checker,
// verify, dot pictures. Diagnostics go to `diag`; errors throw DriverError.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

#include "ir/graph.h"
#include "options.h"
#include "pass.h"

namespace onnx {
class ModelProto;
}

namespace batchconv::opt {

struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The passes --passes names (or the default pipeline); throws UsageError for an unknown name.
std::vector<rewrites::Pass> select_passes(const Options& o);

// Runs the passes on `model` (named `origin` in messages) and returns the
// exported result, checked and verified as the options ask. `reload_source`
// reads the input again, only needed when the output fails the checker (to
// tell a broken input from a broken rewrite).
onnx::ModelProto process_model(std::unique_ptr<ir::Model> model, const std::function<onnx::ModelProto()>& reload_source,
                               const std::string& origin, const Options& o, std::ostream& diag);

}  // namespace batchconv::opt

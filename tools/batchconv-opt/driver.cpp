// batchconv-opt's work on one model.
#include "driver.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <cstdio>
#include <iomanip>

#include "dot.h"
#include "interpreter/interpreter.h"
#include "onnx/onnx_io.h"

namespace batchconv::opt {

namespace {

struct PassRecord {
  std::string name;
  rewrites::PassResult result;
  double ms = 0;
};

std::string dot_prefix(const Options& o, const std::string& origin) {
  if (!o.dot_prefix.empty()) return o.dot_prefix;
  std::string base = (o.output.empty() || o.output == "-") ? origin : o.output;
  auto slash = base.rfind('/');
  auto dot = base.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) base = base.substr(0, dot);
  return base;
}

void write_dot(const ir::Graph& g, const std::string& path, const std::string& title) {
  try {
    io::write_file_atomic(path, to_dot(g, title));
  } catch (const io::Error& e) {
    throw DriverError(e.what());
  }
}

void print_stats(const std::vector<PassRecord>& records, std::ostream& diag) {
  diag << std::left << std::setw(38) << "pass" << std::right << std::setw(8) << "fired" << std::setw(10) << "removed"
       << std::setw(16) << "bytes saved" << std::setw(10) << "ms" << "\n";
  int fired = 0, removed = 0;
  int64_t bytes = 0;
  for (const auto& r : records) {
    diag << std::left << std::setw(38) << r.name << std::right << std::setw(8) << r.result.fired << std::setw(10)
         << r.result.nodes_removed << std::setw(16) << r.result.bytes_saved << std::setw(10) << std::fixed
         << std::setprecision(1) << r.ms << "\n";
    fired += r.result.fired;
    removed += r.result.nodes_removed;
    bytes += r.result.bytes_saved;
  }
  diag << std::left << std::setw(38) << "total" << std::right << std::setw(8) << fired << std::setw(10) << removed
       << std::setw(16) << bytes << "\n";
}

void verify(const ir::Model& before, const ir::Model& after, const std::string& origin, const Options& o,
            std::ostream& diag) {
  double worst = 0;
  for (uint64_t trial = 0; trial < 2; ++trial) {
    interp::TensorMap in, out_before, out_after;
    try {
      in = interp::random_inputs(before, o.seed + trial, o.dims);
      out_before = interp::run(before, in);
    } catch (const interp::Error& e) {
      throw DriverError(origin + ": --verify: cannot run the input model: " + e.what());
    }
    try {
      out_after = interp::run(after, in);
    } catch (const interp::Error& e) {
      throw DriverError(origin + ": --verify: cannot run the rewritten model: " + e.what());
    }
    for (const auto& [name, want] : out_before) {
      auto it = out_after.find(name);
      if (it == out_after.end()) throw DriverError(origin + ": --verify: output '" + name + "' is missing after rewriting");
      double d = interp::max_relative_difference(it->second, want);
      if (!(d <= 1e-4)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g", d);
        throw DriverError(origin + ": --verify: output '" + name + "' differs after rewriting (max relative difference " +
                          buf + " > 1e-4, seed " + std::to_string(o.seed + trial) + ")");
      }
      worst = std::max(worst, d);
    }
  }
  diag << "verify: " << origin << ": outputs match on 2 random inputs (max relative difference " << worst << ")\n";
}

}  // namespace

std::vector<rewrites::Pass> select_passes(const Options& o) {
  const auto& all = rewrites::default_pipeline();
  if (o.no_rewrites) return {};
  if (!o.passes_given) return all;
  std::vector<rewrites::Pass> out;
  for (const std::string& name : o.passes) {
    bool found = false;
    for (const auto& p : all)
      if (p.name == name) {
        out.push_back(p);
        found = true;
      }
    if (!found) {
      std::string names;
      for (const auto& p : all) names += (names.empty() ? "" : ", ") + p.name;
      throw UsageError("--passes: unknown pass '" + name + "' (known: " + names + ")");
    }
  }
  return out;
}

onnx::ModelProto process_model(std::unique_ptr<ir::Model> model, const std::function<onnx::ModelProto()>& reload_source,
                               const std::string& origin, const Options& o, std::ostream& diag) {
  std::vector<rewrites::Pass> passes = select_passes(o);
  std::unique_ptr<ir::Model> original;
  if (o.verify) original = io::clone_model(*model);
  if (o.emit_dot) write_dot(model->graph, dot_prefix(o, origin) + ".before.dot", origin + " (before)");
  rewrites::PassOptions popts;
  popts.emit_batchconv_ops = o.emit_batchconv_ops;
  std::vector<PassRecord> records;
  for (const auto& p : passes) {
    PassRecord rec;
    rec.name = p.name;
    auto t0 = std::chrono::steady_clock::now();
    try {
      rec.result = p.run(*model, popts);
      model->graph.topological_order();  // a pass must leave a valid graph
    } catch (const std::exception& e) {
      throw DriverError(origin + ": pass '" + p.name + "' failed: " + e.what());
    }
    rec.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (o.explain)
      for (const auto& s : rec.result.skips) diag << "explain: " << p.name << ": " << s.node << ": " << s.reason << "\n";
    if (o.verbose)
      diag << "// ----- after " << p.name << "\n" << io::to_text(io::export_model(*model), o.print_full ? -1 : 64);
    records.push_back(std::move(rec));
  }
  if (o.stats) print_stats(records, diag);
  if (o.emit_dot) write_dot(model->graph, dot_prefix(o, origin) + ".after.dot", origin + " (after)");
  onnx::ModelProto out;
  try {
    out = io::export_model(*model);
  } catch (const std::exception& e) {
    throw DriverError(origin + ": cannot export the rewritten model: " + e.what());
  }
  if (!o.no_check) {
    try {
      io::check_model(out, origin + " (rewritten)");
    } catch (const io::Error& e) {
      bool input_ok = true;
      try {
        io::check_model(reload_source(), origin);
      } catch (const io::Error&) {
        input_ok = false;
      }
      // Never write a model ONNX's checker refuses: whoever reads it next
      // (a runtime, this tool again) gets it only with --no-check.
      throw DriverError(std::string(e.what()) +
                        (input_ok ? "" : " (the input fails the checker too; --no-check writes the result anyway)"));
    }
  }
  if (o.verify) verify(*original, *model, origin, o, diag);
  return out;
}

}  // namespace batchconv::opt

// Measuring candidates, in a worker process (this executable with
// --measure-worker) so that a kernel that crashes or hangs is blamed and
// skipped. The worker builds the problem once (bcbench's buffers, reused
// for every run), computes the double-precision reference once, then for
// each candidate loads its shared object, registers it as the tuned kernel
// of the problem's shape (batchconv/tuning.h) and calls the public API, so
// the runtime's own views, weight packing and dispatch are part of what is
// timed. Each is checked against the reference before it is timed; timing
// interleaves the candidates round by round (the machine is noisy) and
// reports per-call medians.
//
// Protocol (worker stdout, one line each): "key <shape key>",
// "probe <family> <kernel name>", "begin <id>", "checked <id> <max rel err>",
// "sample <id> <ms per call>", "peer <name> <ms>", "done".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "args.h"

namespace batchconv_tune {

struct Candidate {
  std::string id;
  std::string so_path;    // "" for the runtime's default kernels
  std::string generator;  // the generator the .so was built from
  std::string family;     // rows | channels
};

struct Measured {
  std::string status = "ok";  // ok, wrong, crash, timeout
  std::string message;
  double median_ms = 0;
  double max_rel_err = 0;
};

struct MeasureOptions {
  std::vector<std::string> problem_flags;  // bcbench flags (--op, --x, --w, ...)
  int rounds = 5;
  double min_sample_ms = 20;  // each sample runs the op this long at least
  double tol = 1e-4;
  double line_timeout_s = 120;  // a candidate silent this long hangs
  bool peer = false;            // also time oneDNN's methods
  int threads = 0;
};

struct MeasureResult {
  std::map<std::string, Measured> by_id;
  std::string peer_name;
  double peer_ms = 0;
};

// Runs workers until every candidate has a verdict (a crash or hang is
// blamed on the candidate running and the rest measured again without it).
MeasureResult measure(const std::vector<Candidate>& cands, const MeasureOptions& o,
                      const std::string& self, const std::string& work_dir);

struct Probe {
  std::string shape_key;
  std::map<std::string, std::string> generator_of_family;  // rows / channels -> generator
  std::string default_family;                              // what the chooser picks
  std::string error;
};

// What the runtime runs for the problem: its shape key, which generator
// each family's call site uses, and the chooser's family.
Probe probe(const MeasureOptions& o, const std::string& self, const std::string& work_dir);

// The worker's main (argv after --measure-worker / --probe-worker).
int measure_worker_main(const std::vector<std::string>& args, bool probe_only);

}  // namespace batchconv_tune

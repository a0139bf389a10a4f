// The tuning database: plain text, one JSON object per line (JSON lines),
// diffable and mergeable. Two kinds of line:
//
//   {"type":"trial", <key>, "index":3, "generation":1, "source":"search",
//    "point":"family=channels,ch_vectors=2,...", "status":"ok",
//    "time_ms":1.9, "default_ms":2.1, "ratio":0.90, "compile_s":3.2, "elapsed_s":41,
//    "message":""}
//   {"type":"record", <key>, "generator":"grouped_conv", "family":"channels",
//    "point":"...", "source":"search", "time_ms":1.9, "default_ms":2.1,
//    "default_point":"...", "baselines_ms":{"Adams2019":4.0, ...},
//    "trials":40, "tuning_s":600, "seed":1, "peer":"onednn:direct", "peer_ms":2.5}
//
// <key> is "op", "shape" (tuning_shape_key), "target" (the Halide target the
// kernel is built for), "machine" (the CPU model), "halide" and "batchconv"
// (versions). A record's "source" is "default" when no candidate beat the
// default kernel: nothing is built for it. Trials are appended as they
// finish, so a killed tuner resumes from the file; the record line closes a
// key. Reading keeps the last record of a key.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace batchconv_tune {

class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Key {
  std::string op, shape, target, machine, halide, batchconv;
  bool operator<(const Key& o) const;
  bool operator==(const Key& o) const;
  std::string str() const;  // "grouped_conv [b=1 ...] on x86-64-linux-avx512_skylake"
};

struct Trial {
  Key key;
  int index = 0;       // order within its key (0, 1, ...)
  int generation = 0;  // search round
  std::string source;  // "default", "Mullapudi2016", "Li2018", "Adams2019", "search", ...
  std::string point;   // generator params "name=value,..." (schedule_space.h text)
  std::string status;  // ok, compile_error, compile_timeout, crash, timeout, wrong, invalid
  double time_ms = 0, default_ms = 0, ratio = 0;  // ok only: median, default's in the same run
  double compile_s = 0;
  double elapsed_s = 0;  // the key's tuning time when this trial finished (resume goes on from it)
  std::string message;
};

struct Record {
  Key key;
  std::string generator;  // the generator the chosen kernel is built from
  std::string family;     // rows | channels | lanes (the runtime path it needs)
  std::string point;      // generator params of the chosen kernel
  std::string source;     // "default": the default kernel won, nothing is built
  double time_ms = 0, default_ms = 0;
  std::string default_point;
  std::map<std::string, double> baselines_ms;  // autoschedulers that ran (missing: failed)
  int trials = 0;
  double tuning_s = 0;
  uint64_t seed = 0;
  std::string label;  // the workload's name where the tuner was given one (informational)
  std::string peer;   // the best oneDNN method in the final run ("" when none ran)
  double peer_ms = 0;
};

struct Database {
  std::vector<Trial> trials;    // in file order
  std::vector<Record> records;  // one per key, in file order of their last record
  const Record* find(const Key& k) const;
  std::vector<Trial> trials_of(const Key& k) const;
};

// Reads `path` (a missing file is an empty database). Throws DbError
// "FILE:LINE: what is wrong" on a line that is not a JSON object of a known
// type or lacks a field.
Database read_db(const std::string& path);

std::string to_json_line(const Trial& t);
std::string to_json_line(const Record& r);

// Appends one line and flushes it to disk (fsync): a kill leaves whole lines.
void append_line(const std::string& path, const std::string& line);

// Writes `db` (records and trials sorted by key, trials by index) to `path`
// through a temporary file and a rename. merge uses it.
void write_db(const std::string& path, const Database& db);

// The machine's CPU model ("model name" of /proc/cpuinfo, else "unknown").
std::string machine_model();

// "" when `r` may be used on (machine, target); else why not, naming both.
std::string incompatibility(const Key& k, const std::string& machine, const std::string& target);

// Finds the record of (op, shape) for `target` on `machine`. A record for
// the same op and shape made on another machine or for another target is
// refused: DbError naming both, unless `force`.
const Record* lookup(const Database& db, const std::string& op, const std::string& shape,
                     const std::string& target, const std::string& machine, bool force);

}  // namespace batchconv_tune

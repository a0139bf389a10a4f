#include "tuning_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

namespace batchconv_tune {

using nlohmann::json;

namespace {

auto tie(const Key& k) { return std::tie(k.op, k.shape, k.target, k.machine, k.halide, k.batchconv); }

void put_key(json& j, const Key& k) {
  j["op"] = k.op;
  j["shape"] = k.shape;
  j["target"] = k.target;
  j["machine"] = k.machine;
  j["halide"] = k.halide;
  j["batchconv"] = k.batchconv;
}

// Field access that names the line and the field when it is missing or of
// the wrong type.
struct LineReader {
  const json& j;
  std::string where;  // "FILE:LINE"

  [[noreturn]] void fail(const std::string& what) const { throw DbError(where + ": " + what); }
  const json& field(const char* name) const {
    auto it = j.find(name);
    if (it == j.end()) fail(std::string("missing field \"") + name + "\"");
    return *it;
  }
  std::string str(const char* name) const {
    const json& v = field(name);
    if (!v.is_string()) fail(std::string("field \"") + name + "\" is not a string");
    return v.get<std::string>();
  }
  double num(const char* name, bool required = true) const {
    if (!required && !j.contains(name)) return 0;
    const json& v = field(name);
    if (!v.is_number()) fail(std::string("field \"") + name + "\" is not a number");
    return v.get<double>();
  }
  Key key() const {
    Key k{str("op"), str("shape"), str("target"), str("machine"), str("halide"), str("batchconv")};
    return k;
  }
};

}  // namespace

bool Key::operator<(const Key& o) const { return tie(*this) < tie(o); }
bool Key::operator==(const Key& o) const { return tie(*this) == tie(o); }
std::string Key::str() const { return op + " [" + shape + "] for " + target; }

const Record* Database::find(const Key& k) const {
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->key == k) return &*it;
  return nullptr;
}

std::vector<Trial> Database::trials_of(const Key& k) const {
  std::vector<Trial> out;
  for (const Trial& t : trials)
    if (t.key == k) out.push_back(t);
  return out;
}

Database read_db(const std::string& path) {
  Database db;
  std::ifstream in(path);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0) return db;
    throw DbError(path + ": cannot be read");
  }
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw DbError(where + ": not a JSON object (" + e.what() + ")");
    }
    if (!j.is_object()) throw DbError(where + ": not a JSON object");
    LineReader r{j, where};
    const std::string type = r.str("type");
    if (type == "trial") {
      Trial t;
      t.key = r.key();
      t.index = static_cast<int>(r.num("index"));
      t.generation = static_cast<int>(r.num("generation"));
      t.source = r.str("source");
      t.point = r.str("point");
      t.status = r.str("status");
      t.time_ms = r.num("time_ms", false);
      t.default_ms = r.num("default_ms", false);
      t.ratio = r.num("ratio", false);
      t.compile_s = r.num("compile_s", false);
      t.elapsed_s = r.num("elapsed_s", false);
      if (j.contains("message")) t.message = r.str("message");
      db.trials.push_back(t);
    } else if (type == "record") {
      Record rec;
      rec.key = r.key();
      rec.generator = r.str("generator");
      rec.family = r.str("family");
      rec.point = r.str("point");
      rec.source = r.str("source");
      rec.time_ms = r.num("time_ms");
      rec.default_ms = r.num("default_ms");
      rec.default_point = r.str("default_point");
      if (j.contains("baselines_ms")) {
        const json& b = r.field("baselines_ms");
        if (!b.is_object()) r.fail("field \"baselines_ms\" is not an object");
        for (auto it = b.begin(); it != b.end(); ++it) {
          if (!it->is_number()) r.fail("baselines_ms." + it.key() + " is not a number");
          rec.baselines_ms[it.key()] = it->get<double>();
        }
      }
      rec.trials = static_cast<int>(r.num("trials"));
      rec.tuning_s = r.num("tuning_s", false);
      rec.seed = static_cast<uint64_t>(r.num("seed", false));
      if (j.contains("peer")) rec.peer = r.str("peer");
      if (j.contains("label")) rec.label = r.str("label");
      rec.peer_ms = r.num("peer_ms", false);
      // The last record of a key wins.
      db.records.erase(std::remove_if(db.records.begin(), db.records.end(),
                                      [&](const Record& o) { return o.key == rec.key; }),
                       db.records.end());
      db.records.push_back(rec);
    } else {
      throw DbError(where + ": unknown type \"" + type + "\" (expected \"trial\" or \"record\")");
    }
  }
  return db;
}

std::string to_json_line(const Trial& t) {
  json j;
  j["type"] = "trial";
  put_key(j, t.key);
  j["index"] = t.index;
  j["generation"] = t.generation;
  j["source"] = t.source;
  j["point"] = t.point;
  j["status"] = t.status;
  if (t.status == "ok") {
    j["time_ms"] = t.time_ms;
    j["default_ms"] = t.default_ms;
    j["ratio"] = t.ratio;
  }
  j["compile_s"] = t.compile_s;
  j["elapsed_s"] = t.elapsed_s;
  j["message"] = t.message;
  return j.dump();
}

std::string to_json_line(const Record& r) {
  json j;
  j["type"] = "record";
  put_key(j, r.key);
  j["generator"] = r.generator;
  j["family"] = r.family;
  j["point"] = r.point;
  j["source"] = r.source;
  j["time_ms"] = r.time_ms;
  j["default_ms"] = r.default_ms;
  j["default_point"] = r.default_point;
  j["baselines_ms"] = json::object();
  for (const auto& [name, ms] : r.baselines_ms) j["baselines_ms"][name] = ms;
  j["trials"] = r.trials;
  j["tuning_s"] = r.tuning_s;
  j["seed"] = r.seed;
  if (!r.label.empty()) j["label"] = r.label;
  if (!r.peer.empty()) {
    j["peer"] = r.peer;
    j["peer_ms"] = r.peer_ms;
  }
  return j.dump();
}

void append_line(const std::string& path, const std::string& line) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) throw DbError(path + ": cannot be opened for appending");
  const std::string data = line + "\n";
  const ssize_t w = write(fd, data.data(), data.size());
  const bool ok = w == static_cast<ssize_t>(data.size()) && fsync(fd) == 0;
  close(fd);
  if (!ok) throw DbError(path + ": write failed (disk full?)");
}

void write_db(const std::string& path, const Database& db) {
  std::vector<Trial> trials = db.trials;
  std::stable_sort(trials.begin(), trials.end(), [](const Trial& a, const Trial& b) {
    if (!(a.key == b.key)) return a.key < b.key;
    return a.index < b.index;
  });
  std::vector<Record> records = db.records;
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& a, const Record& b) { return a.key < b.key; });
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw DbError(tmp + ": cannot be written");
    for (const Trial& t : trials) out << to_json_line(t) << "\n";
    for (const Record& r : records) out << to_json_line(r) << "\n";
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw DbError(tmp + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw DbError(path + ": cannot be replaced");
  }
}

std::string machine_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon == std::string::npos) break;
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
      return v;
    }
  }
  return "unknown";
}

std::string incompatibility(const Key& k, const std::string& machine, const std::string& target) {
  if (k.machine != machine)
    return "it was tuned on \"" + k.machine + "\", this machine is \"" + machine + "\"";
  if (k.target != target) return "it was tuned for target " + k.target + ", not " + target;
  return "";
}

const Record* lookup(const Database& db, const std::string& op, const std::string& shape,
                     const std::string& target, const std::string& machine, bool force) {
  const Record* other = nullptr;
  for (auto it = db.records.rbegin(); it != db.records.rend(); ++it) {
    if (it->key.op != op || it->key.shape != shape) continue;
    if (incompatibility(it->key, machine, target).empty()) return &*it;
    if (!other) other = &*it;
  }
  if (!other) return nullptr;
  if (force) return other;
  throw DbError("the tuning record of " + op + " [" + shape + "] cannot be used: " +
                incompatibility(other->key, machine, target) +
                " (tune again here, or force it: --force-tuning / BATCHCONV_TUNING_FORCE)");
}

}  // namespace batchconv_tune

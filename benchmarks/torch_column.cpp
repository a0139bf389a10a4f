#include "torch_column.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace bcbench {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

}  // namespace

TorchResults run_torch_peer(const std::string& script, const std::vector<Workload>& ws, int reps) {
  TorchResults r;
  const char* py = "/usr/bin/python3";
  if (access(py, X_OK) != 0) return r.skipped = std::string(py) + " not found", r;
  if (access(script.c_str(), R_OK) != 0) return r.skipped = script + " not found", r;
  char tmpl[] = "/tmp/bc_torch_specXXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return r.skipped = "cannot create a temporary file", r;
  close(fd);
  {
    std::ofstream f(tmpl);
    for (const auto& w : ws) {
      const auto& s = w.spec;
      f << w.id << '|' << op_name(s.op) << '|' << shape_str(s.x_shape) << '|' << shape_str(s.w_shape) << '|'
        << s.desc.pad_begin[0] << '|' << s.desc.groups << '|'
        << (s.layout == batchconv::BroadcastLayout::Concatenated ? "concat" : "batched") << '|' << reps << '\n';
    }
  }
  const std::string cmd = std::string(py) + " " + script + " " + tmpl + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    std::remove(tmpl);
    return r.skipped = "cannot run " + cmd, r;
  }
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    auto f = split(line, '|');
    if (f.size() >= 5 && f[0] == "RESULT") {
      TorchRow row{f[1], f[2], f.size() > 5 ? f[5] : "", std::atof(f[3].c_str()), std::atof(f[4].c_str())};
      r.rows.push_back(row);
    } else if (f.size() >= 4 && f[0] == "AGREE") {
      r.notes.push_back(f[1] + ": " + f[2] + " agree to " + f[3] + " (max rel diff)");
    } else if (f.size() >= 2 && f[0] == "SKIP") {
      r.skipped = f[1];
    } else if (!line.empty()) {
      r.notes.push_back("torch_peer.py: " + line);
    }
  }
  const int status = pclose(p);
  std::remove(tmpl);
  if (status != 0 && r.skipped.empty() && r.rows.empty())
    r.skipped = "torch_peer.py failed (status " + std::to_string(status) + ")";
  return r;
}

}  // namespace bcbench

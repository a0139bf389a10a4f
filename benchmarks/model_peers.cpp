#include "model_peers.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace model_layouts {

std::map<std::string, double> run_torch_peer(const std::string& script, const std::vector<ModelSpec>& models,
                                             int reps, std::string* note) {
  // One line per model: "name|tasks|reps|layer;layer;..." (model_peer.py's format).
  std::ostringstream spec;
  for (const ModelSpec& m : models) {
    if (m.peer.empty()) continue;
    spec << m.name << '|' << m.tasks << '|' << reps << '|';
    for (size_t k = 0; k < m.peer.size(); ++k) {
      const bcbench::ConvGeom& g = m.peer[k].g;
      spec << (k ? ";" : "") << g.n << ',' << g.cin << ',' << g.h << ',' << g.w << ',' << g.cout << ',' << g.kh << ','
           << g.kw << ',' << g.groups << ',' << g.sh << ',' << g.sw << ',' << g.pt << ',' << g.pl << ',' << g.pb << ','
           << g.pr << ',' << (g.one_d ? 1 : 0) << ',' << m.peer[k].in << ',' << m.peer[k].add << ','
           << (m.peer[k].relu ? 1 : 0) << ',' << m.peer[k].pool;
    }
    spec << '\n';
  }
  std::map<std::string, double> ms;
  char path[] = "/tmp/bc_model_peerXXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) {
    *note = "cannot create a temporary file";
    return ms;
  }
  const std::string text = spec.str();
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    *note = "cannot write the spec";
    std::remove(path);
    return ms;
  }
  const std::string cmd = "/usr/bin/python3 " + script + " " + path + " 2>&1";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) {
      const std::string line(buf);
      if (line.rfind("RESULT|", 0) == 0) {
        std::stringstream ls(line.substr(7));
        std::string model, med;
        std::getline(ls, model, '|');
        std::getline(ls, med, '|');
        ms[model] = std::atof(med.c_str());
      } else if (line.rfind("SKIP|", 0) == 0) {
        *note = line.substr(5);
      }
    }
    pclose(p);
  } else {
    *note = "cannot run " + cmd;
  }
  std::remove(path);
  return ms;
}

}  // namespace model_layouts

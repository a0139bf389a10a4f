#include "report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "processes.h"

namespace batchconv_tune {

namespace {

std::string ms(double v) {
  if (v <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, v < 10 ? "%.3f" : "%.1f", v);
  return b;
}

std::string ratio(double a, double b) {
  if (a <= 0 || b <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
  return buf;
}

}  // namespace

std::string markdown_report(const Database& db) {
  std::ostringstream o;
  o << "| workload | op | shape | target | default ms | tuned ms | tuned vs default | best autoscheduler "
       "ms | tuned vs it | oneDNN best ms | trials | tuning s | chosen |\n";
  o << "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const Record& r : db.records) {
    std::string best_as = "-";
    double best_as_ms = 0;
    for (const auto& [name, t] : r.baselines_ms)
      if (best_as_ms == 0 || t < best_as_ms) best_as_ms = t, best_as = name;
    o << "| " << (r.label.empty() ? "-" : r.label) << " | " << r.key.op << " | " << r.key.shape << " | "
      << r.key.target << " | " << ms(r.default_ms) << " | " << ms(r.time_ms) << " | "
      << ratio(r.default_ms, r.time_ms) << " | " << ms(best_as_ms)
      << (best_as_ms > 0 ? " (" + best_as + ")" : "") << " | " << ratio(best_as_ms, r.time_ms) << " | "
      << ms(r.peer_ms) << (r.peer.empty() ? "" : " (" + r.peer + ")") << " | " << r.trials << " | "
      << static_cast<int>(r.tuning_s + 0.5) << " | " << (r.source == "default" ? "default" : r.point)
      << " |\n";
  }
  return o.str();
}

void plot_best_so_far(const Database& db, const std::string& svg_path) {
  const std::string data = svg_path + ".dat", script = svg_path + ".gp";
  std::ofstream d(data, std::ios::trunc);
  std::ostringstream plot;
  int block = 0;
  for (const Record& r : db.records) {
    std::vector<Trial> ts = db.trials_of(r.key);
    std::sort(ts.begin(), ts.end(), [](const Trial& a, const Trial& b) { return a.index < b.index; });
    double best = 0;
    d << "# " << (r.label.empty() ? r.key.op : r.label) << "\n";
    for (const Trial& t : ts) {
      if (t.status == "ok" && t.source != "Mullapudi2016" && t.source != "Li2018" &&
          t.source.rfind("Adams2019", 0) != 0) {
        const double v = t.ratio * r.default_ms;
        if (best == 0 || v < best) best = v;
      }
      if (best > 0) d << t.index + 1 << " " << best / r.default_ms << "\n";
    }
    d << "\n\n";
    std::string title = r.label.empty() ? r.key.op : r.label;
    for (char& c : title)
      if (c == '"' || c == '_') c = ' ';
    plot << (block ? ", " : "") << "'" << data << "' index " << block << " with steps lw 2 title \"" << title
         << "\"";
    ++block;
  }
  d.close();
  std::ofstream g(script, std::ios::trunc);
  g << "set terminal svg size 900,520 dynamic font 'sans,12'\n"
    << "set output '" << svg_path << "'\n"
    << "set title 'batchconv-tune: best time so far (relative to the default kernel)'\n"
    << "set xlabel 'trials'\nset ylabel 'best time / default time'\nset grid\n"
    << "set key outside right\n"
    << "plot " << (block ? plot.str() : "1 notitle") << "\n";
  g.close();
  const ProcResult r = run_process({"gnuplot", script}, 60, svg_path + ".log");
  if (!r.ok())
    throw std::runtime_error("gnuplot (Debian package gnuplot-nox) could not draw " + svg_path + ": " +
                             r.describe() + " " + r.log_tail);
}

Database merge_dbs(const std::vector<Database>& dbs) {
  Database out;
  std::set<std::pair<Key, int>> seen;
  for (const Database& db : dbs) {
    for (const Trial& t : db.trials)
      if (seen.insert({t.key, t.index}).second) out.trials.push_back(t);
    for (const Record& r : db.records) {
      out.records.erase(std::remove_if(out.records.begin(), out.records.end(),
                                       [&](const Record& o) { return o.key == r.key; }),
                        out.records.end());
      out.records.push_back(r);
    }
  }
  return out;
}

}  // namespace batchconv_tune

// batchconv-tune: searches the conv schedule space for given shapes and
// targets, and keeps what it finds in a tuning database. See help_text().
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "batchconv/batchconv.h"
#include "measure.h"
#include "report.h"
#include "tune_args.h"
#include "tuner.h"

namespace {

using namespace batchconv_tune;

int run_tune(const TuneArgs& a, const char* argv0) {
  const Tools tools = default_tools(argv0);
  std::vector<Job> all = a.jobs;
  std::vector<Job> mine;
  for (size_t i = 0; i < all.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(a.shard_count)) == a.shard_index) mine.push_back(all[i]);
  if (a.shard_count > 1)
    std::fprintf(stderr, "batchconv-tune: shard %d/%d: %zu of %zu jobs\n", a.shard_index, a.shard_count,
                 mine.size(), all.size());
  int failed = 0;
  for (const Job& j : mine) {
    try {
      tune_job(j, a.options, tools);
    } catch (const DbError& e) {
      std::fprintf(stderr, "batchconv-tune: %s\n", e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "batchconv-tune: %s: %s\n", j.label.c_str(), e.what());
      ++failed;
    }
  }
  if (!a.report.empty() || !a.plot.empty()) {
    const Database db = read_db(a.options.db);
    if (!a.report.empty()) {
      std::ofstream out(a.report, std::ios::trunc);
      out << markdown_report(db);
    }
    if (!a.plot.empty()) plot_best_so_far(db, a.plot);
  }
  return failed ? 1 : 0;
}

int run_merge(const TuneArgs& a) {
  std::vector<Database> dbs;
  for (const std::string& in : a.inputs) {
    if (access(in.c_str(), R_OK) != 0) throw DbError(in + ": cannot be read");
    dbs.push_back(read_db(in));
  }
  const Database merged = merge_dbs(dbs);
  write_db(a.out, merged);
  std::fprintf(stderr, "batchconv-tune merge: %zu records, %zu trials into %s\n", merged.records.size(),
               merged.trials.size(), a.out.c_str());
  return 0;
}

int run_report(const TuneArgs& a) {
  const Database db = read_db(a.options.db);
  const std::string table = markdown_report(db);
  if (a.report.empty()) std::fputs(table.c_str(), stdout);
  else std::ofstream(a.report, std::ios::trunc) << table;
  if (!a.plot.empty()) plot_best_so_far(db, a.plot);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--measure-worker" || args[0] == "--probe-worker")) {
    const bool probe = args[0] == "--probe-worker";
    return measure_worker_main({args.begin() + 1, args.end()}, probe);
  }
  try {
    const TuneArgs a = parse_tune_args(args);
    if (a.help) {
      std::fputs(tune_help_text(), stdout);
      return 0;
    }
    if (a.command == "merge") return run_merge(a);
    if (a.command == "report") return run_report(a);
    return run_tune(a, argv[0]);
  } catch (const TuneUsageError& e) {
    std::fprintf(stderr, "batchconv-tune: %s\n(see batchconv-tune --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "batchconv-tune: %s\n", e.what());
    return 1;
  }
}

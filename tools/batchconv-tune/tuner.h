// The search for one job (an op's shapes on one target): the default
// kernels, Halide 14's three autoschedulers as baselines, then generations
// of points of the schedule space (random at first, then mutations of the
// best so far), each compiled in its own process, checked and timed against
// the runtime's default in the same run. Every trial is appended to the
// database as it finishes; a final run re-times the best few beside the
// default and oneDNN and writes the job's record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compile.h"
#include "progress.h"
#include "tuning_db.h"

namespace batchconv_tune {

struct Job {
  std::string label;                       // for progress and reports
  std::vector<std::string> problem_flags;  // bcbench flags
  std::string target;                      // Halide target of the kernels
};

struct TuneOptions {
  std::string db;
  double budget_s = 600;  // per job, compiles and timing included
  int jobs = 2;           // parallel compiles
  uint64_t seed = 1;
  int population = 8;       // candidates per generation
  int max_generations = 1000;
  std::vector<std::string> baselines{"Mullapudi2016", "Li2018", "Adams2019", "Adams2019-greedy"};
  double compile_timeout_s = 120;
  double run_timeout_s = 60;
  int rounds = 5;
  double min_sample_ms = 20;
  int threads = 0;
  bool retune = false;
  bool peer = true;
  std::string work_dir;  // candidates' objects and logs
  ProgressMode progress = ProgressMode::Auto;
};

// Tunes `job` (resuming its trials from the database) and appends its
// record. Returns the record.
Record tune_job(const Job& job, const TuneOptions& o, const Tools& tools);

// The key fields this build and machine write.
std::string halide_version();
std::string batchconv_version();

}  // namespace batchconv_tune

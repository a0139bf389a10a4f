// batchconv-tune's command line (documented in tune_help_text()).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "tuner.h"

namespace batchconv_tune {

class TuneUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TuneArgs {
  std::string command = "tune";  // tune | merge | report
  bool help = false;
  std::vector<Job> jobs;         // problems x targets, in order (shards split this list)
  TuneOptions options;
  int shard_index = 0, shard_count = 1;
  std::string report, plot;      // tune and report: Markdown table and SVG plot
  std::vector<std::string> inputs;  // merge
  std::string out;                  // merge
};

// Throws TuneUsageError naming the bad flag and what was expected.
TuneArgs parse_tune_args(const std::vector<std::string>& argv);
const char* tune_help_text();

}  // namespace batchconv_tune

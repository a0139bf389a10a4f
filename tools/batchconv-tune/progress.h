// Progress of a tuning job for a person at a terminal: one redrawn line
// (trials done, trials/s, best so far against the default, ETA) on a
// terminal, plain lines otherwise (logs, CI).
#pragma once

#include <string>

namespace batchconv_tune {

enum class ProgressMode { Auto, Bar, Lines, Quiet };

class Progress {
 public:
  Progress(ProgressMode mode, std::string label, double budget_s);
  // After each generation: trials so far, the best ratio to the default and
  // its time, the job's elapsed time.
  void update(int generation, int trials, int failed, double best_ratio, double best_ms,
              double default_ms, double elapsed_s);
  // Within a generation (the bar only): "compiling 3/14", "timing 9 candidates".
  void step(int generation, const std::string& what, double elapsed_s);
  void message(const std::string& line);  // a line that stays (clears the bar first)
  void finish(const std::string& summary);

 private:
  bool bar_;
  bool quiet_;
  std::string label_;
  double budget_s_;
  double start_;
  bool drawn_ = false;
};

}  // namespace batchconv_tune

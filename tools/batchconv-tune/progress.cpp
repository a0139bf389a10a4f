#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "processes.h"

namespace batchconv_tune {

namespace {

std::string clock_text(double s) {
  const int t = static_cast<int>(std::max(0.0, s) + 0.5);
  char b[32];
  std::snprintf(b, sizeof b, "%d:%02d", t / 60, t % 60);
  return b;
}

}  // namespace

Progress::Progress(ProgressMode mode, std::string label, double budget_s)
    : bar_(mode == ProgressMode::Bar || (mode == ProgressMode::Auto && isatty(2))),
      quiet_(mode == ProgressMode::Quiet),
      label_(std::move(label)),
      budget_s_(budget_s),
      start_(now_s()) {}

void Progress::update(int generation, int trials, int failed, double best_ratio, double best_ms,
                      double default_ms, double elapsed_s) {
  if (quiet_) return;
  const double rate = elapsed_s > 0 ? trials / elapsed_s : 0;
  char line[512];
  const double frac = budget_s_ > 0 ? std::min(1.0, elapsed_s / budget_s_) : 0;
  std::string bar(20, ' ');
  for (int i = 0; i < static_cast<int>(frac * 20 + 0.5); ++i) bar[static_cast<size_t>(i)] = '#';
  std::snprintf(line, sizeof line,
                "%s [%s] gen %d, %d trials (%d failed), %.2f/s, best %.3f ms = %.2fx the default "
                "(%.3f ms), ETA %s",
                label_.c_str(), bar.c_str(), generation, trials, failed, rate, best_ms,
                best_ratio > 0 ? 1.0 / best_ratio : 0.0, default_ms,
                clock_text(budget_s_ - elapsed_s).c_str());
  if (bar_) {
    std::fprintf(stderr, "\r\033[K%s", line);
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

void Progress::step(int generation, const std::string& what, double elapsed_s) {
  if (!bar_ || quiet_) return;
  std::fprintf(stderr, "\r\033[K%s: gen %d, %s, ETA %s", label_.c_str(), generation, what.c_str(),
               clock_text(budget_s_ - elapsed_s).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::message(const std::string& line) {
  if (quiet_) return;
  if (bar_ && drawn_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", line.c_str());
  drawn_ = false;
}

void Progress::finish(const std::string& summary) {
  if (quiet_) return;
  message(summary + " (" + clock_text(now_s() - start_) + " here)");
}

}  // namespace batchconv_tune

// Child processes with time limits: every candidate is compiled and run in
// its own process, so one that crashes, hangs or exhausts memory is recorded
// and never takes the tuner down.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace batchconv_tune {

struct ProcResult {
  int exit_code = -1;  // valid when !signaled && !timed_out
  int signal = 0;      // the signal that killed it
  bool timed_out = false;
  double seconds = 0;
  std::string log_tail;  // the last lines of its stdout + stderr
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string describe() const;  // "exit 1", "killed by signal 11 (Segmentation fault)", "timed out after 60 s"
};

// Runs argv (argv[0] found on PATH) with stdout and stderr into `log_path`,
// in its own process group, killed with the whole group after timeout_s.
// `env` entries are added to the environment.
ProcResult run_process(const std::vector<std::string>& argv, double timeout_s,
                       const std::string& log_path,
                       const std::map<std::string, std::string>& env = {});

// A child whose stdout is read line by line with a deadline per line
// (stderr goes to a log file).
class LineProcess {
 public:
  LineProcess(const std::vector<std::string>& argv, const std::string& stderr_path);
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // The next line, without its newline; false at end of output or when no
  // line came within timeout_s (then timed_out() is true).
  bool read_line(std::string* line, double timeout_s);
  bool timed_out() const { return timed_out_; }
  void kill();
  // Waits for the exit (after end of output or kill).
  ProcResult wait();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buf_, stderr_path_;
  bool timed_out_ = false;
  double start_ = 0;
};

double now_s();
std::string tail_of_file(const std::string& path, size_t max_bytes = 1500);

}  // namespace batchconv_tune

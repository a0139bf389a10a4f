#include "processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace batchconv_tune {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// In the child: its own process group, the environment, then exec.
[[noreturn]] void exec_child(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& env) {
  setpgid(0, 0);
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> a = c_argv(argv);
  execvp(a[0], a.data());
  dprintf(2, "cannot run %s: %s\n", a[0], strerror(errno));
  _exit(127);
}

ProcResult status_result(int status, double seconds) {
  ProcResult r;
  r.seconds = seconds;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

}  // namespace

double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string tail_of_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > std::streamoff(max_bytes) ? size - std::streamoff(max_bytes) : 0;
  in.seekg(from);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string ProcResult::describe() const {
  if (timed_out) return "timed out after " + std::to_string(static_cast<int>(seconds + 0.5)) + " s";
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit " + std::to_string(exit_code);
}

ProcResult run_process(const std::vector<std::string>& argv, double timeout_s,
                       const std::string& log_path, const std::map<std::string, std::string>& env) {
  const double start = now_s();
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log < 0) throw std::runtime_error("cannot write " + log_path);
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    dup2(log, 1);
    dup2(log, 2);
    exec_child(argv, env);
  }
  close(log);
  setpgid(pid, pid);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (now_s() - start > timeout_s) {
      ::kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProcResult r = status_result(status, now_s() - start);
  r.timed_out = timed_out;
  r.log_tail = tail_of_file(log_path);
  return r;
}

LineProcess::LineProcess(const std::vector<std::string>& argv, const std::string& stderr_path)
    : stderr_path_(stderr_path), start_(now_s()) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err < 0) throw std::runtime_error("cannot write " + stderr_path);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    dup2(err, 2);
    exec_child(argv, {});
  }
  close(fds[1]);
  close(err);
  setpgid(pid_, pid_);
  fd_ = fds[0];
}

LineProcess::~LineProcess() {
  if (pid_ > 0) {
    kill();
    wait();
  }
  if (fd_ >= 0) close(fd_);
}

bool LineProcess::read_line(std::string* line, double timeout_s) {
  const double deadline = now_s() + timeout_s;
  for (;;) {
    const size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      *line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return true;
    }
    if (fd_ < 0) return false;
    const double left = deadline - now_s();
    if (left <= 0) {
      timed_out_ = true;
      return false;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n <= 0) {
      close(fd_);
      fd_ = -1;
      if (!buf_.empty()) {  // a last line without newline
        *line = buf_;
        buf_.clear();
        return true;
      }
      return false;
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

void LineProcess::kill() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
}

ProcResult LineProcess::wait() {
  if (pid_ <= 0) return ProcResult{};
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  ProcResult r = status_result(status, now_s() - start_);
  r.timed_out = timed_out_;
  r.log_tail = tail_of_file(stderr_path_);
  return r;
}

}  // namespace batchconv_tune

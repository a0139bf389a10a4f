#include "codegen.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

namespace batchconv::compiler {

namespace fs = std::filesystem;

namespace {

// A child process compiling one pipeline, and the pipe its error comes back on.
struct Isolated {
  pid_t pid = -1;
  int fd = -1;
};

Isolated start_isolated(const std::function<void()>& fn, const std::string& what) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(what + ": cannot create a pipe (" + std::strerror(errno) + ")");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(what + ": cannot fork (" + std::strerror(errno) + ")");
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);  // a file size limit becomes a failed write, not a kill
    struct Job {
      const std::function<void()>* fn;
      std::string error;
    } job{&fn, ""};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t(1) << 30);
    pthread_t th;
    auto body = [](void* p) -> void* {
      auto* j = static_cast<Job*>(p);
      try {
        (*j->fn)();
      } catch (const std::exception& e) {
        j->error = e.what();
        if (j->error.empty()) j->error = "unknown error";
      } catch (...) {
        j->error = "unknown error";
      }
      return nullptr;
    };
    if (pthread_create(&th, &attr, body, &job) != 0) body(&job);
    else pthread_join(th, nullptr);
    if (!job.error.empty()) {
      ssize_t unused = ::write(fds[1], job.error.data(), job.error.size());
      (void)unused;
      ::_exit(3);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

// Waits for the child; "" when it succeeded, else what went wrong.
std::string finish_isolated(Isolated c, const std::string& what) {
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(c.fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) msg.append(buf, static_cast<size_t>(n));
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return what + ": " + msg;
  if (WIFSIGNALED(status))
    return what + ": Halide's code generator died (signal " + std::to_string(WTERMSIG(status)) + ", " +
           strsignal(WTERMSIG(status)) + "); nothing was written";
  return what + ": Halide's code generator failed (exit " + std::to_string(WEXITSTATUS(status)) +
         ", see the message above; a full disk or a file size limit?); nothing was written";
}

}  // namespace

// Runs each of `jobs` (Halide's code generation and file writing) in a
// child process on a thread with a large stack, at most `parallel` at a
// time: LLVM aborts the process on a failed write (report_fatal_error), and
// Halide recurses over deep pipelines, so neither may take the tool down
// with its temporary folder. A child's exception message, exit or signal
// becomes an Error here (the first one, after every child has ended).
void run_isolated(const std::vector<std::function<void()>>& jobs, const std::string& what, size_t parallel) {
  std::vector<Isolated> running;
  std::string first_error;
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    if (next < jobs.size() && running.size() < std::max<size_t>(parallel, 1) && first_error.empty()) {
      try {
        running.push_back(start_isolated(jobs[next++], what));
      } catch (const Error& e) {
        first_error = e.what();
      }
      continue;
    }
    if (running.empty()) break;
    const std::string e = finish_isolated(running.front(), what);
    running.erase(running.begin());
    if (first_error.empty()) first_error = e;
  }
  if (!first_error.empty()) throw Error(first_error);
}

void run_isolated(const std::function<void()>& fn, const std::string& what) { run_isolated({fn}, what, 1); }

namespace {

// The members of a GNU or BSD ar archive (Halide's static libraries), each
// written to `dir` as <prefix><k>.o; returns their paths.
std::vector<std::string> extract_archive(const fs::path& archive, const fs::path& dir, const std::string& prefix) {
  std::ifstream in(archive, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.compare(0, 8, "!<arch>\n") != 0) throw Error(archive.string() + ": not an ar archive (internal error)");
  std::vector<std::string> out;
  size_t pos = 8;
  while (pos + 60 <= data.size()) {
    const std::string header = data.substr(pos, 60);
    std::string member = header.substr(0, 16);
    member.erase(member.find_last_not_of(' ') + 1);
    const size_t size = std::stoull(header.substr(48, 10));
    pos += 60;
    if (pos + size > data.size()) throw Error(archive.string() + ": truncated archive (internal error)");
    size_t body = pos, body_size = size;
    if (member.rfind("#1/", 0) == 0) {  // BSD: the name leads the body
      const size_t len = std::stoull(member.substr(3));
      body += len;
      body_size -= len;
      member = "bsd";
    }
    // The symbol tables and the long-name table are not objects.
    const bool object = member != "/" && member != "//" && member != "/SYM64/" && member.rfind("__.SYMDEF", 0) != 0;
    if (object) {
      const fs::path to = dir / (prefix + std::to_string(out.size()) + ".o");
      std::ofstream f(to, std::ios::binary | std::ios::trunc);
      f.write(data.data() + body, static_cast<std::streamsize>(body_size));
      if (!f) throw Error("cannot write " + to.string());
      out.push_back(to.string());
    }
    pos += size + (size & 1);
  }
  return out;
}

}  // namespace

// Compiles every part (model_parts.h) in parallel into <tmp>/<impl>_p<k>.a
// (only the first with the Halide runtime), merges them into <tmp>/<impl>.a
// and joins their headers into <tmp>/<impl>.h.
void compile_parts(const ModelParts& parts, const std::vector<Halide::Target>& targets,
                   const std::string& model_path, const fs::path& tmp, const std::string& impl) {
  std::vector<std::function<void()>> jobs;
  for (size_t j = 0; j < parts.parts.size(); ++j) {
    jobs.push_back([&, j] {
      const ModelPart& p = parts.parts[j];
      const std::string fn = impl + "_p" + std::to_string(j);
      const std::string prefix = (tmp / fn).string();
      std::vector<Halide::Target> ts = targets;
      if (j > 0)
        for (Halide::Target& t : ts) t = t.with_feature(Halide::Target::NoRuntime);
      try {
        if (ts.size() == 1) {
          Halide::Pipeline pipeline = p.lowered.pipeline;
          pipeline.compile_to_static_library(prefix, p.lowered.arguments, fn, ts.front());
        } else {
          const std::map<Halide::OutputFileType, std::string> outputs = {
              {Halide::OutputFileType::static_library, prefix + ".a"},
              {Halide::OutputFileType::c_header, prefix + ".h"}};
          Halide::compile_multitarget(fn, outputs, ts, {}, [&](const std::string& fn_name, const Halide::Target& t) {
            LowerOptions o = p.options;
            o.target = t;
            LoweredModel v = lower_model(*p.model, model_path, o);
            return v.pipeline.compile_to_module(v.arguments, fn_name, t);
          });
        }
      } catch (const Halide::Error& e) {
        throw Error("Halide failed to compile model part " + std::to_string(j) + ": " + e.what());
      }
    });
  }
  run_isolated(jobs, model_path, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> objects;
  std::ofstream h(tmp / (impl + ".h"));
  h << "// " << impl << ".h: Halide's headers of the model's " << parts.parts.size() << " parts, one after the other.\n";
  for (size_t j = 0; j < parts.parts.size(); ++j) {
    const std::string fn = impl + "_p" + std::to_string(j);
    const std::vector<std::string> o = extract_archive(tmp / (fn + ".a"), tmp, fn + "_member");
    objects.insert(objects.end(), o.begin(), o.end());
    std::ifstream part(tmp / (fn + ".h"));
    h << part.rdbuf() << "\n";
  }
  if (!h.flush()) throw Error("cannot write " + (tmp / (impl + ".h")).string());
  run_isolated([&] { Halide::create_static_library(objects, targets.front(), (tmp / (impl + ".a")).string()); },
               model_path);
}

}  // namespace batchconv::compiler

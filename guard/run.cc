#include "guard/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "guard/policy.h"

namespace slurm_rca::guard {
namespace {

using Clock = std::chrono::steady_clock;

// How long a child killed at the timeout may take to die and release its pipes before Run()
// stops waiting for it.
constexpr std::chrono::milliseconds kKillGrace{2000};
constexpr std::size_t kReadChunk = 64 * 1024;

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string Errno(int err) { return std::strerror(err); }

std::string FormatDuration(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + " s";
  return std::to_string(d.count()) + " ms";
}

bool OthersMayWrite(mode_t mode) { return (mode & (S_IWGRP | S_IWOTH)) != 0; }

std::string Realpath(const std::string& path, int* err) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    *err = errno;
    return "";
  }
  std::string out(resolved);
  std::free(resolved);
  return out;
}

std::string Dirname(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// libuv execs with execvp(), and glibc's execvp runs /bin/sh on a file the kernel refuses with
// ENOEXEC, even for an absolute path. Accepting only ELF binaries and #! scripts keeps that
// fallback out of reach. An unreadable file (mode 0711) cannot be inspected; the kernel still
// execs only formats it knows, and a shell could not read such a file either.
bool HasExecutableMagic(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return errno == EACCES;
  unsigned char head[4] = {0, 0, 0, 0};
  ssize_t n;
  do {
    n = ::read(fd, head, sizeof head);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  constexpr unsigned char kElf[4] = {0x7f, 'E', 'L', 'F'};
  if (n >= 4 && std::memcmp(head, kElf, sizeof kElf) == 0) return true;
  return n >= 2 && head[0] == '#' && head[1] == '!';
}

// Checks the first entry named `program` found in `dir`; `candidate` is dir/program and exists.
Resolution Inspect(const std::string& program, const std::string& dir,
                   const std::string& candidate) {
  Resolution r{.program = program, .path = "", .problem = Outcome::kUntrusted, .error = ""};
  int err = 0;
  std::string resolved = Realpath(candidate, &err);
  if (resolved.empty()) {
    if (err == ENOENT || err == ENOTDIR || err == ELOOP) {
      r.problem = Outcome::kNotInstalled;
      r.error = candidate + " is a symbolic link that leads nowhere (" + Errno(err) + ")";
    } else {
      r.error = "cannot resolve " + candidate + ": " + Errno(err);
    }
    return r;
  }
  const std::string shown =
      resolved == candidate ? candidate : candidate + " (which resolves to " + resolved + ")";

  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0) {
    r.error = "cannot inspect " + shown + ": " + Errno(errno);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.error = shown + " is not a regular file";
    return r;
  }
  if ((st.st_mode & 0111) == 0 || ::access(resolved.c_str(), X_OK) != 0) {
    r.error = shown + " is not executable (mode " + Octal(st.st_mode) + ")";
    return r;
  }
  if (OthersMayWrite(st.st_mode)) {
    r.error = shown + " is group- or other-writable (mode " + Octal(st.st_mode) +
              "), so anyone could replace what runs";
    return r;
  }
  // The directory holding the file, and the trusted directory holding the name: whoever can
  // write either can swap the program.
  for (const std::string& d : {Dirname(resolved), dir}) {
    struct stat ds;
    if (::stat(d.c_str(), &ds) != 0) {
      r.error = "cannot inspect directory " + d + " of " + shown + ": " + Errno(errno);
      return r;
    }
    if (OthersMayWrite(ds.st_mode)) {
      r.error = shown + " is in directory " + d + ", which is group- or other-writable (mode " +
                Octal(ds.st_mode) + "), so anyone could replace what runs";
      return r;
    }
  }
  if (!HasExecutableMagic(resolved)) {
    r.error = shown + " is neither an ELF binary nor a #! script";
    return r;
  }
  r.path = std::move(resolved);
  r.problem = Outcome::kExited;
  return r;
}

// The first trusted directory holding an entry named `program` decides: a program found but
// unusable there is refused rather than silently taken from a later directory.
Resolution Resolve(const std::string& program, const std::vector<std::string>& dirs) {
  std::vector<std::string> searched;
  std::vector<std::string> ignored;
  std::optional<Resolution> found;
  for (const std::string& dir : dirs) {
    if (dir.empty() || dir.front() != '/') {
      ignored.push_back("\"" + dir + "\"");
      continue;
    }
    searched.push_back(dir);
    if (found) continue;  // keep collecting ignored directories for the error
    std::string candidate = dir.back() == '/' ? dir + program : dir + "/" + program;
    struct stat lst;
    if (::lstat(candidate.c_str(), &lst) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;
      found = Resolution{.program = program,
                         .path = "",
                         .problem = Outcome::kUntrusted,
                         .error = "cannot inspect " + candidate + ": " + Errno(errno)};
      continue;
    }
    found = Inspect(program, dir, candidate);
  }
  Resolution r;
  if (found) {
    r = std::move(*found);
  } else {
    r.program = program;
    r.problem = Outcome::kNotInstalled;
    r.error = program + " is not installed in the trusted directories " +
              (searched.empty() ? std::string("(none)") : Join(searched, ":"));
  }
  if (r.problem != Outcome::kExited && !ignored.empty()) {
    r.error += " (ignored relative trusted directories " + Join(ignored, ", ") +
               ": trusted directories must be absolute)";
  }
  return r;
}

struct Session;

// One output pipe of the child, read with a fixed buffer and kept up to the cap.
struct Stream {
  uv_pipe_t pipe;
  Session* session = nullptr;
  std::string* data = nullptr;
  std::uint64_t* bytes = nullptr;
  bool* truncated = nullptr;
  bool reading = false;  // until EOF, a read error, or we give up on it
  char buffer[kReadChunk];

  void Stop() {
    if (!reading) return;
    reading = false;
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&pipe));
    uv_close(reinterpret_cast<uv_handle_t*>(&pipe), nullptr);
  }
};

// Everything one Run() owns; allocated per call, so concurrent runs share nothing.
struct Session {
  uv_loop_t loop;
  uv_process_t process;
  uv_timer_t timer;
  Stream out;
  Stream err;
  std::size_t cap = 0;
  Clock::time_point deadline;
  bool in_grace = false;  // the deadline passed and the group was killed
  pid_t pid = 0;
  bool running = false;  // spawned and not yet reaped
  std::int64_t exit_status = 0;
  int term_signal = 0;
  bool killed = false;        // killed at the timeout while it ran
  bool output_stuck = false;  // exited, but its output was still open at the timeout
  bool abandoned = false;     // outlived SIGKILL by kKillGrace; reaped by a background thread

  // The loop ends once nothing is active: the child is reaped and both pipes are closed.
  void MaybeFinish() {
    if (!running && !out.reading && !err.reading) uv_timer_stop(&timer);
  }

  // libuv learns of the child's exit from SIGCHLD. At the deadline the kernel is asked directly
  // (waitid with WNOWAIT reaps nothing): a child that already exited is reaped here and reported
  // as exited, not killed. Seen once in 27,000 runs under ThreadSanitizer, whose deferred signal
  // delivery let the loop sleep to the deadline past an exit; a caller thread that blocks SIGCHLD
  // (with no other thread to take it) would lose every exit the same way.
  bool ReapIfExitWasMissed();

  void Abandon() {
    running = false;
    abandoned = true;
    uv_close(reinterpret_cast<uv_handle_t*>(&process), nullptr);
    pid_t p = pid;
    try {
      std::thread([p] {
        int status;
        while (::waitpid(p, &status, 0) < 0 && errno == EINTR) {
        }
      }).detach();
    } catch (...) {
      // No thread: the child stays a zombie until this process exits.
    }
  }
};

void OnAlloc(uv_handle_t* handle, std::size_t /*suggested*/, uv_buf_t* buf) {
  auto* s = static_cast<Stream*>(handle->data);
  // libuv fills the buffer and hands it to OnRead before asking again, so one buffer per stream
  // suffices; memory stays bounded whatever the child writes.
  *buf = uv_buf_init(s->buffer, sizeof s->buffer);
}

void OnRead(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
  auto* s = static_cast<Stream*>(stream->data);
  if (n > 0) {
    auto len = static_cast<std::size_t>(n);
    *s->bytes += len;
    std::size_t room = s->session->cap - std::min(s->session->cap, s->data->size());
    std::size_t keep = std::min(room, len);
    s->data->append(buf->base, keep);
    if (keep < len) *s->truncated = true;
    return;
  }
  if (n == 0) return;  // nothing this time
  s->Stop();           // EOF or a read error: either way this stream is done
  s->session->MaybeFinish();
}

void Exited(Session* s, std::int64_t exit_status, int term_signal) {
  s->running = false;
  s->exit_status = exit_status;
  s->term_signal = term_signal;
  // Descendants left in the group must neither keep the pipes open nor outlive the run. The
  // leader was reaped just now; its id stays reserved while any member of its group lives, and
  // with none left the kill finds nothing (the id is not reused within microseconds).
  ::kill(-s->pid, SIGKILL);
  s->MaybeFinish();
}

void OnExit(uv_process_t* process, std::int64_t exit_status, int term_signal) {
  Exited(static_cast<Session*>(process->data), exit_status, term_signal);
}

bool Session::ReapIfExitWasMissed() {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid) {
    return false;  // still running (or not ours to ask about): the timeout stands
  }
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got != pid) return false;
  // Closing the handle takes it off libuv's list, so a late SIGCHLD finds nothing to reap.
  uv_close(reinterpret_cast<uv_handle_t*>(&process), nullptr);
  Exited(this, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return true;
}

void OnTimer(uv_timer_t* timer) {
  auto* s = static_cast<Session*>(timer->data);
  if (!s->in_grace) {
    // The loop's clock is coarse and cached; the deadline is kept on the steady clock.
    auto left = s->deadline - Clock::now();
    if (left > Clock::duration::zero()) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
      uv_timer_start(timer, OnTimer, static_cast<std::uint64_t>(ms), 0);
      return;
    }
    if (s->running && s->ReapIfExitWasMissed()) return;
    if (s->running) {
      ::kill(-s->pid, SIGKILL);
      s->killed = true;
      s->in_grace = true;
      uv_timer_start(timer, OnTimer, static_cast<std::uint64_t>(kKillGrace.count()), 0);
      return;
    }
    // The group was killed when the leader exited, so whatever still holds a pipe left the
    // group (setsid). Stop waiting for it.
    s->output_stuck = true;
    s->out.Stop();
    s->err.Stop();
    return;
  }
  s->out.Stop();
  s->err.Stop();
  if (s->running) s->Abandon();  // SIGKILL did not take (uninterruptible sleep)
}

void CloseIfOpen(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, nullptr);
}

void CloseEach(uv_handle_t* handle, void* /*arg*/) { CloseIfOpen(handle); }

std::string TimedOutError(std::chrono::milliseconds timeout) {
  return "timed out after " + FormatDuration(timeout) +
         "; a hang is itself evidence (no output is not 'no rows')";
}

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kExited:
      return "exited";
    case Outcome::kSignaled:
      return "signaled";
    case Outcome::kTimedOut:
      return "timed_out";
    case Outcome::kNotInstalled:
      return "not_installed";
    case Outcome::kUntrusted:
      return "untrusted";
    case Outcome::kSpawnFailed:
      return "spawn_failed";
  }
  return "unknown";
}

Executor::Executor(ExecutorOptions options) : options_(std::move(options)) {
  for (const std::string& name : AllowedProgramNames()) {
    resolutions_.push_back(Resolve(name, options_.trusted_dirs));
  }
  env_ = {"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "TZ=UTC"};
  if (options_.slurm_conf) env_.push_back("SLURM_CONF=" + *options_.slurm_conf);
}

RunResult Executor::Run(const Approved& approved, std::chrono::milliseconds timeout) const {
  RunResult result;
  result.argv = approved.exec_argv();
  const std::string& program = approved.program();

  auto res = std::find_if(resolutions_.begin(), resolutions_.end(),
                          [&](const Resolution& r) { return r.program == program; });
  if (res == resolutions_.end()) {
    result.outcome = Outcome::kNotInstalled;
    result.error = program + " is not among the programs resolved when the executor was built";
    return result;
  }
  if (res->problem != Outcome::kExited) {
    result.outcome = res->problem;
    result.error = res->error;
    return result;
  }
  result.binary = res->path;
  if (result.argv.empty()) {
    result.outcome = Outcome::kSpawnFailed;
    result.error = "empty argv";
    return result;
  }

  const Clock::time_point start = Clock::now();
  auto finish = [&] {
    result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return std::move(result);
  };

  auto s = std::make_unique<Session>();
  s->cap = options_.max_output_bytes;
  s->deadline = start + timeout;
  if (int rc = uv_loop_init(&s->loop); rc != 0) {
    result.outcome = Outcome::kSpawnFailed;
    result.error = std::string("cannot create an event loop: ") + uv_strerror(rc);
    return finish();
  }
  uv_pipe_init(&s->loop, &s->out.pipe, 0);
  uv_pipe_init(&s->loop, &s->err.pipe, 0);
  uv_timer_init(&s->loop, &s->timer);
  s->timer.data = s.get();
  s->process.data = s.get();
  auto bind = [&](Stream& stream, std::string& data, std::uint64_t& bytes, bool& truncated) {
    stream.pipe.data = &stream;
    stream.session = s.get();
    stream.data = &data;
    stream.bytes = &bytes;
    stream.truncated = &truncated;
  };
  bind(s->out, result.stdout_data, result.stdout_bytes, result.stdout_truncated);
  bind(s->err, result.stderr_data, result.stderr_bytes, result.stderr_truncated);

  std::vector<char*> args;
  for (const std::string& a : result.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (const std::string& e : env_) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);

  bool spawned = false;
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) {
    result.outcome = Outcome::kSpawnFailed;
    result.error = "cannot open /dev/null for the child's stdin: " + Errno(errno);
  } else {
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_INHERIT_FD;
    stdio[0].data.fd = devnull;
    stdio[1].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[1].data.stream = reinterpret_cast<uv_stream_t*>(&s->out.pipe);
    stdio[2].flags = static_cast<uv_stdio_flags>(UV_CREATE_PIPE | UV_WRITABLE_PIPE);
    stdio[2].data.stream = reinterpret_cast<uv_stream_t*>(&s->err.pipe);

    uv_process_options_t opts{};
    opts.exit_cb = OnExit;
    opts.file = result.binary.c_str();  // absolute, so execvp searches nothing
    opts.args = args.data();
    opts.env = env.data();
    opts.cwd = "/";
    opts.flags = UV_PROCESS_DETACHED;  // setsid(): the child leads its own session and group
    opts.stdio_count = 3;
    opts.stdio = stdio;

    int rc = uv_spawn(&s->loop, &s->process, &opts);
    ::close(devnull);
    if (rc != 0) {
      result.outcome = Outcome::kSpawnFailed;
      result.error =
          "cannot start " + result.binary + ": " + uv_strerror(rc) + " (" + uv_err_name(rc) + ")";
    } else {
      spawned = true;
      s->pid = s->process.pid;
      s->running = true;
      for (Stream* stream : {&s->out, &s->err}) {
        stream->reading =
            uv_read_start(reinterpret_cast<uv_stream_t*>(&stream->pipe), OnAlloc, OnRead) == 0;
      }
      uv_update_time(&s->loop);
      auto first = std::chrono::ceil<std::chrono::milliseconds>(s->deadline - Clock::now());
      uv_timer_start(&s->timer, OnTimer,
                     static_cast<std::uint64_t>(std::max<std::int64_t>(first.count(), 0)), 0);
      uv_run(&s->loop, UV_RUN_DEFAULT);
    }
  }

  // uv_spawn initialises the process handle even when it fails, so every handle is closed.
  CloseIfOpen(reinterpret_cast<uv_handle_t*>(&s->out.pipe));
  CloseIfOpen(reinterpret_cast<uv_handle_t*>(&s->err.pipe));
  CloseIfOpen(reinterpret_cast<uv_handle_t*>(&s->timer));
  CloseIfOpen(reinterpret_cast<uv_handle_t*>(&s->process));
  uv_run(&s->loop, UV_RUN_DEFAULT);
  if (uv_loop_close(&s->loop) == UV_EBUSY) {
    uv_walk(&s->loop, CloseEach, nullptr);
    uv_run(&s->loop, UV_RUN_DEFAULT);
    uv_loop_close(&s->loop);
  }

  if (!spawned) return finish();
  if (s->killed) {
    result.outcome = Outcome::kTimedOut;
    result.error = TimedOutError(timeout);
    if (s->abandoned) {
      result.error += "; the process survived SIGKILL for " + FormatDuration(kKillGrace) +
                      " (uninterruptible sleep?) and is reaped in the background";
    }
  } else if (s->output_stuck) {
    result.outcome = Outcome::kTimedOut;
    result.error = TimedOutError(timeout) + "; " + program + " itself exited (" +
                   (s->term_signal != 0 ? "signal " + std::to_string(s->term_signal)
                                        : "status " + std::to_string(s->exit_status)) +
                   ") but a descendant that left its process group kept its output open, so the "
                   "output may be incomplete";
  } else if (s->term_signal != 0) {
    result.outcome = Outcome::kSignaled;
    result.term_signal = s->term_signal;
  } else {
    result.outcome = Outcome::kExited;
    result.exit_code = static_cast<int>(s->exit_status);
  }
  return finish();
}

}  // namespace slurm_rca::guard

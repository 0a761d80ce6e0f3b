#include "scenarios/live/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace slurm_rca::live {
namespace {

using Clock = std::chrono::steady_clock;

// Fields of /proc/PID/stat after the command name (which may hold spaces and parentheses).
std::optional<std::pair<char, std::uint64_t>> ReadStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  char state = 0;
  rest >> state;
  std::string field;
  // state is field 3; starttime is field 22.
  for (int f = 4; f < 22 && rest >> field; ++f) {
  }
  std::uint64_t start = 0;
  if (!(rest >> start)) return std::nullopt;
  return std::make_pair(state, start);
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// posix_spawn with the child's signal mask cleared and every signal at its default, plus
// `flags` (POSIX_SPAWN_SETSID, POSIX_SPAWN_SETPGROUP). Returns 0 or the errno.
int Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
          const posix_spawn_file_actions_t* actions, short flags, pid_t* pid) {
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  if (flags & POSIX_SPAWN_SETPGROUP) posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args = CStrings(argv);
  std::vector<char*> envp = CStrings(env);
  int rc = posix_spawn(pid, argv[0].c_str(), actions, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  return rc;
}

void ReapIfChild(pid_t pid) {
  int status;
  ::waitpid(pid, &status, WNOHANG);
}

}  // namespace

PipedChild SpawnPiped(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log_path) {
  PipedChild out;
  int in[2], outp[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  if (::pipe2(outp, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    ::close(in[0]);
    ::close(in[1]);
    return out;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, outp[1], 1);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
  }
  pid_t pid = 0;
  int rc = Spawn(argv, env, &actions, POSIX_SPAWN_SETPGROUP, &pid);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(outp[1]);
  if (rc != 0) {
    out.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    ::close(in[1]);
    ::close(outp[0]);
    return out;
  }
  out.id = IdentifyProcess(pid);
  if (!out.id) out.id = ProcessId{pid, 0};
  out.to_child = in[1];
  out.from_child = outp[0];
  return out;
}

std::string ProcessId::ToString() const {
  return std::to_string(pid) + "@" + std::to_string(start_time);
}

std::optional<ProcessId> ProcessId::Parse(const std::string& s) {
  size_t at = s.find('@');
  if (at == std::string::npos) return std::nullopt;
  try {
    ProcessId id;
    id.pid = static_cast<pid_t>(std::stol(s.substr(0, at)));
    id.start_time = std::stoull(s.substr(at + 1));
    if (id.pid <= 1) return std::nullopt;
    return id;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<ProcessId> IdentifyProcess(pid_t pid) {
  auto stat = ReadStat(pid);
  if (!stat) return std::nullopt;
  return ProcessId{pid, stat->second};
}

std::optional<char> ProcessState(const ProcessId& id) {
  auto stat = ReadStat(id.pid);
  if (!stat || stat->second != id.start_time) return std::nullopt;
  return stat->first;
}

bool IsAlive(const ProcessId& id) {
  ReapIfChild(id.pid);
  auto state = ProcessState(id);
  if (!state) return false;
  if (*state != 'Z' && *state != 'X') return true;
  // A zombie leader is not yet a dead process: after SIGKILL the leader can finish first while
  // its other threads still tear down, holding the file table and with it every listening
  // socket (slurmctld's port accepted a connection then, and squeue failed with "Transport
  // endpoint is not connected" instead of the refusal). Dead means no thread is left running.
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(id.pid) + "/task", ec)) {
    pid_t tid = 0;
    try {
      tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
    } catch (...) {
      continue;
    }
    std::ifstream in("/proc/" + std::to_string(id.pid) + "/task/" + std::to_string(tid) + "/stat");
    std::string line;
    if (!in || !std::getline(in, line)) continue;
    size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) continue;
    char s = line[close + 2];
    if (s != 'Z' && s != 'X') return true;
  }
  return false;
}

bool SignalProcess(const ProcessId& id, int sig, bool group) {
  if (!ProcessState(id)) return false;
  return ::kill(group ? -id.pid : id.pid, sig) == 0;
}

void ReapChildren() {
  int status;
  while (::waitpid(-1, &status, WNOHANG) > 0) {
  }
}

SpawnResult SpawnDaemon(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        const std::string& log_path) {
  SpawnResult result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = Spawn(argv, env, &actions, POSIX_SPAWN_SETSID, &pid);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  result.id = IdentifyProcess(pid);
  if (!result.id) {
    ReapIfChild(pid);
    result.error = argv[0] + " exited at once (see " + log_path + ")";
  }
  return result;
}

bool StopProcess(const ProcessId& id, std::chrono::milliseconds grace) {
  return StopProcesses({id}, grace).empty();
}

std::vector<ProcessId> StopProcesses(const std::vector<ProcessId>& ids,
                                     std::chrono::milliseconds grace) {
  std::vector<ProcessId> alive;
  for (const ProcessId& id : ids) {
    if (IsAlive(id)) alive.push_back(id);
  }
  auto drop_gone = [&] {
    std::erase_if(alive, [](const ProcessId& id) { return !IsAlive(id); });
  };
  for (const ProcessId& id : alive) {
    SignalProcess(id, SIGCONT);
    SignalProcess(id, SIGTERM);
  }
  auto deadline = Clock::now() + grace;
  while (!alive.empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    drop_gone();
  }
  for (const ProcessId& id : alive) SignalProcess(id, SIGKILL);
  for (int i = 0; i < 100 && !alive.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    drop_gone();
  }
  return alive;
}

std::string ToolResult::Summary() const {
  if (!error.empty()) return error;
  std::string first = err.substr(0, err.find('\n'));
  if (first.empty()) first = out.substr(0, out.find('\n'));
  if (timed_out) return "timed out after " + std::to_string(seconds).substr(0, 4) + " s";
  return "exit " + std::to_string(exit_code) + (first.empty() ? "" : ": " + first);
}

ToolResult RunTool(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   std::chrono::milliseconds timeout, const std::string& input,
                   const std::string& cwd) {
  ToolResult r;
  auto start = Clock::now();
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = 0;
  int rc = Spawn(argv, env, &actions, POSIX_SPAWN_SETPGROUP, &pid);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    r.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  if (!input.empty()) {
    ssize_t ignored = ::write(in_pipe[1], input.data(), input.size());
    (void)ignored;
  }
  ::close(in_pipe[1]);
  constexpr size_t kCap = 16 << 20;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  auto deadline = start + timeout;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 200)));
    if (n < 0 && errno != EINTR) break;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t got = ::read(fds[k].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[k]->size() < kCap) sinks[k]->append(buf, std::min<size_t>(got, kCap - sinks[k]->size()));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  rusage usage{};
  if (r.timed_out) {
    ::wait4(pid, &status, 0, &usage);
  } else {
    // Output closed; the tool may still be exiting. Wait within the deadline.
    while (true) {
      pid_t w = ::wait4(pid, &status, WNOHANG, &usage);
      if (w == pid) break;
      if (Clock::now() >= deadline) {
        r.timed_out = true;
        ::kill(-pid, SIGKILL);
        ::wait4(pid, &status, 0, &usage);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  return r;
}

std::string FindProgram(const std::string& name, const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    std::string p = d + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

}  // namespace slurm_rca::live

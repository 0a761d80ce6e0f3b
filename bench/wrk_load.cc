#include "bench/wrk_load.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

namespace slurm_rca::bench {

namespace {

// "key=value key=value" after the CHECK word.
std::map<std::string, double> Fields(const std::string& line) {
  std::map<std::string, double> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = std::atof(word.c_str() + eq + 1);
  }
  return out;
}

double Seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

}  // namespace

base::Result<WrkRun> RunWrk(const WrkOptions& o) {
  char duration[32], timeout[32];
  // wrk reads whole seconds only.
  std::snprintf(duration, sizeof duration, "%lds", std::max(1L, std::lround(o.seconds)));
  std::snprintf(timeout, sizeof timeout, "%lds", std::max(1L, std::lround(o.timeout_seconds)));
  const std::string n = std::to_string(o.connections);
  const std::vector<std::string> argv = {o.wrk,
                                         "-t" + n,
                                         "-c" + n,
                                         std::string("-d") + duration,
                                         "--timeout",
                                         timeout,
                                         "-s",
                                         o.script,
                                         "http://127.0.0.1:" + std::to_string(o.port) + "/mcp",
                                         "--",
                                         o.arguments,
                                         std::to_string(o.rows),
                                         o.row_key,
                                         o.expected_file};
  WrkRun run;
  for (const std::string& a : argv) run.command += (run.command.empty() ? "" : " ") + a;

  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    return base::Status::Error("pipe: " + std::string(strerror(errno)));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(out[1], 1);
    dup2(out[1], 2);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return base::Status::Error("fork: " + std::string(strerror(errno)));
  }
  // Read wrk's output until it closes the pipe, killing it if it runs far past its time.
  std::string text;
  const auto kill_at = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<long>(1000 * o.seconds) + 30000);
  char buf[4096];
  for (bool killed = false;;) {
    pollfd p = {out[0], POLLIN, 0};
    if (poll(&p, 1, 500) > 0) {
      const ssize_t got = read(out[0], buf, sizeof buf);
      if (got <= 0) break;
      text.append(buf, static_cast<size_t>(got));
    } else if (!killed && std::chrono::steady_clock::now() > kill_at) {
      kill(pid, SIGKILL);
      killed = true;
    }
  }
  close(out[0]);
  int status = 0;
  rusage usage = {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  run.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);

  const size_t check = text.find("CHECK ");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || check == std::string::npos) {
    std::string tail = text.size() > 300 ? "..." + text.substr(text.size() - 300) : text;
    for (char& c : tail) c = c == '\n' ? ' ' : c;
    return base::Status::Error(
        "wrk " +
        (WIFEXITED(status) ? "exited " + std::to_string(WEXITSTATUS(status))
                           : "killed by signal " + std::to_string(WTERMSIG(status))) +
        (check == std::string::npos ? " without a CHECK line" : "") + ": " + tail);
  }
  std::map<std::string, double> f = Fields(text.substr(check, text.find('\n', check) - check));
  run.ok = static_cast<long>(f["ok"]);
  run.identical = static_cast<long>(f["identical"]);
  run.bad = static_cast<long>(f["bad"]);
  run.init_bad = static_cast<long>(f["init_bad"]);
  run.sessions = static_cast<long>(f["sessions"]);
  run.requests = static_cast<long>(f["requests"]);
  run.timeouts = static_cast<long>(f["timeout"]);
  run.socket_errors = static_cast<long>(f["connect"] + f["read"] + f["write"] + f["timeout"]);
  run.seconds = f["duration_us"] * 1e-6;
  run.p50_us = f["p50_us"];
  run.p99_us = f["p99_us"];
  run.max_us = f["max_us"];
  const size_t ids = text.find("SESSIONS ");
  if (ids != std::string::npos) {
    std::istringstream in(text.substr(ids + 9, text.find('\n', ids) - ids - 9));
    for (std::string id; in >> id;) run.session_ids.push_back(id);
  }
  const size_t first = text.find("FIRST_BAD ");
  if (first != std::string::npos) {
    run.first_bad = text.substr(first + 10, text.find('\n', first) - first - 10);
  }
  return run;
}

}  // namespace slurm_rca::bench

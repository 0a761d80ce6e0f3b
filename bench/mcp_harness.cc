#include "bench/mcp_harness.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <latch>
#include <mutex>
#include <sstream>
#include <thread>

namespace slurm_rca::bench {

namespace fs = std::filesystem;
using mcp::Client;
using mcp::ClientOptions;
using mcp::HttpClientTransport;
using mcp::Json;

const Json& WorkloadArguments() {
  static const Json* const kArguments = new Json{{"topic", "nodes"}};
  return *kArguments;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

namespace {

// PIDs of the servers now running, for the signal handler (async-signal-safe access only).
std::array<std::atomic<pid_t>, 8> g_children{};

void RegisterChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}

void UnregisterChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

extern "C" void OnFatalSignal(int sig) {
  for (auto& slot : g_children) {
    pid_t pid = slot.load();
    if (pid > 0) kill(pid, SIGTERM);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void InstallChildCleanup() {
  struct sigaction sa = {};
  sa.sa_handler = OnFatalSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

// ---------------------------------------------------------------- child processes

base::Result<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::string& name, const std::vector<std::string>& argv, bool stdio) {
  auto p = std::unique_ptr<ServerProcess>(new ServerProcess(name, stdio));
  char path[] = "/tmp/mcp_harness_stderr_XXXXXX";
  const int err_fd = mkostemp(path, O_CLOEXEC);
  if (err_fd < 0) return base::Status::Error("mkostemp: " + std::string(std::strerror(errno)));
  unlink(path);
  p->stderr_fd_ = err_fd;  // closed by the destructor
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    std::string e = "pipe: " + std::string(std::strerror(errno));
    for (int fd : {in[0], in[1], out[0], out[1]}) {
      if (fd >= 0) close(fd);
    }
    return base::Status::Error(e);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The server dies with this process.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err_fd, 2);
    execv(args[0], args.data());
    const char msg[] = "mcp_harness: exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  const int fork_errno = errno;
  close(in[0]);
  close(out[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    return base::Status::Error("fork: " + std::string(std::strerror(fork_errno)));
  }
  p->pid_ = pid;
  p->to_child_ = in[1];
  p->from_child_ = out[0];
  RegisterChild(pid);
  return p;
}

ServerProcess::~ServerProcess() {
  Stop();
  if (stderr_fd_ >= 0) close(stderr_fd_);
}

base::Result<int> ServerProcess::WaitForPort(std::string* banner) {
  const auto deadline = Clock::now() + kStartTimeout;
  const std::string marker = "serving MCP on http";  // http:// or https://
  while (Clock::now() < deadline) {
    const std::string text = StderrText();
    const size_t at = text.find(marker);
    const size_t eol = at == std::string::npos ? at : text.find('\n', at);
    if (eol != std::string::npos) {
      const std::string line = text.substr(at, eol - at);
      const size_t slash = line.find("/mcp", marker.size());
      const size_t colon = slash == std::string::npos ? slash : line.rfind(':', slash);
      const int port = colon == std::string::npos ? 0 : std::atoi(line.c_str() + colon + 1);
      if (port <= 0 || port > 65535) {
        return base::Status::Error(name_ + ": no port in '" + line + "'");
      }
      const size_t paren = line.find(" (", slash);
      if (paren != std::string::npos && line.back() == ')') {
        *banner = line.substr(paren + 2, line.size() - paren - 3);
      }
      return port;
    }
    if (Reap(false)) {
      return base::Status::Error(name_ + " exited before listening: " + StderrTail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return base::Status::Error(name_ + " did not report its port within " +
                             std::to_string(kStartTimeout.count()) + " s: " + StderrTail());
}

std::string ServerProcess::StderrTail() const {
  std::string text = StderrText();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.size() > 400) text = "..." + text.substr(text.size() - 400);
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.empty() ? "(nothing on stderr)" : text;
}

std::string ServerProcess::Stop() {
  if (pid_ <= 0) return stopped_;
  if (to_child_ >= 0) close(to_child_);
  to_child_ = -1;
  std::string how = "on EOF";
  if (!reaped_ && !WaitReaped(std::chrono::milliseconds(stdio_ ? 2000 : 0))) {
    kill(pid_, SIGTERM);
    how = "on SIGTERM";
    if (!WaitReaped(std::chrono::milliseconds(3000))) {
      kill(pid_, SIGKILL);
      how = "on SIGKILL";
      Reap(true);
    }
  } else if (reaped_ && how == "on EOF" && !stdio_) {
    how = "by itself";
  }
  if (from_child_ >= 0) close(from_child_);
  from_child_ = -1;
  UnregisterChild(pid_);
  stopped_ = "PID " + std::to_string(pid_) + " " +
             (WIFEXITED(status_) ? "exited " + std::to_string(WEXITSTATUS(status_))
                                 : "killed by signal " + std::to_string(WTERMSIG(status_))) +
             " " + how;
  pid_ = -1;
  return stopped_;
}

std::string ServerProcess::StderrText() const {
  std::string text;
  char buf[4096];
  for (off_t at = 0;; at += static_cast<off_t>(sizeof buf)) {
    const ssize_t n = pread(stderr_fd_, buf, sizeof buf, at);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  return text;
}

bool ServerProcess::Reap(bool block) {
  if (reaped_) return true;
  pid_t r = waitpid(pid_, &status_, block ? 0 : WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
  return reaped_;
}

bool ServerProcess::WaitReaped(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!Reap(false)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// ---------------------------------------------------------------- memory and CPU

Memory ReadMemory(pid_t pid) {
  Memory m;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    double* field = line.rfind("VmRSS:", 0) == 0   ? &m.rss_mib
                    : line.rfind("VmHWM:", 0) == 0 ? &m.hwm_mib
                                                   : nullptr;
    if (field) *field = std::atof(line.c_str() + 6) / 1024.0;  // "VmRSS:\t  1234 kB"
  }
  return m;
}

double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(f, text)) return NAN;
  // The command name (field 2) may hold spaces: count fields from the last ')'.
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return NAN;
  std::istringstream rest(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// ---------------------------------------------------------------- measurements

double Latency::Percentile(double p) const {
  if (us.empty()) return NAN;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(us.size())));
  return us[std::clamp<size_t>(rank, 1, us.size()) - 1];
}

base::Status CheckAnswer(const base::Result<mcp::ToolCallResult>& r) {
  if (!r.ok()) return base::Status::Error(r.status().ToString());
  if (r->is_error) return base::Status::Error("tool error: " + r->Text());
  if (!r->structured || !r->structured->contains("rows") || !(*r->structured)["rows"].is_array() ||
      (*r->structured)["rows"].empty()) {
    return base::Status::Error("no rows in structuredContent");
  }
  return base::Status();
}

Latency MeasureLatency(Client& client, int calls, int warmup) {
  Latency l;
  for (int i = 0; i < warmup; ++i)
    client.CallTool(kTool, WorkloadArguments(), nullptr, kCallTimeout);
  l.us.reserve(calls);
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    auto r = client.CallTool(kTool, WorkloadArguments(), nullptr, kCallTimeout);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (base::Status answer = CheckAnswer(r); answer.ok()) {
      l.us.push_back(us);
    } else if (l.errors++ == 0) {
      l.first_error = answer.message();
    }
  }
  l.seconds = Seconds(start);
  std::sort(l.us.begin(), l.us.end());
  return l;
}

Throughput MeasureThroughput(int port, int clients, double seconds,
                             const std::function<void()>& every_second) {
  Throughput t;
  t.clients = clients;
  std::latch ready(clients);
  std::latch go(1);
  std::atomic<long> ok{0}, errors{0}, init_failures{0};
  std::atomic<int> running{0};
  std::mutex mu;
  Clock::time_point start, deadline;
  std::vector<Clock::time_point> last(clients);
  std::vector<std::vector<double>> us(clients);
  auto note_error = [&](std::atomic<long>& counter, std::string& first, const std::string& e) {
    counter.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu);
    if (first.empty()) first = e;
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      Client client(std::make_unique<HttpClientTransport>("127.0.0.1", port),
                    ClientOptions{.timeout = kCallTimeout});
      bool initialized = false;
      for (int attempt = 0; attempt < 5 && !initialized; ++attempt) {
        if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
        auto init = client.Initialize("mcp_bench", "0.1.0");
        initialized = init.ok();
        if (!initialized) note_error(init_failures, t.first_init_error, init.status().ToString());
      }
      ready.count_down();
      go.wait();
      last[i] = start;
      if (!initialized) return;
      running.fetch_add(1);
      for (auto t0 = Clock::now(); t0 < deadline; t0 = last[i]) {
        base::Status answer =
            CheckAnswer(client.CallTool(kTool, WorkloadArguments(), nullptr, kCallTimeout));
        last[i] = Clock::now();
        if (answer.ok()) {
          ok.fetch_add(1);
          us[i].push_back(std::chrono::duration<double, std::micro>(last[i] - t0).count());
        } else {
          note_error(errors, t.first_call_error, answer.message());
        }
      }
    });
  }
  ready.wait();
  start = Clock::now();
  deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  go.count_down();
  if (every_second) {
    for (auto now = Clock::now(); now < deadline; now = Clock::now()) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(std::chrono::seconds(1), deadline - now));
      every_second();
    }
  }
  for (std::thread& th : threads) th.join();
  for (std::vector<double>& v : us) {
    t.latency.us.insert(t.latency.us.end(), v.begin(), v.end());
    std::vector<double>().swap(v);
  }
  std::sort(t.latency.us.begin(), t.latency.us.end());
  t.latency.errors = errors.load();
  t.latency.first_error = t.first_call_error;
  t.latency.seconds = Seconds(start);
  t.ok = ok.load();
  t.errors = errors.load();
  t.init_failures = init_failures.load();
  t.running = running.load();
  t.seconds =
      std::chrono::duration<double>(*std::max_element(last.begin(), last.end()) - start).count();
  return t;
}

// ---------------------------------------------------------------- environment

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
  }
  return "";
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

int Nproc() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace slurm_rca::bench

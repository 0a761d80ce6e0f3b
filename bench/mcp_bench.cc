// mcp_bench: tools/call latency and HTTP throughput of slurm-mcp on the replay back-end, beside a
// reference server written with the official TypeScript SDK, measured in the same run.
//
//   build/bin/mcp_bench [--calls N] [--seconds S] [--bundle DIR] [--slurm-mcp PATH]
//                       [--reference-node PATH | --no-reference]
//
// The workload is tools/call slurm_query {"topic": "nodes"} against the bundle (default
// fixtures/demo). For slurm-mcp, then for bench/mcp_reference/server.mjs (node + the SDK from
// ${SLURM_RCA_NPM_CACHE:-$HOME/.cache/slurm-rca/npm-peers}/sdk, see tests/mcp_peers/setup.sh):
//   1. latency p50/p99 of N calls over stdio (the server is a child of this process),
//   2. latency p50/p99 of N calls over Streamable HTTP with one client,
//   3. requests/s with 1, 8 and 64 concurrent HTTP clients (a thread and a session each), S
//      seconds per level.
// Both servers answer on 127.0.0.1 with ports the kernel picks. Every call's answer is checked
// (no error, rows present) and the two servers' structuredContent is compared once. Then the
// ratios C++/TS are printed. When node or the SDK is missing the C++ figures are printed and the
// reference is reported as not measured. Every server started is stopped by its PID, on errors
// and on SIGINT/SIGTERM too. Bad flags: one line on stderr, exit 2.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mcp/client.h"

namespace {

namespace fs = std::filesystem;
using slurm_rca::mcp::Client;
using slurm_rca::mcp::ClientOptions;
using slurm_rca::mcp::HttpClientTransport;
using slurm_rca::mcp::Json;
using slurm_rca::mcp::StdioClientTransport;
using slurm_rca::mcp::ToolCallResult;
using Clock = std::chrono::steady_clock;

constexpr char kTool[] = "slurm_query";
const Json kArguments = {{"topic", "nodes"}};
constexpr std::array<int, 3> kConcurrency = {1, 8, 64};
constexpr auto kStartTimeout = std::chrono::seconds(20);
constexpr auto kCallTimeout = std::chrono::milliseconds(30000);

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// ---------------------------------------------------------------- child processes

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

// A server started by this process, stdin and stdout on pipes, stderr in an unlinked temporary
// file (nothing is left behind, even on a signal).
// Stop() (or the destructor) ends it by PID: EOF on stdin (stdio servers get 2 s to exit), then
// SIGTERM, then SIGKILL.
class ServerProcess {
 public:
  struct Started {
    std::unique_ptr<ServerProcess> process;
    std::string error;
  };

  static Started Start(const std::string& name, const std::vector<std::string>& argv, bool stdio) {
    auto p = std::unique_ptr<ServerProcess>(new ServerProcess(name, stdio));
    char path[] = "/tmp/mcp_bench_stderr_XXXXXX";
    const int err_fd = mkostemp(path, O_CLOEXEC);
    if (err_fd < 0) return {nullptr, "mkostemp: " + std::string(std::strerror(errno))};
    unlink(path);
    p->stderr_fd_ = err_fd;  // closed by the destructor
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
      std::string e = "pipe: " + std::string(std::strerror(errno));
      for (int fd : {in[0], in[1], out[0], out[1]}) {
        if (fd >= 0) close(fd);
      }
      return {nullptr, e};
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
      const char msg[] = "mcp_bench: exec failed\n";
      (void)!write(2, msg, sizeof msg - 1);
      _exit(127);
    }
    const int fork_errno = errno;
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
      close(in[1]);
      close(out[0]);
      return {nullptr, "fork: " + std::string(std::strerror(fork_errno))};
    }
    p->pid_ = pid;
    p->to_child_ = in[1];
    p->from_child_ = out[0];
    RegisterChild(pid);
    return {std::move(p), ""};
  }

  ~ServerProcess() {
    Stop();
    if (stderr_fd_ >= 0) close(stderr_fd_);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int to_child() const { return to_child_; }
  int from_child() const { return from_child_; }

  // Waits for "serving MCP on http://HOST:PORT/mcp (...)" on stderr and returns the port, with
  // the parenthesised words in *banner; 0 and *error when it does not come.
  int WaitForPort(std::string* banner, std::string* error) {
    const auto deadline = Clock::now() + kStartTimeout;
    const std::string marker = "serving MCP on http://";
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
          *error = name_ + ": no port in '" + line + "'";
          return 0;
        }
        const size_t paren = line.find(" (", slash);
        if (paren != std::string::npos && line.back() == ')') {
          *banner = line.substr(paren + 2, line.size() - paren - 3);
        }
        return port;
      }
      if (Reap(false)) {
        *error = name_ + " exited before listening: " + StderrTail();
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    *error = name_ + " did not report its port within " + std::to_string(kStartTimeout.count()) +
             " s: " + StderrTail();
    return 0;
  }

  // What the server wrote on stderr, at most its last 400 bytes, on one line.
  std::string StderrTail() const {
    std::string text = StderrText();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    if (text.size() > 400) text = "..." + text.substr(text.size() - 400);
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text.empty() ? "(nothing on stderr)" : text;
  }

  // Ends the server by PID; says how it ended.
  std::string Stop() {
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

 private:
  ServerProcess(std::string name, bool stdio) : name_(std::move(name)), stdio_(stdio) {}

  std::string StderrText() const {
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

  // True once the child has been waited for (blocking when `block`).
  bool Reap(bool block) {
    if (reaped_) return true;
    pid_t r = waitpid(pid_, &status_, block ? 0 : WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) reaped_ = true;
    return reaped_;
  }

  bool WaitReaped(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!Reap(false)) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  const std::string name_;
  const bool stdio_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int stderr_fd_ = -1;
  std::string stopped_;
};

// ---------------------------------------------------------------- measurements

// "" when the answer is a successful slurm_query with rows, else why not.
std::string CheckAnswer(const slurm_rca::mcp::Result<ToolCallResult>& r) {
  if (!r.ok()) return r.status().ToString();
  if (r->is_error) return "tool error: " + r->Text();
  if (!r->structured || !r->structured->contains("rows") || !(*r->structured)["rows"].is_array() ||
      (*r->structured)["rows"].empty()) {
    return "no rows in structuredContent";
  }
  return "";
}

struct Latency {
  std::vector<double> us;  // of the calls answered well, sorted
  long errors = 0;
  std::string first_error;
  double seconds = 0;

  // Nearest rank.
  double Percentile(double p) const {
    if (us.empty()) return NAN;
    const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(us.size())));
    return us[std::clamp<size_t>(rank, 1, us.size()) - 1];
  }
};

// `warmup` calls, then `calls` timed one after the other.
Latency MeasureLatency(Client& client, int calls, int warmup) {
  Latency l;
  for (int i = 0; i < warmup; ++i) client.CallTool(kTool, kArguments, nullptr, kCallTimeout);
  l.us.reserve(calls);
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    auto r = client.CallTool(kTool, kArguments, nullptr, kCallTimeout);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (std::string e = CheckAnswer(r); e.empty()) {
      l.us.push_back(us);
    } else if (l.errors++ == 0) {
      l.first_error = e;
    }
  }
  l.seconds = Seconds(start);
  std::sort(l.us.begin(), l.us.end());
  return l;
}

struct Throughput {
  int clients = 0;
  int running = 0;         // clients that got a session and called
  long init_failures = 0;  // initialize attempts that failed (each client tries up to 5 times)
  long ok = 0;
  long errors = 0;  // calls answered badly or not at all
  double seconds = 0;
  std::string first_init_error, first_call_error;
  double Rate() const { return seconds > 0 ? static_cast<double>(ok) / seconds : NAN; }
};

// `clients` threads, each with its own Client and session (initialized before the clock starts;
// a failed initialize is counted and retried up to 5 times), call as fast as they can for
// `seconds`. The rate counts answers checked good over the time from the start to the last answer.
Throughput MeasureThroughput(int port, int clients, double seconds) {
  Throughput t;
  t.clients = clients;
  std::latch ready(clients);
  std::latch go(1);
  std::atomic<long> ok{0}, errors{0}, init_failures{0};
  std::atomic<int> running{0};
  std::mutex mu;
  Clock::time_point start, deadline;
  std::vector<Clock::time_point> last(clients);
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
      while (Clock::now() < deadline) {
        std::string e = CheckAnswer(client.CallTool(kTool, kArguments, nullptr, kCallTimeout));
        last[i] = Clock::now();
        if (e.empty()) {
          ok.fetch_add(1);
        } else {
          note_error(errors, t.first_call_error, e);
        }
      }
    });
  }
  ready.wait();
  start = Clock::now();
  deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  go.count_down();
  for (std::thread& th : threads) th.join();
  t.ok = ok.load();
  t.errors = errors.load();
  t.init_failures = init_failures.load();
  t.running = running.load();
  t.seconds =
      std::chrono::duration<double>(*std::max_element(last.begin(), last.end()) - start).count();
  return t;
}

// ---------------------------------------------------------------- one server's figures

struct Figures {
  std::string label;
  std::string server;  // serverInfo name and version
  std::string banner;  // what the HTTP server said about itself on stderr
  std::optional<Latency> stdio, http;
  std::vector<Throughput> throughput;  // per kConcurrency level
  std::optional<Json> answer;          // structuredContent of one stdio call
  std::string error;                   // the first failure; figures after it are missing
  bool measured = true;                // false: the reference was not run at all
};

std::string Percent(long part, long whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole ? 100.0 * part / whole : 0.0);
  return buf;
}

void PrintLatency(const Figures& f, const char* transport, const Latency& l) {
  std::printf("  %-18s %-5s latency: %zu calls in %.2f s, p50 %.1f us, p99 %.1f us, max %.1f us",
              f.label.c_str(), transport, l.us.size(), l.seconds, l.Percentile(0.50),
              l.Percentile(0.99), l.us.empty() ? NAN : l.us.back());
  if (l.errors) {
    std::printf(", %ld errors (%s), first: %s", l.errors,
                Percent(l.errors, l.errors + static_cast<long>(l.us.size())).c_str(),
                l.first_error.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

void PrintThroughput(const Figures& f, const Throughput& t) {
  std::printf("  %-18s http  %2d clients: %.0f req/s (%ld answers in %.2f s", f.label.c_str(),
              t.clients, t.Rate(), t.ok, t.seconds);
  if (t.running < t.clients) std::printf(", only %d clients got a session", t.running);
  if (t.init_failures) {
    std::printf(", %ld failed initialize attempts, first: %s", t.init_failures,
                t.first_init_error.c_str());
  }
  if (t.errors) std::printf(", %ld failed calls, first: %s", t.errors, t.first_call_error.c_str());
  std::printf(")\n");
  std::fflush(stdout);
}

std::string ServerName(const Json& server_info) {
  return server_info.value("name", "?") + " " + server_info.value("version", "?");
}

// Starts `argv` as a stdio server, checks one answer, measures latency, stops the server.
void StdioPhase(Figures& f, const std::vector<std::string>& argv, int calls, int warmup) {
  ServerProcess::Started s = ServerProcess::Start(f.label, argv, /*stdio=*/true);
  if (!s.process) {
    f.error = "stdio: " + s.error;
    return;
  }
  {
    Client client(
        std::make_unique<StdioClientTransport>(s.process->from_child(), s.process->to_child()),
        ClientOptions{.timeout = kCallTimeout});
    auto init = client.Initialize("mcp_bench", "0.1.0");
    if (!init.ok()) {
      f.error = "stdio initialize: " + init.status().ToString() +
                "; server stderr: " + s.process->StderrTail();
    } else {
      f.server = ServerName(init->server_info);
      auto first = client.CallTool(kTool, kArguments, nullptr, kCallTimeout);
      if (std::string e = CheckAnswer(first); !e.empty()) {
        f.error = "stdio tools/call: " + e;
      } else {
        f.answer = *first->structured;
        f.stdio = MeasureLatency(client, calls, warmup);
        PrintLatency(f, "stdio", *f.stdio);
      }
    }
    client.transport().Close();
  }
  std::printf("  %-18s stdio server stopped: %s\n", f.label.c_str(), s.process->Stop().c_str());
}

// Measures one-client latency over HTTP on `port`.
void HttpLatency(Figures& f, int port, int calls, int warmup) {
  Client client(std::make_unique<HttpClientTransport>("127.0.0.1", port),
                ClientOptions{.timeout = kCallTimeout});
  auto init = client.Initialize("mcp_bench", "0.1.0");
  if (!init.ok()) {
    f.error = "http initialize: " + init.status().ToString();
    return;
  }
  if (f.server.empty()) f.server = ServerName(init->server_info);
  auto first = client.CallTool(kTool, kArguments, nullptr, kCallTimeout);
  if (std::string e = CheckAnswer(first); !e.empty()) {
    f.error = "http tools/call: " + e;
    return;
  }
  if (!f.answer) f.answer = *first->structured;
  f.http = MeasureLatency(client, calls, warmup);
  PrintLatency(f, "http", *f.http);
  client.transport().Close();
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

// The 1, 5 and 15 minute load averages: other work on the machine skews the figures.
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

// The rows of the summary: a label, how to read one figure, and whether lower is better.
struct Row {
  std::string label;
  std::function<std::optional<double>(const Figures&)> value;
  bool lower_better;
};

std::string Cell(std::optional<double> v, const char* format) {
  if (!v || std::isnan(*v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, format, *v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mcp_bench: tools/call latency and HTTP req/s of slurm-mcp beside a reference server "
      "written with the official TypeScript SDK (bench/mcp_reference), in one run"};
  int calls = 2000;
  double seconds = 5.0;
  std::string bundle = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo";
  std::string reference_node;
  bool no_reference = false;
  std::string slurm_mcp;
  app.add_option("--calls", calls, "Timed calls per latency measurement")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "Seconds per throughput level (1, 8, 64 clients)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--bundle", bundle, "Evidence bundle both servers replay")->capture_default_str();
  app.add_option("--slurm-mcp", slurm_mcp,
                 "The slurm-mcp binary (default: beside mcp_bench, then build/bin)");
  auto* node_opt =
      app.add_option("--reference-node", reference_node,
                     "node binary for the TypeScript reference (default: node on PATH)");
  app.add_flag("--no-reference", no_reference, "Measure slurm-mcp only")->excludes(node_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mcp_bench: %s (see mcp_bench --help)\n", e.what());
    return 2;
  }
  auto usage_error = [](const std::string& message) {
    std::fprintf(stderr, "mcp_bench: %s\n", message.c_str());
    return 2;
  };
  if (!fs::is_regular_file(fs::path(bundle) / "manifest.json")) {
    return usage_error("--bundle " + bundle + ": no manifest.json there");
  }
  bundle = fs::absolute(bundle).lexically_normal().string();
  if (slurm_mcp.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    for (const fs::path& candidate :
         {self.parent_path() / "slurm-mcp",
          fs::path(SLURM_RCA_SOURCE_DIR) / "build" / "bin" / "slurm-mcp"}) {
      if (!ec && access(candidate.c_str(), X_OK) == 0) {
        slurm_mcp = candidate.string();
        break;
      }
    }
    if (slurm_mcp.empty()) return usage_error("slurm-mcp not found; build it or pass --slurm-mcp");
  } else if (access(slurm_mcp.c_str(), X_OK) != 0) {
    return usage_error("--slurm-mcp " + slurm_mcp + ": not an executable");
  }
  if (!reference_node.empty() &&
      (access(reference_node.c_str(), X_OK) != 0 || !fs::is_regular_file(reference_node))) {
    return usage_error("--reference-node " + reference_node + ": not an executable");
  }

  // Whether the reference can run: node, the SDK prefix, the script.
  const char* cache_env = std::getenv("SLURM_RCA_NPM_CACHE");
  const char* home = std::getenv("HOME");
  const std::string sdk_prefix =
      (cache_env && *cache_env ? std::string(cache_env)
                               : std::string(home ? home : "") + "/.cache/slurm-rca/npm-peers") +
      "/sdk";
  const std::string script = std::string(SLURM_RCA_SOURCE_DIR) + "/bench/mcp_reference/server.mjs";
  std::string not_measured;
  if (no_reference) {
    not_measured = "--no-reference";
  } else {
    if (reference_node.empty()) reference_node = FindOnPath("node");
    if (reference_node.empty()) {
      not_measured = "node is not on PATH (apt-get install nodejs npm, or --reference-node PATH)";
    } else if (!fs::is_regular_file(fs::path(sdk_prefix) / "node_modules" /
                                    "@modelcontextprotocol" / "sdk" / "package.json") ||
               !fs::is_directory(fs::path(sdk_prefix) / "node_modules" / "zod")) {
      not_measured =
          "the SDK is not installed in " + sdk_prefix + " (run tests/mcp_peers/setup.sh)";
    } else if (!fs::is_regular_file(script)) {
      not_measured = script + " is missing";
    }
  }

  struct sigaction sa = {};
  sa.sa_handler = OnFatalSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  const int warmup = std::clamp(calls / 10, 10, 200);
  struct utsname u = {};
  uname(&u);
  std::printf("mcp_bench: slurm-mcp beside the official TypeScript SDK, one machine, one run\n");
  std::printf(
      "machine:   %d CPUs (nproc), %s, %s %s, load average %s; servers and clients "
      "share it, loopback only\n",
      Nproc(), CpuModel().c_str(), u.sysname, u.release, LoadAverage().c_str());
  std::printf("workload:  tools/call %s %s on the replay of %s (last snapshot);\n", kTool,
              kArguments.dump().c_str(), bundle.c_str());
  std::printf("           latency: %d timed calls one after the other after %d warm-up calls;\n",
              calls, warmup);
  std::printf(
      "           throughput: %.1f s per level of concurrent HTTP clients, a thread and a "
      "session each\n",
      seconds);
  std::printf(
      "client:    the C++ mcp::Client for both servers; over HTTP it opens a fresh "
      "connection per message (no keep-alive)\n");
  std::printf("C++:       %s serve --replay (default options)\n", slurm_mcp.c_str());
  if (not_measured.empty()) {
    std::printf("reference: %s %s (SDK from %s)\n", reference_node.c_str(), script.c_str(),
                sdk_prefix.c_str());
  } else {
    std::printf("reference: not measured: %s\n", not_measured.c_str());
  }
  std::printf("\n");
  std::fflush(stdout);

  Figures cpp{.label = "slurm-mcp (C++)"};
  Figures ts{.label = "TS SDK reference"};
  ts.measured = not_measured.empty();
  const std::vector<std::string> cpp_stdio = {slurm_mcp, "serve", "--stdio", "--replay", bundle};
  const std::vector<std::string> cpp_http = {slurm_mcp,     "serve",    "--http",
                                             "127.0.0.1:0", "--replay", bundle};
  const std::vector<std::string> ts_stdio = {reference_node, script,         "--stdio", "--bundle",
                                             bundle,         "--sdk-prefix", sdk_prefix};
  const std::vector<std::string> ts_http = {reference_node, script, "--http",       "127.0.0.1:0",
                                            "--bundle",     bundle, "--sdk-prefix", sdk_prefix};

  // 1. stdio latency, one server at a time.
  std::printf("stdio (each server started by this process, stopped by PID)\n");
  StdioPhase(cpp, cpp_stdio, calls, warmup);
  if (ts.measured) StdioPhase(ts, ts_stdio, calls, warmup);

  // 2. HTTP: both servers up; latency, then each concurrency level, C++ then TS.
  std::printf("\nStreamable HTTP on 127.0.0.1 (ephemeral ports)\n");
  std::vector<Figures*> http_servers = {&cpp};
  if (ts.measured) http_servers.push_back(&ts);
  std::vector<ServerProcess::Started> started;
  std::vector<int> ports;
  for (Figures* f : http_servers) {
    started.push_back(ServerProcess::Start(f->label, f == &cpp ? cpp_http : ts_http, false));
    int port = 0;
    std::string error;
    if (started.back().process) {
      port = started.back().process->WaitForPort(&f->banner, &error);
    } else {
      error = started.back().error;
    }
    if (port == 0 && f->error.empty()) f->error = "http: " + error;
    ports.push_back(port);
    if (port) {
      std::printf("  %-18s listening on 127.0.0.1:%d%s%s\n", f->label.c_str(), port,
                  f->banner.empty() ? "" : ", ", f->banner.c_str());
    }
  }
  for (size_t i = 0; i < http_servers.size(); ++i) {
    if (ports[i] && http_servers[i]->error.empty()) {
      HttpLatency(*http_servers[i], ports[i], calls, warmup);
    }
  }
  for (int clients : kConcurrency) {
    for (size_t i = 0; i < http_servers.size(); ++i) {
      Figures& f = *http_servers[i];
      if (!ports[i] || !f.error.empty()) continue;
      f.throughput.push_back(MeasureThroughput(ports[i], clients, seconds));
      PrintThroughput(f, f.throughput.back());
    }
  }
  for (size_t i = 0; i < http_servers.size(); ++i) {
    if (started[i].process) {
      std::printf("  %-18s http  server stopped: %s\n", http_servers[i]->label.c_str(),
                  started[i].process->Stop().c_str());
    }
  }

  // 3. The same answer? Then the summary.
  std::printf("\n");
  if (cpp.answer && ts.answer) {
    std::vector<std::string> differ;
    for (const auto& [key, value] : cpp.answer->items()) {
      if (!ts.answer->contains(key) || (*ts.answer)[key] != value) differ.push_back(key);
    }
    for (const auto& [key, value] : ts.answer->items()) {
      if (!cpp.answer->contains(key)) differ.push_back(key);
    }
    std::string list;
    for (const std::string& k : differ) list += (list.empty() ? "" : ", ") + k;
    std::printf("same answer: structuredContent of both servers %s (%zu rows)\n",
                differ.empty() ? "is identical" : ("differs in: " + list).c_str(),
                (*cpp.answer)["rows"].size());
  }
  for (const Figures* f : {&cpp, &ts}) {
    if (!f->server.empty()) {
      std::printf("%-18s serverInfo %s%s%s\n", f->label.c_str(), f->server.c_str(),
                  f->banner.empty() ? "" : "; ", f->banner.c_str());
    }
  }

  auto throughput_at = [](size_t level) {
    return [level](const Figures& f) -> std::optional<double> {
      if (level >= f.throughput.size()) return std::nullopt;
      return f.throughput[level].Rate();
    };
  };
  auto latency = [](bool stdio, double p) {
    return [stdio, p](const Figures& f) -> std::optional<double> {
      const std::optional<Latency>& l = stdio ? f.stdio : f.http;
      if (!l) return std::nullopt;
      return l->Percentile(p);
    };
  };
  const std::vector<Row> rows = {
      {"stdio latency p50 (us)", latency(true, 0.50), true},
      {"stdio latency p99 (us)", latency(true, 0.99), true},
      {"http latency p50 (us)", latency(false, 0.50), true},
      {"http latency p99 (us)", latency(false, 0.99), true},
      {"http req/s, 1 client", throughput_at(0), false},
      {"http req/s, 8 clients", throughput_at(1), false},
      {"http req/s, 64 clients", throughput_at(2), false},
  };
  std::printf(
      "\nsummary (one machine, one run; C++/TS: latency below 1 and req/s above 1 mean "
      "slurm-mcp is faster)\n");
  std::printf("  %-24s %16s %18s %8s\n", "", "slurm-mcp (C++)", "TS SDK reference", "C++/TS");
  for (const Row& r : rows) {
    std::optional<double> a = r.value(cpp);
    std::optional<double> b = ts.measured ? r.value(ts) : std::nullopt;
    std::optional<double> ratio;
    if (a && b && *b > 0) ratio = *a / *b;
    std::printf("  %-24s %16s %18s %8s\n", r.label.c_str(),
                Cell(a, r.lower_better ? "%.1f" : "%.0f").c_str(),
                ts.measured ? Cell(b, r.lower_better ? "%.1f" : "%.0f").c_str() : "not measured",
                Cell(ratio, "%.2f").c_str());
  }
  for (const Figures* f : {&cpp, &ts}) {
    for (const Throughput& t : f->throughput) {
      if (t.init_failures == 0 && t.errors == 0) continue;
      std::printf(
          "  failures (not in req/s): %s, %d clients: %ld failed initialize attempts "
          "(%d of %d clients got a session), %ld of %ld calls failed\n",
          f->label.c_str(), t.clients, t.init_failures, t.running, t.clients, t.errors,
          t.errors + t.ok);
    }
  }
  int rc = 0;
  for (const Figures* f : {&cpp, &ts}) {
    if (!f->error.empty()) {
      std::printf("error: %s: %s\n", f->label.c_str(), f->error.c_str());
      rc = 1;
    }
  }
  if (!ts.measured) std::printf("reference not measured: %s\n", not_measured.c_str());
  return rc;
}

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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/mcp_harness.h"
#include "mcp/protocol/client.h"

namespace {

using slurm_rca::bench::CheckAnswer;
using slurm_rca::bench::Clock;
using slurm_rca::bench::CpuModel;
using slurm_rca::bench::FindOnPath;
using slurm_rca::bench::kCallTimeout;
using slurm_rca::bench::kTool;
using slurm_rca::bench::Latency;
using slurm_rca::bench::LoadAverage;
using slurm_rca::bench::MeasureLatency;
using slurm_rca::bench::MeasureThroughput;
using slurm_rca::bench::Memory;
using slurm_rca::bench::Nproc;
using slurm_rca::bench::ReadMemory;
using slurm_rca::bench::ServerProcess;
using slurm_rca::bench::Throughput;
using slurm_rca::bench::WorkloadArguments;
namespace fs = std::filesystem;
using slurm_rca::mcp::Client;
using slurm_rca::mcp::ClientOptions;
using slurm_rca::mcp::HttpClientTransport;
using slurm_rca::mcp::Json;
using slurm_rca::mcp::StdioClientTransport;

constexpr std::array<int, 3> kConcurrency = {1, 8, 64};

// ---------------------------------------------------------------- one server's figures

struct Figures {
  std::string label;
  std::string server;  // serverInfo name and version
  std::string banner;  // what the HTTP server said about itself on stderr
  std::optional<Latency> stdio, http;
  std::vector<Throughput> throughput;          // per kConcurrency level
  std::optional<Json> answer;                  // structuredContent of one stdio call
  std::string error;                           // the first failure; figures after it are missing
  bool measured = true;                        // false: the reference was not run at all
  Memory stdio_memory;                         // at the end of the stdio latency run
  Memory http_idle;                            // after the first HTTP tools/call
  double http_peak_rss_mib = NAN;              // highest VmRSS sampled once a second under load
  Memory http_after_load;                      // after the last throughput level (VmHWM: the peak)
  std::optional<Latency> connect;              // TCP connect+close to the HTTP port, no request
  std::vector<double> cpu_us_per_call;         // server utime+stime per answered call, per level
  std::vector<double> client_cpu_us_per_call;  // this process's, the same way
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
  auto started = ServerProcess::Start(f.label, argv, /*stdio=*/true);
  if (!started.ok()) {
    f.error = "stdio: " + started.status().message();
    return;
  }
  ServerProcess* server = started->get();
  {
    Client client(
        std::make_unique<StdioClientTransport>(server->from_child(), server->to_child()),
        ClientOptions{.timeout = kCallTimeout});
    auto init = client.Initialize("mcp_bench", "0.1.0");
    if (!init.ok()) {
      f.error = "stdio initialize: " + init.status().ToString() +
                "; server stderr: " + server->StderrTail();
    } else {
      f.server = ServerName(init->server_info);
      auto first = client.CallTool(kTool, WorkloadArguments(), nullptr, kCallTimeout);
      if (slurm_rca::base::Status answer = CheckAnswer(first); !answer.ok()) {
        f.error = "stdio tools/call: " + answer.message();
      } else {
        f.answer = *first->structured;
        f.stdio = MeasureLatency(client, calls, warmup);
        PrintLatency(f, "stdio", *f.stdio);
        f.stdio_memory = ReadMemory(server->pid());
      }
    }
    client.transport().Close();
  }
  std::printf("  %-18s stdio server stopped: %s\n", f.label.c_str(), server->Stop().c_str());
}

// Measures one-client latency over HTTP on `port`.
void HttpLatency(Figures& f, pid_t pid, int port, int calls, int warmup) {
  Client client(std::make_unique<HttpClientTransport>("127.0.0.1", port),
                ClientOptions{.timeout = kCallTimeout});
  auto init = client.Initialize("mcp_bench", "0.1.0");
  if (!init.ok()) {
    f.error = "http initialize: " + init.status().ToString();
    return;
  }
  if (f.server.empty()) f.server = ServerName(init->server_info);
  auto first = client.CallTool(kTool, WorkloadArguments(), nullptr, kCallTimeout);
  if (slurm_rca::base::Status answer = CheckAnswer(first); !answer.ok()) {
    f.error = "http tools/call: " + answer.message();
    return;
  }
  if (!f.answer) f.answer = *first->structured;
  f.http_idle = ReadMemory(pid);
  f.http = MeasureLatency(client, calls, warmup);
  PrintLatency(f, "http", *f.http);
  client.transport().Close();
}

// `calls` loopback TCP connections to `port`, each connected and closed without a request: the
// part of an HTTP call's latency that a client opening a connection per message pays in connect.
Latency ConnectLatency(int port, int calls) {
  Latency l;
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) close(fd);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (ok) {
      l.us.push_back(us);
    } else if (l.errors++ == 0) {
      l.first_error = "connect failed";
    }
  }
  l.seconds = slurm_rca::bench::Seconds(start);
  std::sort(l.us.begin(), l.us.end());
  return l;
}

// The rows of the summary: a label, how to read one figure, and whether lower is better.
struct Row {
  std::string label;
  std::function<std::optional<double>(const Figures&)> value;
  bool lower_better;
};

std::optional<double> Mib(double v) {
  if (std::isnan(v)) return std::nullopt;
  return v;
}

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

  slurm_rca::bench::InstallChildCleanup();

  const int warmup = std::clamp(calls / 10, 10, 200);
  struct utsname u = {};
  uname(&u);
  std::printf("mcp_bench: slurm-mcp beside the official TypeScript SDK, one machine, one run\n");
  std::printf(
      "machine:   %d CPUs (nproc), %s, %s %s, load average %s; servers and clients "
      "share it, loopback only\n",
      Nproc(), CpuModel().c_str(), u.sysname, u.release, LoadAverage().c_str());
  std::printf("workload:  tools/call %s %s on the replay of %s (last snapshot);\n", kTool,
              WorkloadArguments().dump().c_str(), bundle.c_str());
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
  std::vector<std::unique_ptr<ServerProcess>> started;  // null where it did not start
  std::vector<int> ports;
  for (Figures* f : http_servers) {
    auto server = ServerProcess::Start(f->label, f == &cpp ? cpp_http : ts_http, false);
    int port = 0;
    std::string error;
    if (server.ok()) {
      started.push_back(std::move(server).value());
      slurm_rca::base::Result<int> listening = started.back()->WaitForPort(&f->banner);
      if (listening.ok()) {
        port = *listening;
      } else {
        error = listening.status().message();
      }
    } else {
      started.push_back(nullptr);
      error = server.status().message();
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
      HttpLatency(*http_servers[i], started[i]->pid(), ports[i], calls, warmup);
      http_servers[i]->connect = ConnectLatency(ports[i], calls);
      PrintLatency(*http_servers[i], "tcp", *http_servers[i]->connect);
    }
  }
  for (int clients : kConcurrency) {
    for (size_t i = 0; i < http_servers.size(); ++i) {
      Figures& f = *http_servers[i];
      if (!ports[i] || !f.error.empty()) continue;
      const pid_t pid = started[i]->pid();
      auto sample = [&f, pid] {
        const double rss = ReadMemory(pid).rss_mib;
        if (std::isnan(f.http_peak_rss_mib) || rss > f.http_peak_rss_mib) f.http_peak_rss_mib = rss;
      };
      const double cpu_before = slurm_rca::bench::CpuSeconds(pid);
      const double client_before = slurm_rca::bench::CpuSeconds(getpid());
      f.throughput.push_back(MeasureThroughput(ports[i], clients, seconds, sample));
      const double cpu = slurm_rca::bench::CpuSeconds(pid) - cpu_before;
      const double client = slurm_rca::bench::CpuSeconds(getpid()) - client_before;
      const double ok = static_cast<double>(f.throughput.back().ok);
      f.cpu_us_per_call.push_back(ok > 0 ? 1e6 * cpu / ok : NAN);
      f.client_cpu_us_per_call.push_back(ok > 0 ? 1e6 * client / ok : NAN);
      PrintThroughput(f, f.throughput.back());
      // The clients run on the same CPUs: together the two set a ceiling on req/s.
      std::printf(
          "  %-18s       CPU per answered call: server %.0f us, clients (this process) %.0f us; "
          "%d CPUs allow at most %.0f req/s\n",
          f.label.c_str(), f.cpu_us_per_call.back(), f.client_cpu_us_per_call.back(), Nproc(),
          Nproc() * 1e6 / (f.cpu_us_per_call.back() + f.client_cpu_us_per_call.back()));
    }
  }
  for (size_t i = 0; i < http_servers.size(); ++i) {
    Figures& f = *http_servers[i];
    if (!started[i] || !f.error.empty()) continue;
    f.http_after_load = ReadMemory(started[i]->pid());
    std::printf(
        "  %-18s memory: stdio VmHWM %.1f MiB; http VmRSS %.1f MiB idle, %.1f MiB peak sampled "
        "under "
        "load, VmHWM %.1f MiB, VmRSS %.1f MiB after load\n",
        f.label.c_str(), f.stdio_memory.hwm_mib, f.http_idle.rss_mib, f.http_peak_rss_mib,
        f.http_after_load.hwm_mib, f.http_after_load.rss_mib);
  }
  for (size_t i = 0; i < http_servers.size(); ++i) {
    if (started[i]) {
      std::printf("  %-18s http  server stopped: %s\n", http_servers[i]->label.c_str(),
                  started[i]->Stop().c_str());
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
  auto under_load = [](size_t level, double p) {
    return [level, p](const Figures& f) -> std::optional<double> {
      if (level >= f.throughput.size()) return std::nullopt;
      return f.throughput[level].latency.Percentile(p);
    };
  };
  auto cpu_at = [](size_t level) {
    return [level](const Figures& f) -> std::optional<double> {
      if (level >= f.cpu_us_per_call.size()) return std::nullopt;
      return f.cpu_us_per_call[level];
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
      {"server CPU/call, 8 cl (us)", cpu_at(1), true},
      {"http p50 at 64 clients (us)", under_load(2, 0.50), true},
      {"http p99 at 64 clients (us)", under_load(2, 0.99), true},
      {"stdio VmHWM (MiB)", [](const Figures& f) { return Mib(f.stdio_memory.hwm_mib); }, true},
      {"http VmRSS idle (MiB)", [](const Figures& f) { return Mib(f.http_idle.rss_mib); }, true},
      {"http VmHWM (MiB)", [](const Figures& f) { return Mib(f.http_after_load.hwm_mib); }, true},
      {"http VmRSS after (MiB)", [](const Figures& f) { return Mib(f.http_after_load.rss_mib); },
       true},
      {"client CPU/call, 8 cl (us)",
       [](const Figures& f) -> std::optional<double> {
         if (f.client_cpu_us_per_call.size() < 2) return std::nullopt;
         return f.client_cpu_us_per_call[1];
       },
       true},
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
  if (ts.measured) {
    // Issue #9's targets, read off the rows above: a ratio, never a pass or a fail of the run.
    struct Target {
      std::string what;
      size_t row;
      double bound;  // the C++/TS ratio must be at most this (lower_better) or at least it
    };
    const std::vector<Target> targets = {
        {"http latency p50, 10x lower", 2, 0.1},  {"http latency p99, 10x lower", 3, 0.1},
        {"stdio latency p50, 10x lower", 0, 0.1}, {"http req/s 1 client, 5x", 4, 5.0},
        {"http req/s 8 clients, 5x", 5, 5.0},     {"http req/s 64 clients, 5x", 6, 5.0},
        {"http VmHWM, 10x smaller", 12, 0.1},
    };
    std::printf("\ntargets (issue #9; C++/TS ratio against the bound)\n");
    for (const Target& t : targets) {
      const Row& r = rows[t.row];
      std::optional<double> a = r.value(cpp), b = r.value(ts);
      if (!a || !b || *b <= 0 || std::isnan(*a) || std::isnan(*b)) {
        std::printf("  %-30s not measured\n", t.what.c_str());
        continue;
      }
      const double ratio = *a / *b;
      const bool met = r.lower_better ? ratio <= t.bound : ratio >= t.bound;
      std::printf("  %-30s ratio %6.2f, bound %s%.1f: %s\n", t.what.c_str(), ratio,
                  r.lower_better ? "<= " : ">= ", t.bound, met ? "met" : "NOT met");
    }
  }
  if (cpp.connect && cpp.http && !cpp.connect->us.empty() && !cpp.http->us.empty()) {
    const double connect_p50 = cpp.connect->Percentile(0.5);
    const double http_p50 = cpp.http->Percentile(0.5);
    std::printf(
        "\nfloor: a bare TCP connect+close to slurm-mcp's port takes p50 %.1f us, %.0f%% of its "
        "http p50 (%.1f us); the client opens a connection per message\n",
        connect_p50, 100.0 * connect_p50 / http_p50, http_p50);
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

// slurm-mcp: the read-only MCP server for Slurm (stdio or Streamable HTTP), and one-shot verbs
// for people. What it serves is assembled by the server library (server/surface.h).
#include <CLI/CLI.hpp>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "base/build_info.h"
#include "base/paths.h"
#include "guard/policy.h"
#include "mcp/backend/audit_log.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/protocol/client.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/protocol/metrics.h"
#include "mcp/protocol/stdio_transport.h"
#include "mcp/telemetry/gpu_sampler.h"
#include "mcp/topics/tools.h"
#include "server/surface.h"

namespace {

using namespace slurm_rca::mcp;

constexpr int kUsage = 2;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int Usage(const std::string& message) {
  std::cerr << "slurm-mcp: " << message << " (see slurm-mcp --help)\n";
  return kUsage;
}

// Options that choose and tune the back-end, shared by serve and the one-shot verbs.
struct BackendFlags {
  std::string replay;
  double offset = -1;
  std::string slurm_conf;
  std::string clusters;
  std::string trusted_dirs = "/usr/bin:/usr/local/bin";
  double timeout = 20;
  double cache_ttl = 10;
  int max_concurrent = 2;
  int max_per_minute = 60;
  std::vector<std::string> log_files;
  std::string fabric_root;
  std::string audit_log;
  size_t max_rows = 200;
  Metrics* metrics = nullptr;  // serve --metrics: counts the live back-end's reads

  void Add(CLI::App* app) {
    app->add_option("--replay", replay, "Serve a recorded evidence bundle instead of the cluster");
    app->add_option("--offset", offset, "Replay: the snapshot at or before this many seconds");
    app->add_option("--slurm-conf", slurm_conf, "Live: SLURM_CONF given to Slurm commands");
    app->add_option("--clusters", clusters, "Live: cluster names -M may name, comma-separated");
    app->add_option("--trusted-dirs", trusted_dirs, "Live: where Slurm binaries are (colon-separated)")
        ->capture_default_str();
    app->add_option("--timeout", timeout, "Live: seconds before a read is killed")
        ->check(CLI::Range(0.1, 600.0))
        ->capture_default_str();
    app->add_option("--cache-ttl", cache_ttl, "Live: seconds a read is reused (0: no cache)")
        ->check(CLI::Range(0.0, 3600.0))
        ->capture_default_str();
    app->add_option("--max-concurrent", max_concurrent, "Live: Slurm commands at once")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    app->add_option("--max-per-minute", max_per_minute, "Live: commands started per minute (0: no budget)")
        ->check(CLI::Range(0, 100000))
        ->capture_default_str();
    app->add_option("--log-file", log_files, "Live: DAEMON=PATH of a Slurm log for the logs topic");
    app->add_option("--fabric-root", fabric_root,
                    "Live: read the fabric topic's sys, proc and sys/fs/cgroup under this directory "
                    "instead of / (a synthetic tree in tests)");
    app->add_option("--audit-log", audit_log, "Append one JSON line per tool call to this file ('-': stderr)");
    app->add_option("--max-rows", max_rows, "Rows per answer at most")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
  }

  // Builds the back-end (never null), or says why the flags do not make one.
  slurm_rca::base::Result<std::unique_ptr<Backend>> Make() const {
    using slurm_rca::base::Status;
    if (!replay.empty()) {
      auto opened = ReplayBackend::Open(replay);
      if (!opened.ok()) return opened.status();
      std::unique_ptr<ReplayBackend> b = std::move(opened).value();
      if (offset >= 0) b->SetOffset(offset);
      return std::unique_ptr<Backend>(std::move(b));
    }
    LiveOptions o;
    o.executor.trusted_dirs = Split(trusted_dirs, ':');
    for (const std::string& d : o.executor.trusted_dirs) {
      if (d.front() != '/') {
        return Status::InvalidArgument("--trusted-dirs entry '" + d + "' is not absolute");
      }
    }
    o.executor.timeout = std::chrono::milliseconds(static_cast<long>(timeout * 1000));
    if (!slurm_conf.empty()) o.executor.slurm_conf = slurm_conf;
    o.clusters = Split(clusters, ',');
    o.cache_ttl_seconds = cache_ttl;
    o.max_concurrent = max_concurrent;
    o.max_per_minute = max_per_minute;
    o.metrics = metrics;
    for (const std::string& lf : log_files) {
      size_t eq = lf.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == lf.size()) {
        return Status::InvalidArgument("--log-file takes DAEMON=PATH, got '" + lf + "'");
      }
      o.log_files[lf.substr(0, eq)] = lf.substr(eq + 1);
    }
    if (!fabric_root.empty()) {
      if (fabric_root.front() != '/') {
        return Status::InvalidArgument("--fabric-root '" + fabric_root + "' is not absolute");
      }
      o.fabric = FabricOptions{.sys_root = fabric_root + "/sys",
                               .proc_root = fabric_root + "/proc",
                               .cgroup_root = fabric_root + "/sys/fs/cgroup"};
    }
    return std::unique_ptr<Backend>(std::make_unique<LiveBackend>(std::move(o)));
  }
};

// A ToolContext for the one-shot verbs: no progress, logs to stderr.
// serve --http's limits (HttpOptions, mcp/protocol/http_transport.h), with their defaults.
struct HttpLimits {
  int workers = -1;  // unset: 8, or 0 on the replay back-end
  // One event thread beside the worker pool: on two cores a second one cost 36-37 us of CPU a
  // replayed call against 23-26 us (mcp_bench c8/c64, bench/README.md), contending with the
  // first and with the clients for the cores.
  int event_threads = 1;
  double header_timeout = 10;
  double idle_timeout = 60;
  std::size_t max_connections = 4096;
  std::size_t max_per_address = 2048;

  void Add(CLI::App* serve) {
    serve->add_option("--http-workers", workers,
                      "HTTP: tool calls run at once (a bounded pool; more wait in order; the "
                      "event loop that reads and writes every connection is one more thread); 0: "
                      "on the event loop itself. Default: 8, and 0 with --replay, whose reads "
                      "never wait")
        ->check(CLI::Range(0, 256));
    serve->add_option("--http-threads", event_threads,
                      "HTTP: threads running the event loop that reads, screens and writes every "
                      "connection (each connection is served by one at a time), beside the "
                      "--http-workers pool. Raise it only when the event thread uses a whole core "
                      "and more cores are free")
        ->check(CLI::Range(1, 64))
        ->capture_default_str();
    serve->add_option("--http-header-timeout", header_timeout,
                      "HTTP: seconds a request's header may take from its first byte, and then "
                      "its body again; a slower connection is closed (slowloris)")
        ->check(CLI::Range(0.01, 3600.0))
        ->capture_default_str();
    serve->add_option("--http-idle-timeout", idle_timeout,
                      "HTTP: seconds a kept-alive connection may wait for its next request, and "
                      "a response may wait to be read, before the connection is closed")
        ->check(CLI::Range(0.01, 86400.0))
        ->capture_default_str();
    serve->add_option("--max-connections", max_connections,
                      "HTTP: connections served at once; past it a new one gets 503 with "
                      "Retry-After at once (lowered to fit the open-file limit)")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
        ->capture_default_str();
    serve->add_option("--max-connections-per-address", max_per_address,
                      "HTTP: connections served at once from one client address (every local "
                      "agent shares 127.0.0.1); past it 503 as above")
        ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
        ->capture_default_str();
  }

  // Raises the open-file limit to what max_connections takes (a connection is one descriptor;
  // the back-end's reads, the audit log and the listeners take a few more), or lowers
  // max_connections to what the hard limit allows, so that a client past it gets a 503 rather
  // than waiting in the kernel's backlog for a descriptor. What it lowered, for stderr; "" if
  // nothing.
  std::string FitToFileLimit() {
    constexpr rlim_t kReserve = 64;
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return "";
    const rlim_t need = static_cast<rlim_t>(max_connections) + kReserve;
    if (limit.rlim_cur >= need) return "";
    const rlim_t raised = limit.rlim_max == RLIM_INFINITY ? need : std::min(need, limit.rlim_max);
    if (raised > limit.rlim_cur) {
      rlimit wanted = limit;
      wanted.rlim_cur = raised;
      if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) limit.rlim_cur = raised;
    }
    if (limit.rlim_cur >= need) return "";
    const std::size_t fits =
        limit.rlim_cur > kReserve ? static_cast<std::size_t>(limit.rlim_cur - kReserve) : 1;
    const std::string was = std::to_string(max_connections);
    max_connections = fits;
    max_per_address = std::min(max_per_address, fits);
    return "--max-connections " + was + " lowered to " + std::to_string(fits) +
           ": the open-file limit is " + std::to_string(limit.rlim_cur) + " (ulimit -n)";
  }

  void ApplyTo(HttpOptions& h, bool replay) const {
    h.workers = workers >= 0 ? workers : replay ? 0 : 8;
    h.event_threads = event_threads;
    h.header_timeout = Millis(header_timeout);
    h.idle_timeout = Millis(idle_timeout);
    h.max_connections = max_connections;
    h.max_connections_per_address = max_per_address;
  }

 private:
  static std::chrono::milliseconds Millis(double seconds) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
  }
};

class CliContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string& level, const Json& data) override {
    std::cerr << "slurm-mcp: [" << level << "] " << data.dump() << "\n";
  }
  bool Cancelled() const override { return false; }
};

std::string Cell(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Rows as an aligned table, columns in the order of the first row.
std::string Table(const Json& rows, const std::string& topic) {
  if (!rows.is_array() || rows.empty()) return "(no rows)\n";
  std::vector<std::string> columns;
  if (const Topic* t = FindTopic(topic)) {
    for (const Column& c : t->columns) {
      if (rows[0].contains(c.name)) columns.push_back(c.name);
    }
  }
  if (columns.empty()) {
    for (const auto& [key, value] : rows[0].items()) columns.push_back(key);
  }
  std::vector<size_t> width;
  for (const std::string& c : columns) width.push_back(c.size());
  for (const Json& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      width[i] = std::max(width[i], std::min<size_t>(Cell(row.value(columns[i], Json(""))).size(), 40));
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string c = cells[i].substr(0, 40);
      out += c + (i + 1 < cells.size() ? std::string(width[i] - c.size() + 2, ' ') : "");
    }
    return out + "\n";
  };
  std::string out = line(columns);
  for (const Json& row : rows) {
    std::vector<std::string> cells;
    for (const std::string& c : columns) cells.push_back(Cell(row.value(c, Json(""))));
    out += line(cells);
  }
  return out;
}

// A tool result for people: evidence label, then a table (or the text of text topics).
std::string Human(const ToolResult& result) {
  const ToolResult& r = result.Fields();
  if (r.is_error || !r.structured) return ResultText(r);
  const Json& s = *r.structured;
  auto section = [](const Json& e) {
    std::string out = "[" + e.value("source", "") + ", " + e.value("evidence_time", "") +
                      (e.value("cached", false) ? ", cached" : "") + "] " + e.value("topic", "") +
                      ": " + e.value("outcome", "") + "\n";
    if (e.value("outcome", "") != "ok") return out + "NO EVIDENCE: " + e.value("cause", "") + "\n";
    if (e.contains("rows") && !e["rows"].empty()) {
      out += Table(e["rows"], e.value("topic", ""));
    } else if (e.contains("text")) {
      out += e["text"].get<std::string>();
    } else {
      out += "(no rows)\n";
    }
    if (e.value("truncated", false)) out += "[truncated: " + e.value("hint", "") + "]\n";
    return out;
  };
  if (s.contains("sections")) {
    std::string out;
    for (const Json& e : s["sections"]) out += section(e) + "\n";
    return out;
  }
  if (s.contains("outcome")) return section(s);
  return ResultText(r);
}

int RunTool(const std::vector<Tool>& tools, const std::string& name, const Json& args, bool json) {
  for (const Tool& t : tools) {
    if (t.name != name) continue;
    CliContext context;
    const ToolResult result = t.run(args, context);
    const ToolResult& r = result.Fields();
    if (json) {
      Json out = {{"content", r.content}, {"isError", r.is_error}};
      if (r.structured) out["structuredContent"] = *r.structured;
      std::cout << out.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    } else {
      std::cout << Human(r);
    }
    return r.is_error ? 1 : 0;
  }
  return Usage("no tool " + name);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "slurm-mcp: a read-only MCP server for Slurm. Tools: slurm_overview, slurm_query, "
      "slurm_describe.\nEvery Slurm command it runs is checked by the guard's allowlist first "
      "(slurm-guard policy)."};
  app.set_version_flag("--version", slurm_rca::base::VersionLine("slurm-mcp"),
                       "Print the version and the git revision built from, and exit");
  app.require_subcommand(1);
  BackendFlags flags;
  bool json = false;

  CLI::App* serve = app.add_subcommand("serve", "Serve MCP over stdio or Streamable HTTP");
  bool stdio = false;
  std::string http;
  std::string token_file;
  bool no_sessions = false;
  size_t max_body = 1 << 20;
  bool fixtures = false;
  auto* stdio_flag = serve->add_flag("--stdio", stdio, "Newline-delimited JSON-RPC on stdin/stdout");
  auto* http_opt = serve->add_option("--http", http, "HOST:PORT to listen on (loopback by default)");
  stdio_flag->excludes(http_opt);
  serve->add_option("--token-file", token_file, "HTTP: require 'Authorization: Bearer <file contents>'");
  serve->add_flag("--no-sessions", no_sessions, "HTTP: issue no Mcp-Session-Id");
  serve->add_option("--max-body", max_body, "HTTP: request body limit in bytes")
      ->check(CLI::Range(size_t{1024}, size_t{64} << 20))
      ->capture_default_str();
  HttpLimits limits;
  limits.Add(serve);
#ifndef SLURM_MCP_DEFAULT_SKILLS_DIR
#define SLURM_MCP_DEFAULT_SKILLS_DIR ""
#endif
  // The runbooks installed beside the binary (/usr/bin/slurm-mcp: /usr/share/slurm-rca/skills),
  // else the source tree's; the help names no build machine's path (the man page is made from it).
  std::optional<std::string> installed = slurm_rca::base::InstalledDataDir();
  std::string skills_dir = installed ? *installed + "/skills" : SLURM_MCP_DEFAULT_SKILLS_DIR;
  auto* skills_opt = serve->add_option(
      "--skills", skills_dir,
      "Runbooks served read-only as skill://<name>/SKILL.md resources, as prompts (both eras) "
      "and as the 2026-07-28 Skills extension ('' serves none; default: "
      "BIN/../share/slurm-rca/skills, /usr/share/slurm-rca/skills when installed, else the "
      "source tree's skills/)");
  std::string metrics_addr;
  serve
      ->add_option("--metrics", metrics_addr,
                   "Serve Prometheus metrics (text format 0.0.4) at GET http://ADDR/metrics on a "
                   "listener of its own; ADDR is HOST:PORT, or :PORT for 127.0.0.1 (off unless "
                   "given)")
      ->type_name("ADDR");
  serve->add_flag("--conformance-fixtures", fixtures,
                  "Also register the conformance suite's test tools (never in production)");
  flags.Add(serve);
  // gpu_idle's sampling: off unless an interval is given (it starts processes and HTTP requests
  // on a schedule, which a read-only server must not do unasked).
  std::int64_t gpu_interval = 0;
  std::string gpu_node;
  std::vector<std::string> dcgm_hosts;
  GpuIdleOptions idle;
  serve->add_option("--gpu-sample-interval", gpu_interval,
                    "gpu_idle: seconds between GPU samples (0: off; the seed's default is 120)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3600}))
      ->capture_default_str();
  serve->add_option("--gpu-node-name", gpu_node,
                    "gpu_idle: the Slurm node name of this host's nvidia-smi samples (default: "
                    "the host name, when no --dcgm-host is given)");
  serve->add_option("--dcgm-host", dcgm_hosts,
                    "gpu_idle: [NODE=]HOST[:PORT] of a dcgm-exporter to scrape "
                    "(http://HOST:PORT/metrics, port 9400 by default); repeatable, the allowlist");
  serve->add_option("--gpu-idle-window", idle.window, "gpu_idle: seconds judged")
      ->capture_default_str();
  serve->add_option("--gpu-idle-warmup", idle.warmup, "gpu_idle: seconds after a job's start not judged")
      ->capture_default_str();
  serve->add_option("--gpu-idle-max-gap", idle.max_sample_gap,
                    "gpu_idle: a longer hole between samples is an outage that resets history")
      ->capture_default_str();
  serve->add_option("--gpu-idle-min-samples", idle.min_samples, "gpu_idle: observations needed per node")
      ->capture_default_str();

  CLI::App* tools_cmd = app.add_subcommand("tools", "List the tools and the size of tools/list");
  tools_cmd->add_flag("--json", json, "The tools/list result as JSON");
  tools_cmd->add_flag("--conformance-fixtures", fixtures, "Include the conformance fixture tools");

  CLI::App* overview = app.add_subcommand("overview", "Nodes, queue and diagnostics, once");
  overview->add_flag("--json", json, "The tool result as JSON");
  flags.Add(overview);

  std::string topic;
  std::vector<std::string> filters;
  CLI::App* query = app.add_subcommand("query", "One topic, once");
  query->add_option("topic", topic, "Topic (slurm-mcp describe TOPIC)")->required();
  query->add_option("--filter", filters, "NAME=VALUE, repeatable");
  query->add_flag("--json", json, "The tool result as JSON");
  flags.Add(query);

  CLI::App* describe = app.add_subcommand("describe", "A topic's filters, columns and notes");
  describe->add_option("topic", topic, "Topic")->required();
  describe->add_flag("--json", json, "The tool result as JSON");

  std::string call_http;
  std::string call_tool;
  std::string call_args = "{}";
  CLI::App* call = app.add_subcommand(
      "call", "Call a tool on a running slurm-mcp over HTTP, with the C++ MCP client");
  call->add_option("--http", call_http, "HOST:PORT of the server")->required();
  call->add_option("--token-file", token_file, "Send 'Authorization: Bearer <file contents>'");
  call->add_option("tool", call_tool, "Tool name")->required();
  call->add_option("--args", call_args, "Tool arguments as a JSON object")->capture_default_str();
  call->add_flag("--json", json, "The tool result as JSON");
  std::string call_era = "auto";
  call->add_option("--era", call_era,
                   "MCP era: auto (2026-07-28 when the server speaks it, else the 2025 "
                   "handshake), modern or legacy")
      ->check(CLI::IsMember({"auto", "modern", "legacy"}))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Usage(e.what());
  }

  // serve --http: SIGINT and SIGTERM stop the server cleanly. A thread waits for them and calls
  // Stop(), which must not run inside a signal handler; they are blocked here, before any thread
  // starts, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (*serve && !http.empty()) pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The allowlist checks its own examples before anything runs.
  slurm_rca::guard::Guard self_test_guard(slurm_rca::guard::GuardOptions{.clusters = {"rca"}});
  if (auto failures = slurm_rca::guard::SelfTest(self_test_guard); !failures.empty()) {
    std::cerr << "slurm-mcp: the allowlist failed its self-test: " << failures.front() << "\n";
    return 70;
  }

  if (*call) {
    slurm_rca::base::Result<ListenAddress> address = ParseListenAddress(call_http);
    if (!address.ok()) return Usage("--http " + address.status().message());
    const std::string& host = address->host;
    const int port = address->port;
    Json args = Json::parse(call_args, nullptr, false);
    if (args.is_discarded() || !args.is_object()) return Usage("--args must be a JSON object");
    std::optional<std::string> token;
    if (!token_file.empty()) {
      std::ifstream in(token_file);
      if (!in) return Usage("cannot read --token-file " + token_file);
      std::string t((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
      token = t;
    }
    Client client(std::make_unique<HttpClientTransport>(host, port, "/mcp",
                                                        token));
    const EraMode era = call_era == "modern"   ? EraMode::kModern
                        : call_era == "legacy" ? EraMode::kLegacy
                                               : EraMode::kAuto;
    auto connected = client.Connect("slurm-mcp call", slurm_rca::base::Version(), era);
    if (!connected.ok()) {
      std::cerr << "slurm-mcp: cannot connect: " << connected.status().ToString() << "\n";
      return 1;
    }
    auto result = client.CallTool(call_tool, args);
    if (!result.ok()) {
      std::cerr << "slurm-mcp: " << result.status().ToString() << "\n";
      return 1;
    }
    if (json) {
      Json out = {{"content", result->content}, {"isError", result->is_error}};
      if (result->structured) out["structuredContent"] = *result->structured;
      std::cout << out.dump() << "\n";
    } else {
      std::cout << result->Text() << "\n";
    }
    return result->is_error ? 1 : 0;
  }

  SurfaceOptions surface;
  surface.conformance_fixtures = fixtures;
  surface.caps.max_rows = flags.max_rows;

  if (*tools_cmd || *describe) {
    std::vector<Tool> tools = BuildTools(surface);  // no back-end needed
    if (*describe) return RunTool(tools, kDescribeTool, {{"topic", topic}}, json);
    Json list = Json::array();
    for (const Tool& t : tools) list.push_back(t.Describe());
    Json result = {{"tools", list}};
    if (json) {
      std::cout << result.dump() << "\n";
      return 0;
    }
    for (const Tool& t : tools) std::cout << t.name << " - " << t.title << "\n";
    std::cout << "tools/list result: " << tools.size() << " tools, " << result.dump().size()
              << " bytes of JSON\n";
    return 0;
  }

  // serve --metrics: the counters exist before the back-end, which counts its reads into them.
  std::unique_ptr<Metrics> metrics;
  ListenAddress metrics_address;
  if (*serve && !metrics_addr.empty()) {
    slurm_rca::base::Result<ListenAddress> parsed = ParseListenAddress(metrics_addr);
    if (!parsed.ok()) return Usage("--metrics " + parsed.status().message());
    metrics_address = *parsed;
    metrics = std::make_unique<Metrics>(slurm_rca::base::Version(), slurm_rca::base::Revision());
    flags.metrics = metrics.get();
    surface.metrics = metrics.get();
  }

  slurm_rca::base::Result<std::unique_ptr<Backend>> made = flags.Make();
  if (!made.ok()) return Usage(made.status().message());
  std::unique_ptr<Backend> backend = std::move(made).value();
  surface.backend = backend.get();
  std::unique_ptr<AuditLog> audit;
  if (!flags.audit_log.empty()) {
    if (flags.audit_log == "-") {
      audit = AuditLog::Stderr();
    } else {
      auto opened = AuditLog::Open(flags.audit_log);
      if (!opened.ok()) return Usage(opened.status().message());
      audit = std::move(opened).value();
    }
    surface.audit = [log = audit.get()](const Json& entry) { log->Record(entry); };
  }
  std::unique_ptr<GpuSampleStore> gpu_store;
  std::unique_ptr<GpuSampler> sampler;
  if (*serve && gpu_interval > 0) {
    if (!flags.replay.empty()) return Usage("--gpu-sample-interval needs the live back-end, not --replay");
    idle.interval = gpu_interval;
    if (slurm_rca::base::Status s = ValidateGpuIdleOptions(idle); !s.ok()) {
      return Usage("gpu_idle: " + s.message() + " (interval " + std::to_string(idle.interval) +
                   ", max gap " + std::to_string(idle.max_sample_gap) + ", window " +
                   std::to_string(idle.window) + ")");
    }
    GpuSamplerOptions so;
    so.interval = gpu_interval;
    so.dcgm_timeout = std::min<std::int64_t>(5, gpu_interval);
    for (const std::string& spec : dcgm_hosts) {
      slurm_rca::base::Result<DcgmHost> h = ParseDcgmHost(spec);
      if (!h.ok()) return Usage(h.status().message());
      so.dcgm.push_back(*h);
    }
    so.local_node = gpu_node;
    if (so.local_node.empty() && so.dcgm.empty()) {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) == 0) so.local_node = host;
      so.local_node = so.local_node.substr(0, so.local_node.find('.'));
    }
    if (!so.local_node.empty() && !ParseDcgmHost(so.local_node).ok()) {
      return Usage("--gpu-node-name '" + so.local_node + "' is not a safe node name");
    }
    gpu_store = std::make_unique<GpuSampleStore>(512);
    sampler = std::make_unique<GpuSampler>(backend.get(), gpu_store.get(), so);
    surface.gpu_samples = gpu_store.get();
    surface.gpu_idle = idle;
    surface.gpu_sampling = [s = sampler.get()] { return s->Describe(); };
  }
  if (*overview) return RunTool(BuildTools(surface), kOverviewTool, Json::object(), json);
  if (*query) {
    Json f = Json::object();
    for (const std::string& kv : filters) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return Usage("--filter takes NAME=VALUE, got '" + kv + "'");
      f[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    Json args = {{"topic", topic}};
    if (!f.empty()) args["filters"] = f;
    return RunTool(BuildTools(surface), kQueryTool, args, json);
  }

  // serve
  if (!stdio && http.empty()) return Usage("serve needs --stdio or --http HOST:PORT");
  slurm_rca::server::ServerSurface assembly;
  assembly.tools = surface;
  assembly.skills_dir = skills_dir;
  assembly.version = slurm_rca::base::Version();
  assembly.instructions =
      "Read-only view of a Slurm cluster (" + backend->Label() +
      "). Start with slurm_overview; use slurm_describe to learn a topic before slurm_query. "
      "A result marked NO EVIDENCE means the read failed or timed out: that is a symptom, not an "
      "empty cluster.";
  slurm_rca::server::AssembledServer assembled = slurm_rca::server::AssembleServer(assembly);
  // An explicit --skills must work; the built-in default may be absent (an installed binary).
  if (!assembled.skills_error.empty() && skills_opt->count() > 0) {
    return Usage(assembled.skills_error);
  }
  if (!assembled.skills_error.empty()) {
    std::cerr << "slurm-mcp: serving no skills: " << assembled.skills_error << "\n";
  }
  for (const std::string& w : assembled.skills_not_served) {
    std::cerr << "slurm-mcp: skill not served: " << w << "\n";
  }
  Server server(std::move(assembled.options));
  std::unique_ptr<MetricsServer> metrics_server;
  if (metrics) {
    metrics_server = std::make_unique<MetricsServer>(*metrics);
    slurm_rca::base::Status s = metrics_server->Start(metrics_address.host, metrics_address.port);
    if (!s.ok()) {
      std::cerr << "slurm-mcp: " << s.message() << "\n";
      return 1;
    }
    std::cerr << "slurm-mcp: metrics (Prometheus text): http://" << UrlHost(metrics_address.host)
              << ":"
              << metrics_server->port() << "/metrics\n";
  }
  if (sampler) sampler->Start();
  if (stdio) {
    std::signal(SIGPIPE, SIG_IGN);
    int still_running = 0;
    const int rc = RunStdio(server, 0, 1, {}, &still_running);
    if (still_running > 0) {
      // A call that ignored its cancellation still runs and uses the server: end the process
      // without destroying it (the audit log writes each record whole, so nothing is pending).
      std::cerr << "slurm-mcp: exiting with " << still_running
                << " call(s) still running after cancellation\n";
      std::cerr.flush();
      std::_Exit(rc);
    }
    return rc;
  }
  HttpOptions h;
  slurm_rca::base::Result<ListenAddress> listen = ParseListenAddress(http);
  if (!listen.ok()) return Usage("--http " + listen.status().message());
  h.host = listen->host;
  h.port = listen->port;
  h.sessions = !no_sessions;
  // GET /ready: per program, whether its last read succeeded; reads nothing (evidence.h).
  h.ready = [b = backend.get()] { return ReadinessJson(*b); };
  h.max_body_bytes = max_body;
  h.metrics = metrics.get();
  if (const std::string lowered = limits.FitToFileLimit(); !lowered.empty()) {
    std::cerr << "slurm-mcp: " << lowered << "\n";
  }
  limits.ApplyTo(h, !flags.replay.empty());
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) return Usage("cannot read --token-file " + token_file);
    std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    if (token.size() < 16) return Usage("the token in " + token_file + " is shorter than 16 bytes");
    h.token = token;
  }
  std::signal(SIGPIPE, SIG_IGN);
  HttpTransport transport(server, h);
  // The stopper is joined before the transport goes: Stop() makes Serve() return on this thread
  // while the stopper is still inside Stop() (a detached stopper used the destroyed transport,
  // which ASan caught in CI). When Serve() returns for another reason, the stopper is woken with
  // a signal of its own and does nothing.
  std::atomic<bool> served{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    if (!served) transport.Stop();
  });
  slurm_rca::base::Result<int> r = transport.Serve([&](int port) {
    std::cerr << "slurm-mcp: serving MCP on http://" << UrlHost(h.host) << ":" << port << "/mcp ("
              << backend->Label() << ")\n"
              << "slurm-mcp: readiness (outside MCP, reads nothing): GET " << h.ready_path << "\n";
  });
  served = true;
  pthread_kill(stopper.native_handle(), SIGTERM);  // pending, and dropped, if it no longer waits
  stopper.join();
  if (!r.ok()) {
    std::cerr << "slurm-mcp: " << r.status().message() << "\n";
    return 1;
  }
  return 0;
}

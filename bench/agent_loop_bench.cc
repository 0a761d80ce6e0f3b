// agent_loop_bench: the agent loop's own overhead per turn, without a model.
//
//   build/bin/agent_loop_bench [--turns N] [--runs R] [--result-bytes B] [--mcp-tasks T]
//
// Prints, per model turn, the wall time of RunAgent with the scripted back-end (one tool call a
// turn whose result is B bytes, then submit_diagnosis), with no transcript and with a JSON Lines
// transcript to a file; and the round trip of the OpenAI-compatible back-end to FakeModelServer
// (a local test double) on loopback, i.e. what the HTTP path adds before any model time.
//
// Then the MCP side of a replayed task, with the C++ mcp::Client against slurm-mcp serving a
// recorded bundle: over stdio, as `rca-bench run` does it (a session per task, OpenSession: open
// the bundle, start and initialize the child, tools/list, four tool calls, stop), and over HTTP
// (one server, a client per task); and the round trip of one ping and one slurm_query on a
// connected client, which is the client's own share. Figures, not a test: it never fails on speed.
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "agents/llm/fake_model_server.h"
#include "agents/llm/loop.h"
#include "agents/llm/scripted_backend.h"
#include "agents/llm/transcript.h"
#include "mcp/protocol/client.h"
#include "scenarios/live/mcp_child.h"
#include "scenarios/live/process.h"
#include "session/session.h"

namespace {

using namespace slurm_rca::agents;
using slurm_rca::base::Result;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

class FixedTools : public ToolSet {
 public:
  explicit FixedTools(size_t bytes) : text_(bytes, 'x') {}
  std::vector<ToolSpec> Specs() const override {
    return {{"slurm_query", "Reads a topic.", {{"type", "object"}}}};
  }
  ToolResult Call(const std::string&, const Json&) override { return {text_, false}; }

 private:
  std::string text_;
};

Json Script(int turns) {
  Json replies = Json::array();
  for (int i = 0; i < turns - 1; ++i) {
    replies.push_back({{"text", "looking"},
                       {"tool_calls", {{{"name", "slurm_query"}, {"arguments", {{"topic", "queue"}}}}}}});
  }
  replies.push_back({{"tool_calls",
                      {{{"name", "submit_diagnosis"},
                        {"arguments", {{"root_cause", "db.mysql"}, {"confidence", 0.8}}}}}}});
  return {{"replies", replies}};
}

// The reads of a graphwalk-like task: the overview, then three topics.
const std::vector<std::pair<std::string, Json>> kTaskCalls = {
    {"slurm_overview", Json::object()},
    {"slurm_query", {{"topic", "queue"}}},
    {"slurm_query", {{"topic", "nodes"}}},
    {"slurm_query", {{"topic", "diagnostics"}}}};

// Phases of one task's MCP side, in seconds, summed over tasks.
struct TaskPhases {
  double start = 0, list = 0, calls = 0, stop = 0;
  double slowest = 0;  // the longest task
  int tasks = 0;
  void Add(Clock::time_point t0, Clock::time_point t1, Clock::time_point t2, Clock::time_point t3,
           Clock::time_point t4) {
    auto s = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    start += s(t0, t1);
    list += s(t1, t2);
    calls += s(t2, t3);
    stop += s(t3, t4);
    slowest = std::max(slowest, s(t0, t4));
    ++tasks;
  }
  void Print(const char* what) const {
    const double ms = 1e3 / tasks;
    std::printf(
        "  %-7s %7.2f ms/task: start+initialize %6.2f, tools/list %5.3f, %zu calls %6.3f "
        "(%5.3f each), stop %6.2f; slowest task %.1f ms  (%d tasks)\n",
        what, ms * (start + list + calls + stop), ms * start, ms * list, kTaskCalls.size(),
        ms * calls, ms * calls / kTaskCalls.size(), ms * stop, 1e3 * slowest, tasks);
  }
};

bool DoTaskCalls(slurm_rca::mcp::Client& client) {
  for (const auto& [tool, args] : kTaskCalls) {
    auto r = client.CallTool(tool, args);
    if (!r.ok() || r->is_error) {
      std::fprintf(stderr, "agent_loop_bench: %s: %s\n", tool.c_str(),
                   r.ok() ? r->Text().substr(0, 200).c_str() : r.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

// CPU seconds (user + system) this process has used.
double OwnCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// CPU seconds (user + system) process `pid` has used, from /proc (clock-tick resolution).
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Per ping and per slurm_query (queue) on a connected client: wall time, this process's CPU
// (the client) and the server's. Wall time moves with the machine's load; CPU much less.
bool PrintRoundTrips(const char* what, slurm_rca::mcp::Client& client, pid_t server, int calls) {
  for (bool query : {false, true}) {
    const auto start = Clock::now();
    const double own = OwnCpuSeconds();
    const double theirs = CpuSeconds(server);
    for (int i = 0; i < calls; ++i) {
      if (!query && !client.Ping().ok()) return false;
      if (query) {
        auto r = client.CallTool("slurm_query", {{"topic", "queue"}});
        if (!r.ok() || r->is_error) return false;
      }
    }
    const double us = 1e6 / calls;
    std::printf("  %-7s %-18s %7.1f us wall, CPU %6.1f us client, %6.1f us server  (%d calls)\n",
                what, query ? "slurm_query queue:" : "ping:", us * Seconds(start),
                us * (OwnCpuSeconds() - own), us * (CpuSeconds(server) - theirs), calls);
  }
  return true;
}

// A port the kernel had free a moment ago.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

std::unique_ptr<slurm_rca::mcp::Client> ConnectHttp(int port) {
  auto client = std::make_unique<slurm_rca::mcp::Client>(
      std::make_unique<slurm_rca::mcp::HttpClientTransport>("127.0.0.1", port));
  if (!client->Initialize("agent_loop_bench", "0.1.0").ok()) return nullptr;
  return client;
}

// The MCP side of `tasks` replayed tasks over stdio and over HTTP; false on any failure.
bool McpFigures(const std::string& slurm_mcp, const std::string& bundle, int tasks,
                int round_trips) {
  namespace live = slurm_rca::live;
  namespace session = slurm_rca::session;
  // A replay session as rca-bench run opens one per task (session/session.h): the bundle
  // read in-process for raw reads, and the stdio child serving it.
  session::SessionOptions session_options;
  session_options.slurm_mcp = slurm_mcp;
  session_options.bundle_dir = bundle;
  session_options.offset_s = 120;
  const std::vector<std::string> replay =
      session::ReplayServeArgs(bundle, session_options.offset_s);
  std::printf("MCP client to slurm-mcp on replay (%s), %d tasks of tools/list + %zu calls:\n",
              std::filesystem::path(bundle).filename().c_str(), tasks, kTaskCalls.size());

  TaskPhases stdio;
  for (int i = 0; i < tasks; ++i) {
    auto t0 = Clock::now();
    Result<std::unique_ptr<Session>> opened = session::OpenSession(session_options);
    if (!opened.ok()) {
      std::fprintf(stderr, "agent_loop_bench: %s\n", opened.status().ToString().c_str());
      return false;
    }
    std::unique_ptr<Session> task = std::move(opened).value();
    auto t1 = Clock::now();
    if (!task->client()->ListTools().ok()) return false;
    auto t2 = Clock::now();
    if (!DoTaskCalls(*task->client())) return false;
    auto t3 = Clock::now();
    task.reset();
    stdio.Add(t0, t1, t2, t3, Clock::now());
  }
  stdio.Print("stdio:");
  {
    auto started = live::McpChild::Start(slurm_mcp, replay);
    if (!started.ok()) return false;
    if (!PrintRoundTrips("stdio:", (*started)->client(), (*started)->pid().pid, round_trips)) {
      return false;
    }
  }

  const int port = FreePort();
  std::vector<std::string> argv = {slurm_mcp, "serve", "--http",
                                   "127.0.0.1:" + std::to_string(port)};
  argv.insert(argv.end(), replay.begin(), replay.end());
  live::SpawnResult spawned =
      live::SpawnDaemon(argv, {"PATH=/usr/bin:/bin", "LANG=C"}, "/dev/null");
  if (!spawned.id) {
    std::fprintf(stderr, "agent_loop_bench: %s\n", spawned.error.c_str());
    return false;
  }
  bool ok = false;
  for (int i = 0; i < 100 && !ok; ++i) {
    ok = ConnectHttp(port) != nullptr;
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  TaskPhases http;
  for (int i = 0; ok && i < tasks; ++i) {
    auto t0 = Clock::now();
    std::unique_ptr<slurm_rca::mcp::Client> client = ConnectHttp(port);
    auto t1 = Clock::now();
    ok = client && client->ListTools().ok();
    auto t2 = Clock::now();
    ok = ok && DoTaskCalls(*client);
    auto t3 = Clock::now();
    client.reset();  // DELETE ends the session
    http.Add(t0, t1, t2, t3, Clock::now());
  }
  if (ok) {
    http.Print("http:");
    std::unique_ptr<slurm_rca::mcp::Client> client = ConnectHttp(port);
    ok = client && PrintRoundTrips("http:", *client, spawned.id->pid, round_trips);
  }
  live::StopProcess(*spawned.id, std::chrono::seconds(5));
  if (!ok) {
    std::fprintf(stderr, "agent_loop_bench: slurm-mcp over HTTP on port %d failed\n", port);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agent_loop_bench: the agent loop's overhead per turn (scripted back-end)"};
  int turns = 30;
  int runs = 200;
  size_t result_bytes = 2000;
  int http_requests = 200;
  int mcp_tasks = 50;
  int mcp_round_trips = 1000;
  std::string slurm_mcp = slurm_rca::live::SiblingProgram("slurm-mcp");
  std::string bundle = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/S01-accounting-backend-stall";
  app.add_option("--turns", turns, "Model turns per run")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--runs", runs, "Runs per figure")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--result-bytes", result_bytes, "Bytes of each tool result")
      ->capture_default_str();
  app.add_option("--http-requests", http_requests, "Requests to the local fake model server")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  app.add_option("--mcp-tasks", mcp_tasks, "Replayed tasks per MCP transport (0: no MCP figures)")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  app.add_option("--mcp-round-trips", mcp_round_trips, "Pings, then queries, on one MCP client")
      ->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--slurm-mcp", slurm_mcp, "The slurm-mcp to measure against")
      ->capture_default_str();
  app.add_option("--bundle", bundle, "The recorded bundle it serves")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "agent_loop_bench: %s (see agent_loop_bench --help)\n", e.what());
    return 2;
  }

  Result<std::unique_ptr<Backend>> backend = MakeScriptedBackend(Script(turns), "bench");
  if (!backend.ok()) {
    std::fprintf(stderr, "agent_loop_bench: %s\n", backend.status().ToString().c_str());
    return 1;
  }
  FixedTools tools(result_bytes);
  AgentSpec spec;
  spec.budget.max_turns = turns + 1;
  spec.budget.max_tokens = int64_t{1} << 60;

  {
    // Other work on the machine skews every figure below.
    std::ifstream loadavg("/proc/loadavg");
    std::string one, five, fifteen;
    loadavg >> one >> five >> fifteen;
    std::printf("agent_loop_bench: load average %s %s %s at the start\n", one.c_str(),
                five.c_str(), fifteen.c_str());
  }
  std::printf("agent loop, scripted back-end: %d turns a run, %zu-byte tool results, %d runs\n",
              turns, result_bytes, runs);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("agent_loop_bench." + std::to_string(getpid()) +
                                                 ".jsonl")).string();
  for (bool with_transcript : {false, true}) {
    int total_turns = 0;
    auto start = Clock::now();
    for (int i = 0; i < runs; ++i) {
      std::unique_ptr<Transcript> t;
      if (with_transcript) {
        Result<std::unique_ptr<Transcript>> opened = Transcript::Open(path);
        if (!opened.ok()) {
          std::fprintf(stderr, "agent_loop_bench: %s\n", opened.status().ToString().c_str());
          return 1;
        }
        t = std::move(opened).value();
      }
      RunResult r = RunAgent(**backend, tools, spec, "jobs pend on node1", t.get());
      if (!r.finished) {
        std::fprintf(stderr, "agent_loop_bench: run ended with %s\n", r.end_reason.c_str());
        return 1;
      }
      total_turns += r.turns;
    }
    double s = Seconds(start);
    std::printf("  %-28s %8.1f us/turn  (%d turns in %.3f s)\n",
                with_transcript ? "with transcript (file):" : "no transcript:",
                1e6 * s / total_turns, total_turns, s);
  }
  std::filesystem::remove(path);

  if (http_requests > 0) {
    FakeModelServer server;
    if (!server.ok()) {
      std::fprintf(stderr, "agent_loop_bench: the fake model server did not start\n");
      return 1;
    }
    BackendConfig cfg;
    cfg.kind = "openai";
    cfg.model = "bench";
    cfg.base_url = server.base_url() + "/v1";
    cfg.api_key_env = "AGENT_LOOP_BENCH_KEY";
    Result<std::unique_ptr<Backend>> http = MakeBackend(cfg, [](const std::string& name) {
      return name == "AGENT_LOOP_BENCH_KEY" ? std::optional<std::string>("bench") : std::nullopt;
    });
    if (!http.ok()) {
      std::fprintf(stderr, "agent_loop_bench: %s\n", http.status().ToString().c_str());
      return 1;
    }
    const std::string body = FakeModelServer::OpenAiReply(
        "", {{"c1", "slurm_query", {{"topic", "queue"}}}});
    std::vector<Message> conversation = {{Message::Role::kSystem, "You diagnose."},
                                         {Message::Role::kUser, "jobs pend on node1"}};
    std::vector<ToolSpec> specs = tools.Specs();
    specs.push_back(SubmitDiagnosisSpec());
    for (int i = 0; i < http_requests; ++i) server.Enqueue({200, body});
    auto start = Clock::now();
    for (int i = 0; i < http_requests; ++i) {
      Result<Reply> r = (*http)->Complete(conversation, specs);
      if (!r.ok()) {
        std::fprintf(stderr, "agent_loop_bench: %s\n", r.status().ToString().c_str());
        return 1;
      }
    }
    double s = Seconds(start);
    std::printf("openai back-end to FakeModelServer on loopback (keep-alive): %8.1f us/request "
                "(%d requests)\n", 1e6 * s / http_requests, http_requests);
  }

  if (mcp_tasks > 0) {
    if (slurm_mcp.empty()) {
      std::fprintf(stderr, "agent_loop_bench: no slurm-mcp beside this program (--slurm-mcp)\n");
      return 1;
    }
    if (!McpFigures(slurm_mcp, bundle, mcp_tasks, mcp_round_trips)) return 1;
  }
  return 0;
}

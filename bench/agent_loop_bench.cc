// agent_loop_bench: the agent loop's own overhead per turn, without a model.
//
//   build/bin/agent_loop_bench [--turns N] [--runs R] [--result-bytes B]
//
// Prints, per model turn, the wall time of RunAgent with the scripted back-end (one tool call a
// turn whose result is B bytes, then submit_diagnosis), with no transcript and with a JSON Lines
// transcript to a file; and the round trip of the OpenAI-compatible back-end to FakeModelServer
// (a local test double) on loopback, i.e. what the HTTP path adds before any model time. Figures,
// not a test: it never fails on speed.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "agents/llm/fake_model_server.h"
#include "agents/llm/loop.h"
#include "agents/llm/scripted_backend.h"
#include "agents/llm/transcript.h"

namespace {

using namespace slurm_rca::agents;
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"agent_loop_bench: the agent loop's overhead per turn (scripted back-end)"};
  int turns = 30;
  int runs = 200;
  size_t result_bytes = 2000;
  int http_requests = 200;
  app.add_option("--turns", turns, "Model turns per run")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--runs", runs, "Runs per figure")->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--result-bytes", result_bytes, "Bytes of each tool result")
      ->capture_default_str();
  app.add_option("--http-requests", http_requests, "Requests to the local fake model server")
      ->check(CLI::Range(0, 100000))->capture_default_str();
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
  return 0;
}

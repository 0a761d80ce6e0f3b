#include "mcp/protocol/metrics.h"

#include <httplib.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mcp/backend/live_backend.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/test_temp_dir.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::mcp {
namespace {

using T = MetricRegistry::Type;

// The lines of text that start with prefix.
std::vector<std::string> LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
    pos = end + 1;
  }
  return out;
}

TEST(MetricRegistryTest, RendersHelpTypeAndSeriesSortedByLabels) {
  MetricRegistry r;
  r.Declare("demo_requests_total", T::kCounter, "Requests served.");
  r.Declare("demo_in_flight", T::kGauge, "Requests running.");
  r.Add("demo_requests_total", {{"code", "500"}}, 2);
  r.Add("demo_requests_total", {{"code", "200"}});
  r.Add("demo_requests_total", {{"code", "200"}}, 4);
  r.Set("demo_in_flight", {}, 3);
  EXPECT_EQ(r.Render(),
            "# HELP demo_requests_total Requests served.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total{code=\"200\"} 5\n"
            "demo_requests_total{code=\"500\"} 2\n"
            "# HELP demo_in_flight Requests running.\n"
            "# TYPE demo_in_flight gauge\n"
            "demo_in_flight 3\n");
}

TEST(MetricRegistryTest, EmptyLabelValuesAreLeftOutAndLabelOrderIsKept) {
  MetricRegistry r;
  r.Declare("demo_total", T::kCounter, "x");
  r.Add("demo_total", {{"tool", "q"}, {"cause", ""}, {"outcome", "ok"}});
  EXPECT_NE(r.Render().find("demo_total{tool=\"q\",outcome=\"ok\"} 1\n"), std::string::npos)
      << r.Render();
}

TEST(MetricRegistryTest, EscapesBackslashQuoteAndNewlineInLabelValues) {
  EXPECT_EQ(EscapeLabelValue(R"(a\b"c)"
                             "\nd"),
            R"(a\\b\"c\nd)");
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
  MetricRegistry r;
  r.Declare("demo_total", T::kCounter, "Help with a \\ and a\nnewline.");
  r.Add("demo_total", {{"path", "C:\\x \"y\"\nz"}});
  const std::string text = r.Render();
  EXPECT_NE(text.find("# HELP demo_total Help with a \\\\ and a\\nnewline.\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("demo_total{path=\"C:\\\\x \\\"y\\\"\\nz\"} 1\n"), std::string::npos) << text;
  // Every sample stays on one line: the newline in the value did not break it.
  EXPECT_EQ(LinesStartingWith(text, "demo_total").size(), 1u) << text;
}

TEST(MetricRegistryTest, HistogramHasCumulativeBucketsInfSumAndCount) {
  MetricRegistry r;
  r.Declare("demo_seconds", T::kHistogram, "Latency.", {0.1, 1, 0.5});  // sorted on declaration
  for (double v : {0.05, 0.1, 0.3, 0.7, 2.0, 40.0}) r.Observe("demo_seconds", {{"tool", "t"}}, v);
  const std::string text = r.Render();
  EXPECT_EQ(text,
            "# HELP demo_seconds Latency.\n"
            "# TYPE demo_seconds histogram\n"
            "demo_seconds_bucket{tool=\"t\",le=\"0.1\"} 2\n"  // le is inclusive: 0.1 counts here
            "demo_seconds_bucket{tool=\"t\",le=\"0.5\"} 3\n"
            "demo_seconds_bucket{tool=\"t\",le=\"1\"} 4\n"
            "demo_seconds_bucket{tool=\"t\",le=\"+Inf\"} 6\n"
            "demo_seconds_sum{tool=\"t\"} 43.15\n"
            "demo_seconds_count{tool=\"t\"} 6\n");
  EXPECT_EQ(r.Value("demo_seconds", {{"tool", "t"}}), 6);
}

TEST(MetricRegistryTest, CountersOnlyGoUpGaugesGoBothWays) {
  MetricRegistry r;
  r.Declare("demo_total", T::kCounter, "x");
  r.Declare("demo_open", T::kGauge, "y");
  r.Add("demo_total", {}, 3);
  r.Add("demo_total", {}, -2);
  r.Add("demo_total", {}, std::nan(""));
  r.Set("demo_total", {}, 0);  // Set is for gauges
  EXPECT_EQ(r.Value("demo_total", {}), 3);
  r.Add("demo_open", {}, 2);
  r.Add("demo_open", {}, -1);
  EXPECT_EQ(r.Value("demo_open", {}), 1);
  r.Add("demo_undeclared", {}, 1);
  EXPECT_EQ(r.Render().find("demo_undeclared"), std::string::npos);
}

TEST(MetricRegistryTest, SampleValuesAreIntegersOrShortestDecimals) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(42), "42");
  EXPECT_EQ(FormatSampleValue(0.005), "0.005");
  EXPECT_EQ(FormatSampleValue(2.5), "2.5");
  EXPECT_EQ(FormatSampleValue(1764950400.25), "1764950400.25");
  EXPECT_EQ(FormatSampleValue(INFINITY), "+Inf");
  EXPECT_EQ(FormatSampleValue(-INFINITY), "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

TEST(MetricRegistryTest, ConcurrentAddsAreAllCountedWhileRendering) {
  MetricRegistry r;
  r.Declare("demo_total", T::kCounter, "x");
  r.Declare("demo_seconds", T::kHistogram, "y", {0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&r, t] {
      for (int i = 0; i < 5000; ++i) {
        r.Add("demo_total", {{"thread", std::to_string(t % 2)}});
        r.Observe("demo_seconds", {}, 0.25);
      }
    });
  }
  for (int i = 0; i < 50; ++i) EXPECT_FALSE(r.Render().empty());
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(r.Value("demo_total", {{"thread", "0"}}), 20000);
  EXPECT_EQ(r.Value("demo_total", {{"thread", "1"}}), 20000);
  EXPECT_EQ(r.Value("demo_seconds", {}), 40000);
}

TEST(OutcomeOfTest, ClassifiesEveryEvidenceOutcome) {
  auto of = [](Evidence::Outcome o, std::string cause) {
    Evidence e;
    e.outcome = o;
    e.cause = std::move(cause);
    return OutcomeOf(e);
  };
  using O = Evidence::Outcome;
  CallOutcome ok = of(O::kOk, "");
  EXPECT_EQ(ok.outcome, "ok");
  EXPECT_EQ(ok.cause, "");
  CallOutcome guard = of(O::kRefused, "DENIED mutating-word: 'update' changes state");
  EXPECT_EQ(guard.outcome, "refused");
  EXPECT_EQ(guard.rule, "mutating-word");
  EXPECT_EQ(guard.cause, "");
  // Not a rule the guard has: no rule label is made up from free text.
  CallOutcome unknown = of(O::kRefused, "DENIED made-up-rule: whatever");
  EXPECT_EQ(unknown.outcome, "no_evidence");
  EXPECT_EQ(unknown.cause, "refused");
  EXPECT_EQ(unknown.rule, "");
  EXPECT_EQ(of(O::kRefused, "rate budget: 60 reads started in the last 60 s; retry in 3 s").cause,
            "rate_budget");
  EXPECT_EQ(of(O::kRefused, "busy: waited 20 s for a free read slot").cause, "busy");
  for (auto [o, name] : std::vector<std::pair<O, std::string>>{
           {O::kFailed, "failed"}, {O::kTimedOut, "timed_out"}, {O::kUnavailable, "unavailable"}}) {
    CallOutcome c = of(o, "sinfo exited 1");
    EXPECT_EQ(c.outcome, "no_evidence") << name;
    EXPECT_EQ(c.cause, name);
  }
}

TEST(ParseListenAddressTest, AcceptsHostPortAndDefaultsToLoopback) {
  base::Result<ListenAddress> a = ParseListenAddress(":9464");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9464);
  a = ParseListenAddress("0.0.0.0:18390");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_EQ(a->port, 18390);
  a = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 0);
  for (const char* bad : {"9464", "", ":", "host:", ":abc", ":65536", ":-1", ":123456", "::1:9464",
                          "[]:9464", "a b:9464", "host:94 64"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseListenAddress(":65536").status().message(),
            "':65536': the port must be a number from 0 to 65535");
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
// When this test binary was loaded, before main: the process started at or before it.
const double kLoaded = UnixNow();

TEST(MetricsTest, BuildInfoAndProcessStartTimeAreThereFromTheStart) {
  // The start time is read from /proc (btime has whole seconds): wait until it is told apart from
  // "now", the fallback, by more than that.
  while (UnixNow() - kLoaded < 1.5) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Metrics m("1.2.3", "abcdef012345");
  const std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE slurm_mcp_build_info gauge\n"
                      "slurm_mcp_build_info{version=\"1.2.3\",revision=\"abcdef012345\"} 1\n"),
            std::string::npos)
      << text;
  std::smatch match;
  ASSERT_TRUE(
      std::regex_search(text, match, std::regex("\nprocess_start_time_seconds ([0-9.e+]+)\n")))
      << text;
  const double start = std::stod(match[1]);
  EXPECT_LE(start, kLoaded + 0.05) << "the process started after its code was loaded?";
  EXPECT_GT(start, kLoaded - 60) << "this test process started a minute before it was loaded?";
  EXPECT_LT(start, UnixNow() - 1) << "the start time is the time of the call, not of the process";
  for (const char* zero :
       {"slurm_mcp_cache_hits_total 0\n", "slurm_mcp_cache_misses_total 0\n",
        "slurm_mcp_single_flight_merges_total 0\n", "slurm_mcp_slurm_reads_in_flight 0\n"}) {
    EXPECT_NE(text.find(zero), std::string::npos) << zero;
  }
  // Every family has HELP and TYPE, and every name follows the conventions.
  for (const std::string& type : LinesStartingWith(text, "# TYPE ")) {
    std::smatch m2;
    ASSERT_TRUE(
        std::regex_match(type, m2, std::regex("# TYPE ([a-z_]+) (counter|gauge|histogram)")))
        << type;
    const std::string name = m2[1];
    EXPECT_NE(text.find("# HELP " + name + " "), std::string::npos) << name;
    if (m2[2] == "counter") {
      EXPECT_TRUE(name.size() > 6 && name.substr(name.size() - 6) == "_total") << name;
    }
    if (m2[2] == "histogram") {
      EXPECT_NE(name.find("_seconds"), std::string::npos) << name;
    }
  }
}

// A back-end that answers each program with one scripted outcome.
class ScriptedBackend : public Backend {
 public:
  std::map<std::string, Evidence> by_program;
  std::string Label() const override { return "replay"; }
  Evidence Read(const std::vector<std::string>& argv) override {
    auto it = by_program.find(argv.at(0));
    Evidence e;
    if (it != by_program.end()) e = it->second;
    e.source = "replay";
    e.argv = argv;
    e.evidence_time = "2026-12-03T00:00:00Z";
    if (it == by_program.end()) e.cause = "not recorded";
    return e;
  }
  Evidence ReadLog(const std::string& daemon, int) override { return Read({"log", daemon}); }
};

class NullContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

ToolResult Call(const std::vector<Tool>& tools, const std::string& name, const Json& args) {
  NullContext context;
  for (const Tool& t : tools) {
    if (t.name == name) return t.run(args, context).Fields();  // copied out of a shared answer
  }
  ADD_FAILURE() << "no tool " << name;
  return {};
}

TEST(MetricsTest, ToolCallsAreCountedByToolTopicAndOutcome) {
  ScriptedBackend backend;
  Evidence ok;
  ok.outcome = Evidence::Outcome::kOk;
  ok.exit_code = 0;
  backend.by_program["squeue"] = ok;  // queue: evidence
  Evidence denied;
  denied.outcome = Evidence::Outcome::kRefused;
  denied.cause = "DENIED bad-operand: not an id";
  backend.by_program["sinfo"] = denied;  // nodes: a guard refusal
  Evidence hung;
  hung.outcome = Evidence::Outcome::kTimedOut;
  hung.cause = "sdiag timed out after 20 s";
  backend.by_program["sdiag"] = hung;  // diagnostics: no evidence
  Metrics m("0", "x");
  SurfaceOptions o;
  o.backend = &backend;
  o.metrics = &m;
  std::vector<Tool> tools = BuildTools(o);

  EXPECT_FALSE(Call(tools, kQueryTool, {{"topic", "queue"}}).is_error);
  EXPECT_FALSE(Call(tools, kQueryTool, {{"topic", "queue"}}).is_error);
  EXPECT_TRUE(Call(tools, kQueryTool, {{"topic", "nodes"}}).is_error);
  EXPECT_TRUE(Call(tools, kQueryTool, {{"topic", "diagnostics"}}).is_error);
  EXPECT_TRUE(Call(tools, kQueryTool, {{"topic", "reservations"}}).is_error);  // not scripted
  EXPECT_TRUE(Call(tools, kQueryTool, {{"topic", "no-such-topic"}}).is_error);
  EXPECT_TRUE(Call(tools, kQueryTool, {{"topic", "queue"}, {"max_rows", 0}}).is_error);
  EXPECT_FALSE(Call(tools, kDescribeTool, {{"topic", "queue"}}).is_error);
  EXPECT_FALSE(Call(tools, kOverviewTool, Json::object()).is_error);  // nodes refused first

  const MetricRegistry& r = m.registry();
  auto calls = [&](const std::string& tool, const std::string& topic, const std::string& outcome,
                   const std::string& cause = "", const std::string& rule = "") {
    return r.Value(
        kToolCallsTotal,
        {{"tool", tool}, {"topic", topic}, {"outcome", outcome}, {"cause", cause}, {"rule", rule}});
  };
  EXPECT_EQ(calls(kQueryTool, "queue", "ok"), 2);
  EXPECT_EQ(calls(kQueryTool, "nodes", "refused", "", "bad-operand"), 1);
  EXPECT_EQ(calls(kQueryTool, "nodes", "ok"), 0);
  EXPECT_EQ(calls(kQueryTool, "diagnostics", "no_evidence", "timed_out"), 1);
  EXPECT_EQ(calls(kQueryTool, "reservations", "no_evidence", "unavailable"), 1);
  EXPECT_EQ(calls(kQueryTool, "", "error"), 1);       // the unknown topic is no label
  EXPECT_EQ(calls(kQueryTool, "queue", "error"), 1);  // bad max_rows
  EXPECT_EQ(calls(kDescribeTool, "queue", "ok"), 1);
  EXPECT_EQ(calls(kOverviewTool, "", "refused", "", "bad-operand"), 1);
  EXPECT_EQ(r.Value(kToolCallSeconds, {{"tool", kQueryTool}}), 7);
  EXPECT_EQ(m.Render().find("no-such-topic"), std::string::npos);
}


// sinfo -p ok | slow | fail: answers, answers after 0.6 s (having touched `started`), exits 1.
constexpr char kFakeSinfo[] = R"sh(#!/bin/sh
d="$(dirname "$0")"
case "$2" in
  slow) touch "$d/started"; sleep 0.6; echo "slow" ;;
  fail) echo "sinfo: error: Unable to contact slurm controller" >&2; exit 1 ;;
  *) echo "gpu up" ;;
esac
)sh";

TEST(MetricsTest, LiveBackendCountsReadsCacheSingleFlightAndBudget) {
  const std::string dir = testing_tools::MakeTempDir("metrics");
  {
    std::ofstream f(dir + "/sinfo");
    f << kFakeSinfo;
  }
  ASSERT_EQ(::chmod((dir + "/sinfo").c_str(), 0755), 0);
  Metrics m("0", "x");
  LiveOptions o;
  o.executor.trusted_dirs = {dir};
  o.executor.timeout = std::chrono::milliseconds(5000);
  o.max_per_minute = 4;
  o.metrics = &m;
  LiveBackend live(o);
  const MetricRegistry& r = m.registry();

  ASSERT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok());     // miss, started 1
  ASSERT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok());     // hit
  ASSERT_FALSE(live.Read({"sinfo", "-p", "fail"}).ok());  // miss, started 2, failed
  // Two identical reads at once: the second joins the first.
  Evidence first;
  std::thread leader([&] { first = live.Read({"sinfo", "-p", "slow"}); });  // miss, started 3
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!std::filesystem::exists(dir + "/started") &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(r.Value(kReadsInFlight, {}), 1);
  Evidence second = live.Read({"sinfo", "-p", "slow"});  // miss, merged
  leader.join();
  EXPECT_TRUE(first.ok());
  EXPECT_TRUE(second.ok());
  EXPECT_TRUE(live.Read({"sinfo", "-p", "fail"}).outcome == Evidence::Outcome::kFailed);  // 4
  Evidence refused = live.Read({"sinfo", "-p", "fail"});  // the fifth start in 60 s
  EXPECT_EQ(refused.outcome, Evidence::Outcome::kRefused);
  EXPECT_FALSE(live.Read({"sinfo", "--update"}).ok());  // the guard: no cache lookup, nothing

  EXPECT_EQ(r.Value(kReadsStartedTotal, {{"program", "sinfo"}}), 4);
  EXPECT_EQ(r.Value(kReadsInFlight, {}), 0);
  EXPECT_EQ(r.Value(kReadSeconds, {{"program", "sinfo"}}), 4);
  EXPECT_EQ(r.Value(kCacheHitsTotal, {}), 1);
  EXPECT_EQ(r.Value(kCacheMissesTotal, {}), 6);
  EXPECT_EQ(r.Value(kSingleFlightMergesTotal, {}), 1);
  EXPECT_EQ(r.Value(kBudgetRefusalsTotal, {{"limit", "per_minute"}}), 1);
  EXPECT_EQ(OutcomeOf(refused).cause, "rate_budget");
  std::filesystem::remove_all(dir);
}

// Waits up to 5 s for the open-connections gauge to read `want`.
bool OpenConnectionsReach(const Metrics& m, double want) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (m.registry().Value(kHttpConnectionsOpen, {}) != want) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(MetricsTest, HttpTransportCountsOpenConnectionsAndRejectedRequests) {
  Metrics m("0", "x");
  Server server(ServerOptions{});
  HttpOptions h;
  h.metrics = &m;
  HttpTransport transport(server, h);
  base::Result<int> started = transport.Start();
  ASSERT_TRUE(started.ok()) << started.status().message();
  {
    httplib::Client client("127.0.0.1", *started);
    client.set_keep_alive(true);
    const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
    httplib::Headers json = {{"Accept", "application/json, text/event-stream"}};
    auto res = client.Post("/mcp", json, ping, "application/json");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_TRUE(OpenConnectionsReach(m, 1)) << m.Render();  // kept alive
    httplib::Headers evil = json;
    evil.emplace("Host", "evil.example");
    res = client.Post("/mcp", evil, ping, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403);
    httplib::Headers evil_origin = json;
    evil_origin.emplace("Origin", "http://evil.example");
    res = client.Post("/mcp", evil_origin, ping, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403);
    client.stop();
  }
  EXPECT_TRUE(OpenConnectionsReach(m, 0)) << m.Render();
  EXPECT_EQ(m.registry().Value(kHttpRequestsRejectedTotal, {{"code", "403"}}), 2);
  EXPECT_EQ(m.registry().Value(kHttpRequestsRejectedTotal, {{"code", "200"}}), 0);
  transport.Stop();
}

TEST(MetricsServerTest, ServesTheExpositionAtGetMetricsOnly) {
  Metrics m("1.0.0", "rev");
  m.CacheHit();
  MetricsServer server(m);
  base::Status started = server.Start("127.0.0.1", 0);
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(res->body.find("slurm_mcp_cache_hits_total 1\n"), std::string::npos) << res->body;
  m.CacheHit();  // rendered at each scrape
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("slurm_mcp_cache_hits_total 2\n"), std::string::npos) << res->body;
  res = client.Get("/other");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  res = client.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);

  // The port is taken: a second listener says so instead of serving nothing.
  MetricsServer second(m);
  base::Status taken = second.Start("127.0.0.1", server.port());
  EXPECT_FALSE(taken.ok());
  EXPECT_EQ(taken.message(),
            "cannot bind the metrics listener to 127.0.0.1:" + std::to_string(server.port()));
  server.Stop();
  server.Stop();  // idempotent
}

}  // namespace
}  // namespace slurm_rca::mcp

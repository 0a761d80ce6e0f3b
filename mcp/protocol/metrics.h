// Metrics: what `slurm-mcp serve --metrics ADDR` exposes to Prometheus (text exposition format
// 0.0.4) at GET /metrics on a listener of its own. Counters and histograms only: the audit log
// (mcp/backend/audit_log.h) stays the per-call record.
//
//   Metrics metrics(base::Version(), base::Revision());
//   LiveOptions live{.metrics = &metrics};              // reads, cache, single flight, budget
//   SurfaceOptions surface{.metrics = &metrics};         // tool calls by tool, topic, outcome
//   HttpOptions http{.metrics = &metrics};               // HTTP connections, rejected requests
//   MetricsServer server(metrics);
//   base::Status s = server.Start("127.0.0.1", 9464);      // GET http://127.0.0.1:9464/metrics
//
// A tool call's outcome is `ok` (evidence), `no_evidence` with a `cause` (the read failed, timed
// out, was unavailable, or was refused by the rate budget or the concurrency bound), `refused`
// with the guard's `rule` id, or `error` (bad arguments, unknown topic). A read that gave no
// evidence is never counted as ok. Every type here is thread-safe.
#ifndef SLURM_RCA_MCP_PROTOCOL_METRICS_H_
#define SLURM_RCA_MCP_PROTOCOL_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace slurm_rca::mcp {

// Label name -> value, in the order they are rendered. A label with an empty value is left out
// (Prometheus reads an empty label as an absent one).
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// A small registry of metric families rendered in the Prometheus text format 0.0.4.
class MetricRegistry {
 public:
  enum class Type { kCounter, kGauge, kHistogram };

  // Declares a family (rendered in declaration order). `buckets`: a histogram's upper bounds,
  // ascending and finite (+Inf is added). Declaring a name twice keeps the first declaration.
  void Declare(const std::string& name, Type type, const std::string& help,
               std::vector<double> buckets = {});
  // Counter: adds delta (a negative or NaN delta is ignored: counters only go up). Gauge: adds
  // delta, which may be negative. An undeclared name or a histogram is ignored.
  void Add(const std::string& name, const MetricLabels& labels, double delta = 1);
  // Gauge only.
  void Set(const std::string& name, const MetricLabels& labels, double value);
  // Histogram only: one observation.
  void Observe(const std::string& name, const MetricLabels& labels, double value);
  // Counter or gauge: its value (0 when the series does not exist); histogram: its count.
  double Value(const std::string& name, const MetricLabels& labels) const;
  // The exposition: for each family `# HELP`, `# TYPE` and its series, sorted by labels.
  std::string Render() const;

 private:
  struct Series {
    double value = 0;                   // counter, gauge
    std::vector<std::uint64_t> counts;  // histogram: per bucket (not cumulative), then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  struct Family {
    std::string name;
    Type type;
    std::string help;
    std::vector<double> buckets;
    std::map<MetricLabels, Series> series;
  };
  Family* FindLocked(const std::string& name);
  const Family* FindLocked(const std::string& name) const;

  mutable std::mutex mu_;
  std::vector<Family> families_;
};

// A label value escaped for the exposition: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view value);
// HELP text escaped: backslash and newline.
std::string EscapeHelp(std::string_view help);
// A sample value: integers without exponent ("3"), "+Inf", "-Inf", "NaN", else shortest %g.
std::string FormatSampleValue(double value);

// How one tool call ended, for the tool-call counter (made from a read's evidence by OutcomeOf,
// mcp/topics/tools.h).
struct CallOutcome {
  std::string outcome;  // "ok", "no_evidence", "refused" or "error"
  std::string cause;    // no_evidence: failed, timed_out, unavailable, rate_budget, busy, ...
  std::string rule;     // refused: the guard's rule id (guard/rule.h)
};

// The slurm_mcp_* families (mcp/README.md, "Metrics").
class Metrics {
 public:
  Metrics(std::string version, std::string revision);

  // One tool call; topic "" when the call named no known topic (or reads several: overview).
  void ToolCall(const std::string& tool, const std::string& topic, const CallOutcome& outcome,
                double seconds);
  // LiveBackend: a cache lookup, a read that joined an identical one in flight, a read refused
  // by the rate budget ("per_minute") or by the concurrency bound ("concurrent").
  void CacheHit();
  void CacheMiss();
  void SingleFlightMerge();
  void BudgetRefusal(const std::string& limit);
  // LiveBackend: a Slurm (or nvidia-smi) process started, and when it ended.
  void ReadStarted(const std::string& program);
  void ReadFinished(const std::string& program, double seconds);
  // HttpTransport: an accepted connection (not refused) opened and closed; a request the Host,
  // Origin or token check refused, or a connection refused past a cap (503), by HTTP status.
  void HttpConnectionOpened();
  void HttpConnectionClosed();
  void HttpRequestRejected(int status);

  std::string Render() const;
  const MetricRegistry& registry() const { return registry_; }

 private:
  MetricRegistry registry_;
};

// The metric names (mcp/README.md lists them with their labels).
inline constexpr char kToolCallsTotal[] = "slurm_mcp_tool_calls_total";
inline constexpr char kToolCallSeconds[] = "slurm_mcp_tool_call_duration_seconds";
inline constexpr char kCacheHitsTotal[] = "slurm_mcp_cache_hits_total";
inline constexpr char kCacheMissesTotal[] = "slurm_mcp_cache_misses_total";
inline constexpr char kReadsStartedTotal[] = "slurm_mcp_slurm_reads_started_total";
inline constexpr char kReadsInFlight[] = "slurm_mcp_slurm_reads_in_flight";
inline constexpr char kReadSeconds[] = "slurm_mcp_slurm_read_duration_seconds";
inline constexpr char kSingleFlightMergesTotal[] = "slurm_mcp_single_flight_merges_total";
inline constexpr char kBudgetRefusalsTotal[] = "slurm_mcp_budget_refusals_total";
inline constexpr char kHttpConnectionsOpen[] = "slurm_mcp_http_connections_open";
inline constexpr char kHttpRequestsRejectedTotal[] = "slurm_mcp_http_requests_rejected_total";
inline constexpr char kProcessStartTime[] = "process_start_time_seconds";
inline constexpr char kBuildInfo[] = "slurm_mcp_build_info";


// Serves GET /metrics (Metrics::Render, Content-Type text/plain; version=0.0.4) on its own
// listener (the HTTP core of the MCP endpoint, mcp/protocol/http_core.h) and event thread. Any
// other path is 404, any other method 405.
class MetricsServer {
 public:
  explicit MetricsServer(const Metrics& metrics);
  ~MetricsServer();  // Stop()
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and serves; else an unavailable status saying why not (the port is taken). port 0:
  // any free port (see port()).
  base::Status Start(const std::string& host, int port);
  int port() const { return port_; }
  void Stop();  // idempotent

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_METRICS_H_

// The tool surface of slurm-mcp: three tools with progressive disclosure.
//
//   slurm_overview   nodes, queue and diagnostics in one call: where to start
//   slurm_query      one topic (closed vocabulary, mcp/topics/topics.h) with validated filters
//   slurm_describe   a topic's columns, filters and interpretation notes, fetched only when needed
//
// Every answer carries its source (live or replay) and evidence time. A read that failed, timed
// out or was refused is never an empty result: slurm_query answers it with isError and "NO
// EVIDENCE (<outcome>): <cause>"; slurm_overview marks the section. All tools are read-only
// (readOnlyHint true, destructiveHint false, idempotentHint true, openWorldHint false).
//
//   SurfaceOptions options{.backend = &backend, .audit = [&](const Json& j) { log.Record(j); }};
//   Server server(ServerOptions{.tools = BuildTools(options)});
#ifndef SLURM_RCA_MCP_TOPICS_TOOLS_H_
#define SLURM_RCA_MCP_TOPICS_TOOLS_H_

#include <functional>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"
#include "mcp/protocol/metrics.h"
#include "mcp/protocol/server.h"
#include "mcp/telemetry/gpu_idle.h"
#include "mcp/topics/scoped_backend.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {

struct SurfaceOptions {
  Backend* backend = nullptr;  // not owned; must outlive the tools
  Caps caps;                   // default row and byte caps (max_rows may be lowered per call)
  // Called once per tool call with the audit record (time, tool, topic, argv, exit,
  // duration_ms, cached, bytes, outcome). May be empty.
  std::function<void(const Json&)> audit;
  // Adds the test tools the official conformance suite calls (test_simple_text, ...). Never on
  // by default.
  bool conformance_fixtures = false;
  // gpu_idle: the samples the server took (mcp/telemetry/gpu_sampler.h; not owned, must outlive the
  // tools) and what the sampler is doing (Describe()). Null: sampling is off, or replay; the topic
  // is then no evidence.
  const GpuSampleStore* gpu_samples = nullptr;
  std::function<Json()> gpu_sampling;
  GpuIdleOptions gpu_idle;
  // Unix seconds now, for the judgement; default the system clock.
  std::function<std::int64_t()> clock;
  // Counts every tool call by tool, topic and outcome, with its latency (mcp/protocol/metrics.h).
  // Not owned; must outlive the tools. Null: nothing is counted.
  Metrics* metrics = nullptr;
  // With authorization (OAuth): each call reads through its caller's view (ToolContext::caller,
  // mcp/topics/scoped_backend.h), a call whose token allows no view is refused, and its audit
  // records name the principal (and the Slurm user of an own-jobs view). Unset: every call reads
  // as the server (stdio, a shared --token-file secret).
  std::optional<ScopeNames> scopes;
  // With scopes: every call counted by its principal (GET /ready). Not owned; must outlive the
  // tools. Null: not counted.
  CallerCounts* caller_counts = nullptr;
};

// The tools, in the order tools/list returns them.
std::vector<Tool> BuildTools(const SurfaceOptions& options);

// The three tools' names.
inline constexpr const char* kOverviewTool = "slurm_overview";
inline constexpr const char* kQueryTool = "slurm_query";
inline constexpr const char* kDescribeTool = "slurm_describe";

// The outcome of a call whose answer is this evidence: ok, refused (a guard denial, recognised
// by its "DENIED <rule-id>: " cause, live or replayed) or no_evidence with the cause.
CallOutcome OutcomeOf(const Evidence& e);

// Renders a tool result for people (the one-shot CLI verbs): the text blocks, joined.
std::string ResultText(const ToolResult& result);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_TOOLS_H_

// slurm_overview's answer: a summary whose size does not grow with the cluster.
//
// Three reads, one after the other (never at once: the overview must not burst slurmctld):
//   nodes        sinfo -N with each node's state, reason, reason time and partition
//                availability (a replayed bundle recorded before this read exists answers the
//                nodes topic's own argv instead, without times or availability)
//   queue        the queue topic's squeue
//   diagnostics  sdiag
// From them, anomalies first: every distinct state and reason of an unavailable node (drained,
// draining, down, not responding, fail, maint, reserved, powered down: any state but idle,
// allocated, mixed and completing) with its count, hostlist and since-when, wherever it sits in
// the node list; partitions not UP; sections without evidence; reads cut by the executor's cap.
// Then nodes by state, jobs by state, pending jobs by reason and by partition, and sdiag's
// headline figures with its top RPC users. Lists are bounded (the answer stays under
// kOverviewMaxBytes at any size); what a list leaves out is counted, and each part says where
// to read more (slurm_query with group_by or filters).
//
//   std::vector<Evidence> reads;
//   for (const OverviewRead& r : OverviewReads()) reads.push_back(backend.Read(r.argv));
//   OverviewSummary s = SummarizeOverview(reads, backend.Label());  // s.text, s.structured
#ifndef SLURM_RCA_MCP_TOPICS_OVERVIEW_H_
#define SLURM_RCA_MCP_TOPICS_OVERVIEW_H_

#include <cstddef>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {

// The answer's bound, text and structured content each (tested at 4 and 1,024 nodes).
inline constexpr std::size_t kOverviewMaxBytes = 8192;

struct OverviewRead {
  std::string topic;               // "nodes", "queue", "diagnostics"
  std::vector<std::string> argv;   // what is read first
  std::vector<std::string> fallback;  // read when the first is unavailable (replay); may be empty
};

// The reads, in the order they are made.
const std::vector<OverviewRead>& OverviewReads();

struct OverviewSummary {
  std::string text;  // for people and text-only clients: anomalies first
  Json structured;   // {source, anomalies, sections: [{topic, outcome, evidence_time, ...,
                     //  summary}]}; schema: OverviewSchema()
};

// `reads`: one Evidence per OverviewReads() entry in order, fewer when the call was cancelled.
OverviewSummary SummarizeOverview(const std::vector<Evidence>& reads, const std::string& source);

// JSON Schema of SummarizeOverview's structured answer.
Json OverviewSchema();

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_OVERVIEW_H_

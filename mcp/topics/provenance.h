// Where a read's answer came from: the fields every structured answer of one read starts with,
// shared by slurm_query, slurm_describe's companions and each section of slurm_overview.
//
//   Json j = ProvenanceJson("queue", evidence);
//   // {"topic": "queue", "source": "live", "outcome": "ok", "evidence_time": "...",
//   //  "argv": [...], "seconds": 0.4, "cached": false}
//   // and, when the executor cut the read at its cap: "total_is_lower_bound": true,
//   // "output_cut_at_bytes": 8388608, "output_bytes": 12582912 (when the read's size is known);
//   // and, when replay derived an unrecorded filtered read from the snapshot's whole read:
//   // "derived_from": [its argv], "derivation": "not recorded; derived from ..."
//
// A read without evidence gets no cause here: each caller says it in its own bound.
#ifndef SLURM_RCA_MCP_TOPICS_PROVENANCE_H_
#define SLURM_RCA_MCP_TOPICS_PROVENANCE_H_

#include <string>

#include "mcp/evidence/evidence.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {

Json ProvenanceJson(const std::string& topic, const Evidence& e);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_PROVENANCE_H_

#include "mcp/topics/provenance.h"

namespace slurm_rca::mcp {

Json ProvenanceJson(const std::string& topic, const Evidence& e) {
  Json j = {{"topic", topic},
            {"source", e.source},
            {"outcome", OutcomeName(e.outcome)},
            {"evidence_time", e.evidence_time},
            {"argv", e.argv},
            {"seconds", e.seconds},
            {"cached", e.cached}};
  if (e.cached) j["cache_age_seconds"] = e.cache_age_seconds;
  if (!e.derived_from.empty()) {
    // Not recorded: replay derived it from the snapshot's whole read (replay_derive.h).
    j["derived_from"] = e.derived_from;
    j["derivation"] = e.derivation;
  }
  if (e.ok() && e.out_truncated) {
    // Never a total: the read went on past what was kept.
    j["total_is_lower_bound"] = true;
    j["output_cut_at_bytes"] = e.out.size();
    if (e.out_bytes) j["output_bytes"] = e.out_bytes;
  }
  return j;
}

}  // namespace slurm_rca::mcp

// Time to hypothesis as the harness measured it, never as the agent reported it: read from the
// transcripts the agent loop writes (agents/llm/README.md, "Transcript"), one JSON Lines file per
// scenario named by its task id (or id). The time of a scenario is the `t` of the first valid
// `submit` event minus the `t` of the `ticket` event: wall time from the ticket to the first
// committed answer. The answer a transcript committed is its last valid submit (configuration E's
// harness turns a low-confidence answer into an abstention after the model's submit). Beside the
// time: the bytes of the tool results read before that first submit, and how many (`bytes` of
// each tool_result event, the result's full length).
//
//   HarnessTimes t = ReadTranscripts("results/B-m-r1.transcripts", suite);
//   Report r = Score(submission, suite, &t);   // r.harness_time_median_s
//
// A transcript that cannot be read, has no ticket, or whose committed answer disagrees with the
// submission yields no time and a problem line: no evidence, never a zero.
#ifndef SLURM_RCA_GRADER_TRANSCRIPT_TIMES_H_
#define SLURM_RCA_GRADER_TRANSCRIPT_TIMES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/scenario.h"

namespace slurm_rca::grader {

struct HarnessTime {
  double seconds = 0;
  std::string root_cause;  // of the last valid submit
  std::string file;
  // What the agent read before it committed (tool_result events before the first valid submit):
  // the results' full lengths in bytes, summed, and how many there were. At the size of a real
  // cluster this is the cost of finding the cause, beside the time it took.
  std::uint64_t bytes_read = 0;
  int tool_results = 0;
};

struct HarnessTimes {
  std::map<std::string, HarnessTime> by_scenario;  // canonical scenario id
  std::vector<std::string> unanswered;             // transcripts with no valid submit (budget out)
  std::vector<std::string> problems;               // "file: why"
};

// Reads every *.jsonl of `dir`. A missing directory gives an empty result and no problem.
HarnessTimes ReadTranscripts(const std::string& dir, const std::vector<scenarios::Scenario>& suite);

// Reads one transcript's text; `file` names it in the message. nullopt when it has no valid submit
// (the budget ran out); an invalid argument ("FILE:LINE: why", or "FILE: why") when it has no
// ticket event, is not JSON Lines, or a valid submit has no root cause.
base::Result<std::optional<HarnessTime>> ReadTranscript(const std::string& text,
                                                        const std::string& file);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_TRANSCRIPT_TIMES_H_

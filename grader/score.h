// Submissions and their scores: deterministic, no LLM judge (rca-bench.md section 4, fixed where
// section 8 says it was weak).
//
// A submission is JSON Lines (or one JSON array): a header object, then one answer per scenario.
//
//   {"configuration": "B", "configuration_hash": "9f2c...", "model": "m", "suite_fingerprint":
//    "sha256:...", "date": "2026-11-30"}
//   (rca-bench run adds the optional "usage", "cost_usd" and "prices_file", "models_served",
//   "temperature", "seed" and, for a run stopped at a cap, "stopped": agents/harness.h, Spend)
//   {"scenario_id": "T-8018cbddf2", "root_cause": "db.mysql", "confidence": 0.8,
//    "ruled_out": ["slurm.slurmd"], "actions_proposed": ["investigate:db.mysql"],
//    "time_to_hypothesis_s": 41}
//
//   ParsedSubmission p = ParseSubmission(text, "run.jsonl", suite);
//   if (!p.problems.empty()) ...;            // every problem, with its line; nothing is scored
//   Report r = Score(*p.submission, suite);
#ifndef SLURM_RCA_GRADER_SCORE_H_
#define SLURM_RCA_GRADER_SCORE_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "grader/transcript_times.h"
#include "scenarios/scenario.h"

namespace slurm_rca::grader {

struct Answer {
  std::string scenario_id;  // canonical id (task ids are resolved)
  std::string root_cause;
  double confidence = 0;
  std::vector<std::string> ruled_out;
  std::vector<std::string> actions;
  std::optional<double> time_to_hypothesis_s;  // self-reported: shown apart, never ranked
  int line = 0;
};

// What a run spent, as rca-bench run writes it in the header's "usage" (summed over the
// submission's task runs, specialists included). Tokens as agents::Usage counts them:
// input_tokens includes the cached ones.
struct RunUsage {
  int64_t input_tokens = 0, output_tokens = 0, cached_input_tokens = 0,
          cache_creation_input_tokens = 0;
  int64_t model_turns = 0, tool_calls = 0, task_runs = 0;
  double wall_s = 0;
};

struct Submission {
  std::string configuration, configuration_hash, model, suite_fingerprint, date;
  // Optional header keys written by rca-bench run (issue #37); absent in older submissions.
  std::optional<RunUsage> usage;           // "usage"
  std::optional<double> cost_usd;          // "cost_usd": only when the run was given a price file
  std::vector<std::string> models_served;  // "models_served": what the server said it ran
  std::string stopped;  // "stopped": the run stopped at a cap; the leaderboard refuses it
  // "agent" (a contestant) or "reference": a model-free agent that audits the benchmark
  // (folk, graphwalk, ticketonly); shown on the leaderboard as such, never ranked with agents.
  std::string kind = "agent";
  std::vector<Answer> answers;
};

using SubmissionProblem = base::Diagnostic;  // no rule: file:line: message

struct ParsedSubmission {
  std::optional<Submission> submission;  // absent when there is any problem
  std::vector<SubmissionProblem> problems;
};

// "sha256:" + 16 hex digits over what scoring reads of every scenario (ids, task ids, status,
// split, credit tables, ruled_out, actions), in id order, the digest of the dependency graph
// configuration C is given (frozen at a tag, agents/graph/FROZEN) and the bundle set the agents
// read (busy or clean). A submission made against another suite, graph or evidence is refused.
std::string SuiteFingerprint(const std::vector<scenarios::Scenario>& suite,
                             const std::string& graph_digest, const std::string& bundle_set);
// The same with CurrentGraphDigest() and scenarios::DefaultBundleSet().
std::string SuiteFingerprint(const std::vector<scenarios::Scenario>& suite);
// "sha256:" + 16 hex digits of a graph file's text.
std::string GraphDigest(const std::string& graph_text);
// GraphDigest of the file at path; "unreadable" when it cannot be read (no fingerprint made
// from a readable graph matches it).
std::string GraphDigestOfFile(const std::string& path);
// The graph digest the one-argument SuiteFingerprint uses: main sets it once, from the graph of
// its base::DataPaths; "unset" until then.
void SetGraphDigest(const std::string& digest);
const std::string& CurrentGraphDigest();

ParsedSubmission ParseSubmission(const std::string& text, const std::string& file,
                                 const std::vector<scenarios::Scenario>& suite);

struct Bin {  // one of the 10 confidence bins of the reliability diagram
  int count = 0;
  double mean_confidence = 0, accuracy = 0;  // exact correctness
};

struct Report {
  int scenarios = 0;  // runnable scenarios scored
  int answered = 0, missing = 0, correct = 0;
  double depth = 0;                 // mean partial credit; a missing answer scores 0
  std::optional<double> brier_exact, brier_partial, ece;  // over answered scenarios
  std::vector<Bin> reliability;     // 10 bins of width 0.1
  int actions_proposed = 0, actions_helpful = 0, actions_useless = 0, actions_harmful = 0;
  int ruled_out_given = 0, ruled_out_right = 0, ruled_out_true_cause = 0;
  std::map<std::string, double> depth_by_family, depth_by_difficulty;
  std::map<std::string, double> depth_by_split;  // dev and test (scenarios that declare one)
  // Over the scenarios written after the graph's freeze (post_freeze): where configuration C's
  // graph holds nothing read out of the scenarios' own recordings.
  std::optional<double> depth_post_freeze;
  int post_freeze_scenarios = 0;
  // By the lab a task was recorded on (LabOf): "4-node" (the clean and busy labs) or a scenario's
  // own lab profile ("large", 256-1,024 nodes); beside it, how many tasks each has.
  std::map<std::string, double> depth_by_lab;
  std::map<std::string, int> scenarios_by_lab;
  std::optional<double> self_reported_time_s;  // mean, shown apart
  // Time to hypothesis measured by the harness (transcripts): seconds per answered scenario whose
  // transcript committed the same root cause, their median, and why the others have no time.
  std::vector<double> harness_times_s;
  std::optional<double> harness_time_median_s;
  // Beside each of those times: the bytes of tool results read before the answer, and how many.
  std::vector<double> harness_bytes_read, harness_tool_results;
  std::optional<double> harness_bytes_median, harness_tool_results_median;
  std::vector<std::string> harness_problems;
  std::string floor_name;
  double floor_depth = 0;
  std::map<std::string, double> credit;  // per scenario id
};

// The lab a task's evidence was recorded on, as the report groups it: "4-node" or the profile of
// the scenario's own lab ("large").
std::string LabOf(const scenarios::Scenario& s);

// `times`, when given, are the harness's transcripts of this run (ReadTranscripts).
Report Score(const Submission& submission, const std::vector<scenarios::Scenario>& suite,
             const HarnessTimes* times = nullptr);

double Median(std::vector<double> v);  // of a non-empty vector

std::string RenderReport(const Submission& s, const Report& r);
nlohmann::ordered_json ReportJson(const Submission& s, const Report& r);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_SCORE_H_

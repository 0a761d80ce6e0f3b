// The leaderboard over a directory of submissions: every *.jsonl scored, runs of the same
// configuration aggregated as mean ± standard error, the floor printed above and each row's
// margin over it. A submission with problems, or made against another suite (fingerprint), is
// refused with the reason and never mixed in.
//
//   Leaderboard lb = BuildLeaderboard("results/", suite.scenarios);
//   std::cout << LeaderboardMarkdown(lb);
#ifndef SLURM_RCA_GRADER_LEADERBOARD_H_
#define SLURM_RCA_GRADER_LEADERBOARD_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "grader/score.h"

namespace slurm_rca::grader {

struct Row {
  std::string configuration, configuration_hash, model, fingerprint;
  std::string kind = "agent";  // or "reference" (an audit of the benchmark)
  std::string first_date, last_date;
  int runs = 0;
  double depth_mean = 0, depth_se = 0;  // se: sample standard deviation / sqrt(runs); 0 for one
  double brier_exact_mean = 0, ece_mean = 0;
  int calibrated_runs = 0;               // runs with at least one answer
  double missing_mean = 0;
  std::vector<Bin> reliability;  // pooled over the runs' answers (10 bins)
  std::map<std::string, double> depth_by_family;  // mean over runs
  std::map<std::string, double> depth_by_split;   // dev, test: mean over runs
  std::map<std::string, double> depth_by_difficulty;  // mean over runs
  std::optional<double> depth_post_freeze;        // mean over runs (post_freeze scenarios)
  std::vector<double> harness_times_s;            // pooled over runs
  std::optional<double> harness_time_median_s;   // measured by the harness; unmeasured if none
  std::vector<double> harness_bytes_read;         // pooled: tool-result bytes before each answer
  std::optional<double> harness_bytes_median;
};

struct Leaderboard {
  std::string fingerprint;
  std::string floor_name;
  double floor_depth = 0;
  int scenarios = 0;
  std::vector<Row> rows;             // by mean depth, highest first
  std::vector<std::string> refused;  // "file: why"
  std::vector<std::string> families;
  std::vector<std::pair<std::string, double>> baselines;  // every degenerate strategy, best first
  // The ranking is on the test split when the suite declares one (its own floor beside it); the
  // development split is where thresholds are fitted (rca-bench fit-abstention).
  bool ranked_on_test = false;
  std::string test_floor_name;
  double test_floor_depth = 0;
  int test_scenarios = 0, post_freeze_scenarios = 0;
};

// Each X.jsonl of `dir` is scored with the transcripts of X.transcripts/ when that directory
// exists (time to hypothesis as the harness measured it).
Leaderboard BuildLeaderboard(const std::string& dir, const std::vector<scenarios::Scenario>& suite);
std::string LeaderboardMarkdown(const Leaderboard& lb);
// A self-contained page: no script, no external resource, a Content-Security-Policy of
// default-src 'none'; SVG charts of depth against the floor, a reliability diagram, and depth by
// family.
std::string LeaderboardHtml(const Leaderboard& lb);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_LEADERBOARD_H_

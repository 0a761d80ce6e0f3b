// The leaderboard over a directory of submissions: every *.jsonl scored, runs of the same
// configuration aggregated as mean ± standard error, the floor printed above and each row's
// margin over it. A submission with problems, made against another suite (fingerprint), or
// stopped at a spending cap before it answered every task, is refused with the reason and never
// mixed in.
//
// Repeats: with 3 or more runs of a configuration (same configuration, hash and model) a row also
// gives the share of tasks answered the same in every run (agreement: over the tasks some run
// answered, those with the same root_cause id in every run, "unknown" included; a run that gave
// no answer to a task disagrees with one that did) and a 95% percentile bootstrap interval of its
// depth over tasks: each task's credit is averaged over the runs, the tasks are resampled with
// replacement `bootstrap_resamples` times with a seeded generator, and the interval is the 2.5th
// and 97.5th percentiles of the resampled means. With fewer runs both read "n/a (needs ≥3
// repeats)". Spend: tokens (and money, when every run's header has a cost from a price file) per
// run.
//
//   Leaderboard lb = BuildLeaderboard("results/", suite.scenarios);
//   std::cout << LeaderboardMarkdown(lb);
#ifndef SLURM_RCA_GRADER_LEADERBOARD_H_
#define SLURM_RCA_GRADER_LEADERBOARD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
  std::map<std::string, double> depth_by_lab;     // "4-node", "large": mean over runs
  std::vector<double> harness_times_s;            // pooled over runs
  std::optional<double> harness_time_median_s;   // measured by the harness; unmeasured if none
  std::vector<double> harness_bytes_read;         // pooled: tool-result bytes before each answer
  std::optional<double> harness_bytes_median;
  // Repeats (runs >= kMinRepeats), else absent.
  std::optional<double> agreement;  // share of answered tasks with the same root_cause in every run
  int agreement_tasks = 0;          // its denominator: scored tasks some run answered
  std::optional<double> depth_ci_low, depth_ci_high;  // bootstrap 95% interval over tasks
  // Spend, means per run; absent (unmeasured) unless every run's header records it.
  std::optional<double> input_tokens_mean, output_tokens_mean, cached_input_tokens_mean;
  std::optional<double> cost_usd_mean;
};

inline constexpr int kMinRepeats = 3;

struct LeaderboardOptions {
  std::uint64_t bootstrap_seed = 1;  // seed of the bootstrap's generator (std::mt19937_64)
  int bootstrap_resamples = 2000;    // resamples of the tasks
};

// Of `task_ids`, those some run answered, and of them those answered the same in every run;
// runs[k] maps a task id to the root_cause run k answered (absent: not answered).
struct Agreement {
  int same = 0, answered = 0;
  std::optional<double> share() const {
    return answered ? std::optional<double>(static_cast<double>(same) / answered) : std::nullopt;
  }
};
Agreement CountAgreement(const std::vector<std::map<std::string, std::string>>& runs,
                         const std::vector<std::string>& task_ids);
// The 95% percentile bootstrap interval of the mean of `values` (one per task): `resamples`
// resamples of values.size() draws with replacement, index = mt19937_64(seed)() % n; the interval
// is (sorted means)[floor(0.025 R)] .. [ceil(0.975 R) - 1]. Deterministic for a seed. Empty
// values or resamples < 1: {0, 0}.
std::pair<double, double> BootstrapInterval(const std::vector<double>& values, std::uint64_t seed,
                                            int resamples);

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
  // Runnable tasks recorded on the large lab, and the best constant answer over them alone.
  int large_scenarios = 0;
  std::string large_floor_name;
  double large_floor_depth = 0;
  // The tasks recorded on the lab of hosts (lab: {profile: hosts}) and their own floor.
  int hosts_scenarios = 0;
  std::string hosts_floor_name;
  double hosts_floor_depth = 0;
  LeaderboardOptions options;  // the bootstrap's seed and resamples, stated in the output
};

// Each X.jsonl of `dir` is scored with the transcripts of X.transcripts/ when that directory
// exists (time to hypothesis as the harness measured it).
Leaderboard BuildLeaderboard(const std::string& dir, const std::vector<scenarios::Scenario>& suite,
                             const LeaderboardOptions& options = {});
// "n/a (needs ≥3 repeats)", "n/a (no task answered)", or the share and its denominator,
// "0.833 of 108 tasks".
std::string AgreementText(const Row& r);
// "n/a (needs ≥3 repeats)", or "[0.412, 0.498]".
std::string IntervalText(const Row& r);
// "1234567 in (890123 cached) / 45678 out", or "unmeasured"; and "$12.34" or "unmeasured".
std::string TokensText(const Row& r);
std::string CostText(const Row& r);
std::string LeaderboardMarkdown(const Leaderboard& lb);
// A self-contained page: no script, no external resource, a Content-Security-Policy of
// default-src 'none'; SVG charts of depth against the floor, a reliability diagram, and depth by
// family.
std::string LeaderboardHtml(const Leaderboard& lb);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_LEADERBOARD_H_

// The leaderboard over a directory of submissions: every *.jsonl scored, runs of the same
// configuration aggregated as mean ± standard error, the floor printed above and each row's
// margin over it. A submission with problems, or made against another suite (fingerprint), is
// refused with the reason and never mixed in.
//
//   Leaderboard lb = BuildLeaderboard("results/", suite.scenarios);
//   std::cout << LeaderboardMarkdown(lb);
#ifndef SLURM_RCA_GRADER_LEADERBOARD_H_
#define SLURM_RCA_GRADER_LEADERBOARD_H_

#include <string>
#include <vector>

#include "grader/score.h"

namespace slurm_rca::grader {

struct Row {
  std::string configuration, configuration_hash, model, fingerprint;
  std::string first_date, last_date;
  int runs = 0;
  double depth_mean = 0, depth_se = 0;  // se: sample standard deviation / sqrt(runs); 0 for one
  double brier_exact_mean = 0, ece_mean = 0;
  int calibrated_runs = 0;               // runs with at least one answer
  double missing_mean = 0;
};

struct Leaderboard {
  std::string fingerprint;
  std::string floor_name;
  double floor_depth = 0;
  int scenarios = 0;
  std::vector<Row> rows;             // by mean depth, highest first
  std::vector<std::string> refused;  // "file: why"
};

Leaderboard BuildLeaderboard(const std::string& dir, const std::vector<scenarios::Scenario>& suite);
std::string LeaderboardMarkdown(const Leaderboard& lb);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_LEADERBOARD_H_

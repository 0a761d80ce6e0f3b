// Degenerate baselines: what an answer that reads nothing scores on the suite, computed exactly
// from the ground truth (rca-bench.md section 5). Every agent's depth is printed beside the best
// of them, the floor.
//
//   std::vector<Baseline> b = ComputeBaselines(suite.scenarios);   // runnable only
//   const Baseline& floor = b.front();                             // the highest depth
//   for (const Baseline& d : Degenerate(b)) ...                    // constant answers >= 0.20
//
// Strategies: always-<component> for every component of the vocabulary but `unknown`,
// always-abstain (`unknown`), uniform-random (the exact expectation of a uniform pick among all
// 14 components, abstention included), most-frequent-root-cause (always the commonest root cause;
// it equals one always-X row and is listed to name it), and the oracle (the root cause of each
// scenario, which must score 1.0: it checks the credit tables).
#ifndef SLURM_RCA_GRADER_BASELINES_H_
#define SLURM_RCA_GRADER_BASELINES_H_

#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace slurm_rca::grader {

struct Baseline {
  std::string name;     // always-db.mysql, always-abstain, uniform-random, ...
  double depth = 0;     // mean partial credit over the scenarios
  // The lowest mean Brier score a constant confidence can reach against exact correctness
  // (p = k/n gives p(1 - p)); none for strategies without one answer (uniform, oracle).
  std::optional<double> brier;
  int right = 0;        // scenarios where the answer earns full credit
};

// Runnable scenarios only unless include_blocked. Sorted by depth (highest first), then name.
std::vector<Baseline> ComputeBaselines(const std::vector<scenarios::Scenario>& suite,
                                       bool include_blocked = false);

// The constant answers at or above `threshold`: always-X, and always-abstain when
// `with_abstain` (issue #17's gate: every constant answer, abstention included, below 0.20).
std::vector<Baseline> Degenerate(const std::vector<Baseline>& baselines, double threshold = 0.20,
                                 bool with_abstain = false);

// The table `rca-bench baselines` prints: a header line, then `depth  brier  strategy` rows
// (the first marked as the floor), at most `top` rows (0: all).
std::string BaselineTable(const std::vector<Baseline>& baselines, int scenarios, bool runnable,
                          int top);

}  // namespace slurm_rca::grader

#endif  // SLURM_RCA_GRADER_BASELINES_H_

// The invariants of a scenario (rca-bench.md section 6) and of a suite, each problem with a rule
// id, file and line, all reported at once.
//
//   std::vector<Problem> p = CheckFile("scenarios/S06-state-save-unwritable/scenario.yaml");
//   Suite suite = LoadSuite(ScenarioPaths(paths.scenarios));   // base::DataPaths, from main
#ifndef SLURM_RCA_SCENARIOS_VALIDATE_H_
#define SLURM_RCA_SCENARIOS_VALIDATE_H_

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"

namespace slurm_rca::scenarios {

struct RuleInfo {
  std::string_view id;
  std::string_view meaning;
};
// Every rule id Validate, CheckFile, LoadSuite and the parser can report.
const std::vector<RuleInfo>& Rules();

// The invariants of one parsed scenario.
std::vector<Problem> Validate(const Scenario& s);

// Parse, then validate; a file named scenario.yaml must sit in a directory named after its id.
std::vector<Problem> CheckFile(const std::string& path);

struct Suite {
  std::vector<Scenario> scenarios;  // those that parsed, in path order
  std::vector<Problem> problems;    // every file's, then duplicate ids and canaries
};
Suite LoadSuite(const std::vector<std::string>& paths);

// DIR/*/scenario.yaml, sorted.
std::vector<std::string> ScenarioPaths(const std::string& dir);

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_VALIDATE_H_

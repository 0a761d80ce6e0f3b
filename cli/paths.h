// Where rca-bench's data is, resolved once in main. Its own header so that every command file
// can read it without the rest of common.h.
#ifndef SLURM_RCA_CLI_PATHS_H_
#define SLURM_RCA_CLI_PATHS_H_

#include <optional>
#include <string>

#include "base/paths.h"

namespace slurm_rca::cli {

// Where the scenarios, bundles, graph and agent configurations are, resolved once in main:
// $SLURM_RCA_SCENARIOS, $SLURM_RCA_FIXTURES, $SLURM_RCA_GRAPH, $SLURM_RCA_CONFIGS, each else its
// place in the tree rca-bench was built from. No library reads these variables; main hands the
// paths on (scenarios::SetFixturesRoot, grader::SetGraphDigest, options structs).
base::DataPaths ResolveDataPaths();
// What main resolved; the commands read their paths here.
const base::DataPaths& Paths();
void SetPaths(const base::DataPaths& paths);
// A variable of this process's environment; nullopt when unset. What main gives a library that
// needs one (agents::MakeBackend's API key).
std::optional<std::string> ProcessEnvironment(const std::string& name);

}  // namespace slurm_rca::cli

#endif  // SLURM_RCA_CLI_PATHS_H_

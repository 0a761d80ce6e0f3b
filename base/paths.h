// Where the project's data lives: the scenarios, their recorded bundles, the causal graph, the
// agent configurations and the source tree they came from. A binary resolves it once, in main
// (rca-bench: cli::ResolveDataPaths reads its SLURM_RCA_* variables and falls back to the
// installed data beside the binary, then to the tree it was built from), and hands it to the
// libraries that need a path; no library reads the environment or a compiled-in path. A test
// builds it with DataPaths::Under(its source tree).
//
//   base::DataPaths paths = base::DataPaths::Under("/src/slurm-rca");
//   paths.fixtures = "/data/bundles";                 // one root moved, the others kept
//   scenarios::SetFixturesRoot(paths.fixtures);
#ifndef SLURM_RCA_BASE_PATHS_H_
#define SLURM_RCA_BASE_PATHS_H_

#include <optional>
#include <string>

namespace slurm_rca::base {

// The data an installed binary ships with: BIN/../share/slurm-rca for the binary at BIN/NAME
// (/usr/bin/rca-bench: /usr/share/slurm-rca; a package unpacked under ROOT: ROOT/usr/share/...),
// when that directory exists. A binary in a build tree has none and uses its source tree.
// The layout under it is the repository's: scenarios/, fixtures/, skills/, agents/graph/, ...
std::optional<std::string> InstalledDataDir();

// InstalledDataDir() when there is one, else the source tree the binary was built from.
std::string DataRoot(const std::string& built_from);

struct DataPaths {
  std::string source;     // the tree: guard/testdata, the names listings print relative to it
  std::string scenarios;  // */scenario.yaml
  std::string fixtures;   // recorded bundles: fixtures/<id> (clean), fixtures/<set>/<id>
  std::string graph;      // the causal graph, agents/graph/graph.yaml
  std::string configs;    // agent configurations, agents/configs/<name>.yaml
  std::string lab_templates;  // the live lab's configuration templates, scenarios/live/templates

  // Every path inside the tree at source, where the repository keeps it.
  static DataPaths Under(const std::string& source);
};

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_PATHS_H_

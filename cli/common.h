// What rca-bench's command groups share: exit codes, loading the suite, the options every
// lab-starting command takes, and the interface of a group.
#ifndef SLURM_RCA_CLI_COMMON_H_
#define SLURM_RCA_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/paths.h"
#include "scenarios/scenario.h"
#include "scenarios/validate.h"

namespace slurm_rca::cli {

inline constexpr int kUsage = 2;

// The lab directory: $SLURM_RCA_LAB_DIR, else /tmp/slurm-rca-lab.
std::string DefaultDir();
// Prints "rca-bench: WHAT" to stderr; returns 1.
int Fail(const std::string& what);

// Loads the default suite (or PATHs: files, scenario or suite directories). An invalid argument
// when a PATH names no scenario (a usage error: print it with Fail, exit kUsage). A suite that
// loads with problems is a suite; its problems say what is wrong.
base::Result<scenarios::Suite> LoadScenarios(const std::vector<std::string>& args);
// A set recorded on another release than Debian's may hold only some tasks: the suite is cut to
// the tasks it holds, and says so. The 22.05 sets must be complete.
void CutToRecorded(scenarios::Suite* suite);
// The scenario named by its id or task id; nullptr (and a message) when none.
const scenarios::Scenario* FindScenario(const scenarios::Suite& suite, const std::string& id);

// --profile clean|busy and --seed N of the commands that bring up a lab.
// --profile and --seed. with_large: `large` is offered too (cluster up only: the scenarios are
// recorded and run on the clean and busy labs).
void AddProfile(CLI::App* c, std::string* profile, std::uint64_t* seed, bool with_large = false);
// --slurm PREFIX: a release built by scripts/build-slurm.sh.
void AddSlurm(CLI::App* c, std::string* prefix);
// --dir DIR: the lab directory (default DefaultDir()).
void AddLabDir(CLI::App* c, std::string* dir);

// A group of subcommands. Add*Commands registers them on the app; after parsing, Run runs the
// one the command line chose and returns its exit code, or nullopt when it chose none of these.
class CommandGroup {
 public:
  virtual ~CommandGroup() = default;
  virtual std::optional<int> Run() = 0;
};

std::unique_ptr<CommandGroup> AddLabCommands(CLI::App& app);
std::unique_ptr<CommandGroup> AddScenarioCommands(CLI::App& app);
std::unique_ptr<CommandGroup> AddScoringCommands(CLI::App& app);
std::unique_ptr<CommandGroup> AddAgentCommands(CLI::App& app);
std::unique_ptr<CommandGroup> AddBundleCommands(CLI::App& app);

}  // namespace slurm_rca::cli

#endif  // SLURM_RCA_CLI_COMMON_H_

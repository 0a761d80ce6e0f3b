// rca-bench: the benchmark's one command. Five groups of subcommands, each in its own file, each
// registering its options and calling a library: the live lab (cluster, fault: lab_commands.cc),
// the scenarios (validate, list, show, export, inject, heal, record, smoke:
// scenario_commands.cc), scoring (baselines, score, leaderboard, fingerprint:
// scoring_commands.cc), the agents (run, diagnose, collect, configs, graph, fit-abstention:
// agent_group.cc and agent_commands.cc) and the evidence bundles' files (bundle pack, unpack,
// digest: bundle_commands.cc).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/build_info.h"
#include "cli/common.h"
#include "cli/parse.h"
#include "grader/score.h"
#include "scenarios/live/lab.h"
#include "scenarios/measure.h"

namespace sc = slurm_rca::scenarios;
using slurm_rca::cli::kUsage;

int main(int argc, char** argv) {
  CLI::App app{
      "rca-bench: an incident-diagnosis benchmark for the Slurm control plane.\n"
      "A real Slurm control plane on this machine and its faults; scenarios recorded into evidence "
      "bundles; agents (configurations A-E, reference agents) run over them; their answers scored "
      "beside the floor of answers that read nothing."};
  app.set_version_flag("--version", slurm_rca::base::VersionLine("rca-bench"),
                       "Print the version and the git revision built from, and exit");
  app.require_subcommand(1);
  std::string bundle_set = sc::DefaultBundleSet();
  app.add_option("--bundles", bundle_set,
                 "Which recorded evidence the suite is measured, replayed and fingerprinted on: "
                 "busy (fixtures/busy/, the lab under its background profile), clean "
                 "(fixtures/, the bare lab), both on Slurm 22.05, or busy-25.11 "
                 "(fixtures/busy-25.11/, the busy lab on Slurm 25.11)")
      ->check(CLI::IsMember(sc::BundleSets()))
      ->capture_default_str();
  std::string slurm_release;
  app.add_option("--slurm-release", slurm_release,
                 "The Slurm release whose busy recordings to use: 22.05 (the busy set) or 25.11 "
                 "(busy-25.11: the suite is cut to the tasks whose evidence shows there, and says "
                 "which it left out); "
                 "instead of --bundles")
      ->check(CLI::IsMember({"22.05", "25.11"}))
      ->excludes("--bundles");
  // `rca-bench run --slurm-release 25.11` as well as `rca-bench --slurm-release 25.11 run`.
  app.fallthrough();
  std::vector<std::unique_ptr<slurm_rca::cli::CommandGroup>> groups;
  groups.push_back(slurm_rca::cli::AddLabCommands(app));
  groups.push_back(slurm_rca::cli::AddScenarioCommands(app));
  groups.push_back(slurm_rca::cli::AddScoringCommands(app));
  groups.push_back(slurm_rca::cli::AddAgentCommands(app));
  groups.push_back(slurm_rca::cli::AddBundleCommands(app));

  if (std::optional<int> code = slurm_rca::cli::ParseOrExit(
          app, argc, argv, {.binary = "rca-bench", .exit_code = kUsage})) {
    return *code;
  }
  sc::SetDefaultBundleSet(slurm_release.empty() ? bundle_set : sc::BusySetOfRelease(slurm_release));
  // The data paths, resolved once and handed to the libraries that need them.
  slurm_rca::cli::SetPaths(slurm_rca::cli::ResolveDataPaths());
  sc::SetFixturesRoot(slurm_rca::cli::Paths().fixtures);
  slurm_rca::live::SetLabTemplates(slurm_rca::cli::Paths().lab_templates);
  slurm_rca::grader::SetGraphDigest(
      slurm_rca::grader::GraphDigestOfFile(slurm_rca::cli::Paths().graph));

  for (auto& group : groups) {
    if (std::optional<int> code = group->Run()) return *code;
  }
  return kUsage;  // not reached: a subcommand is required
}

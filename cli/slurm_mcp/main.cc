// slurm-mcp: the read-only MCP server for Slurm (stdio or Streamable HTTP), and one-shot verbs
// for people. A table of subcommands, each a function of commands.h; what serve serves is
// assembled by the server library (server/surface.h).
#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "base/build_info.h"
#include "base/paths.h"
#include "cli/parse.h"
#include "cli/slurm_mcp/commands.h"
#include "guard/check.h"
#include "guard/policy.h"

#ifndef SLURM_MCP_DEFAULT_SKILLS_DIR
#define SLURM_MCP_DEFAULT_SKILLS_DIR ""
#endif

int main(int argc, char** argv) {
  namespace sm = slurm_rca::cli::slurm_mcp;
  CLI::App app{
      "slurm-mcp: a read-only MCP server for Slurm. Tools: slurm_overview, slurm_query, "
      "slurm_describe.\nEvery Slurm command it runs is checked by the guard's allowlist first "
      "(slurm-guard policy)."};
  app.set_version_flag("--version", slurm_rca::base::VersionLine("slurm-mcp"),
                       "Print the version and the git revision built from, and exit");
  app.require_subcommand(1);
  sm::BackendFlags flags;
  sm::ServeOptions serve_options;
  // The runbooks installed beside the binary (/usr/bin/slurm-mcp: /usr/share/slurm-rca/skills),
  // else the source tree's; the help names no build machine's path (the man page is made from it).
  std::optional<std::string> installed = slurm_rca::base::InstalledDataDir();
  serve_options.skills_dir = installed ? *installed + "/skills" : SLURM_MCP_DEFAULT_SKILLS_DIR;
  sm::OneShotOptions one_shot;
  sm::CallOptions call_options;
  CLI::App* serve = sm::AddServe(app, serve_options, flags);
  CLI::App* tools = sm::AddTools(app, one_shot);
  CLI::App* overview = sm::AddOverview(app, one_shot, flags);
  CLI::App* query = sm::AddQuery(app, one_shot, flags);
  CLI::App* describe = sm::AddDescribe(app, one_shot);
  CLI::App* call = sm::AddCall(app, call_options);
  if (std::optional<int> code = slurm_rca::cli::ParseOrExit(
          app, argc, argv, {.binary = "slurm-mcp", .exit_code = sm::kUsage})) {
    return *code;
  }
  // Before any thread starts, so that every thread inherits the mask (commands.h).
  if (*serve && !serve_options.http.empty()) sm::BlockStopSignals();

  // The allowlist checks its own examples before anything can run a command: serve, overview and
  // query on a live cluster. A replayed bundle, tools, describe and call run none and skip it; it
  // was about a seventh of the CPU of a replay child's start and three calls (the guard's 16
  // patterns compiled, then every example checked), and rca-bench run starts one per task run.
  const bool runs_commands = (*serve || *overview || *query) && flags.replay.empty();
  if (runs_commands) {
    slurm_rca::guard::Guard self_test_guard(slurm_rca::guard::GuardOptions{.clusters = {"rca"}});
    if (auto failures = slurm_rca::guard::SelfTest(self_test_guard); !failures.empty()) {
      std::cerr << "slurm-mcp: the allowlist failed its self-test: " << failures.front() << "\n";
      return 70;
    }
  }

  if (*call) return sm::Call(call_options);
  if (*tools) return sm::ListTools(one_shot);
  if (*describe) return sm::Describe(one_shot);
  if (*overview) return sm::Overview(flags, one_shot);
  if (*query) return sm::Query(flags, one_shot);
  // An explicit --skills must work; the built-in default may be absent (an installed binary).
  serve_options.skills_explicit = serve->count("--skills") > 0;
  return sm::Serve(std::move(serve_options), std::move(flags));
}

// The agent commands of rca-bench: run, diagnose, collect, configs, graph, fit-abstention. Each
// takes its parsed options and the loaded suite and returns the exit code (0 ok, 1 failure,
// 2 usage).
#ifndef SLURM_RCA_CLI_AGENT_COMMANDS_H_
#define SLURM_RCA_CLI_AGENT_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agents/llm/backend.h"
#include "mcp/auth/client_credentials.h"
#include "mcp/backend/live_flags.h"
#include "scenarios/scenario.h"

namespace slurm_rca::cli {

struct ModelOptions {
  agents::BackendConfig backend;  // kind empty: no model (reference configurations only)
};

struct RunCommandOptions {
  std::vector<std::string> configs;  // names under agents/configs, or files
  ModelOptions model;
  std::string scenarios = "all";     // all, or comma-separated ids / task ids
  std::string mode = "replay";       // replay | live
  int repeats = 1;
  int first_repeat = 1;              // --slurm array tasks run one repeat each
  std::string out = "results";
  double offset_s = -1;              // replay: <0 means each scenario's observe_s
  std::string slurm_script;          // write a job-array script here instead of running
  bool score = true;
  std::string slurm_mcp;             // path; empty: next to rca-bench
  int port_base = 31800;             // live
  std::string lab_dir = "/tmp/rca-bench-run";  // live
  std::string profile = "clean";     // live: the lab's background, clean or busy
  std::uint64_t seed = 1;            // live: the busy profile's seed
  std::string slurm_prefix;          // live: a built Slurm release (scripts/build-slurm.sh); "": Debian's
  std::string prices;                // price file (agents/prices.h); "": cost unmeasured
  std::int64_t max_tokens_total = 0;   // stop between task runs once reached; 0: no cap
  std::optional<double> max_cost_usd;  // the same in USD; needs prices
  int jobs = 1;                        // task runs at once (replay only)
  std::int64_t requests_per_minute = 0;  // the model endpoint's limits, shared by every worker;
  std::int64_t tokens_per_minute = 0;    // 0: none
  bool fresh = false;                  // discard OUT/run.journal instead of resuming from it
};
// rca-bench run's exit status when it stopped at --max-tokens-total or --max-cost.
// `run` records each finished task run in OUT/run.journal; run again on the same OUT with the same
// configurations, model, tasks and suite it keeps those and makes the rest (agents/run_journal.h).
inline constexpr int kStoppedAtCap = 3;
int RunCommand(const RunCommandOptions& o, const std::vector<scenarios::Scenario>& suite);

struct DiagnoseOptions {
  std::string config = "B";
  ModelOptions model;
  std::string symptom;
  mcp::LiveFlags cluster;               // live: --slurm-conf, --log-file, --clusters
  std::string replay;                   // or a bundle, for trying it out
  double offset_s = 120;
  std::string transcript;               // where to write it; empty: none
  std::string slurm_mcp;
  // Or a slurm-mcp already serving (--mcp-url), its tokens (--mcp-token-file, --mcp-oauth-*) and
  // the CAs its certificate is checked against (--mcp-tls-ca).
  std::string mcp_url;
  mcp::auth::ClientTokenFlags mcp_auth;
  std::string mcp_tls_ca;
  bool json = false;
};
int DiagnoseCommand(const DiagnoseOptions& o);

// Merges the per-task submissions of a --slurm run (DIR/parts/*) into one submission per
// configuration, model and repeat in OUT, transcripts included.
int CollectCommand(const std::string& parts_dir, const std::string& out,
                   const std::vector<scenarios::Scenario>& suite);

int ConfigsCommand(const std::vector<scenarios::Scenario>& suite);
int GraphCommand(const std::string& what, const std::string& component,
                 const std::string& severity);

// The abstention threshold that maximizes depth on the development split of `config` (E) for a
// submission of the configuration it extends (D): prints the table and the threshold.
int FitAbstentionCommand(const std::string& submission, const std::string& config,
                         const std::vector<scenarios::Scenario>& suite);

}  // namespace slurm_rca::cli

#endif  // SLURM_RCA_CLI_AGENT_COMMANDS_H_

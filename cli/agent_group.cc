// rca-bench run, diagnose, collect, configs, graph, fit-abstention: the agents.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/agent_commands.h"
#include "cli/common.h"
#include "scenarios/measure.h"

namespace slurm_rca::cli {
namespace {

namespace sc = slurm_rca::scenarios;

class AgentCommandGroup : public CommandGroup {
 public:
  explicit AgentCommandGroup(CLI::App& app) {
    // --- agents: run, diagnose, collect, configs, graph, fit-abstention -------------------------
    auto add_model = [](CLI::App* cmd, slurm_rca::cli::ModelOptions* m) {
      cmd->add_option("--backend", m->backend.kind,
                      "Model back-end: openai (any OpenAI-compatible "
                      "server: vLLM, llama.cpp, Ollama), anthropic, or scripted (tests)")
          ->check(CLI::IsMember({"openai", "anthropic", "scripted"}));
      cmd->add_option("--model", m->backend.model, "Model name the endpoint knows");
      cmd->add_option("--base-url", m->backend.base_url,
                      "Endpoint (default: $OPENAI_BASE_URL or https://api.openai.com/v1; "
                      "https://api.anthropic.com)");
      cmd->add_option("--api-key-env", m->backend.api_key_env,
                      "Variable holding the key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)");
      cmd->add_option("--ca-file", m->backend.ca_file, "PEM of trusted CAs for HTTPS")
          ->check(CLI::ExistingFile);
      cmd->add_option("--script", m->backend.script, "Scripted back-end: the JSON script")
          ->check(CLI::ExistingFile);
      cmd->add_option("--max-tokens", m->backend.max_tokens, "Per reply")->capture_default_str();
      cmd->add_option("--timeout", m->backend.timeout_s, "Seconds per model request")
          ->capture_default_str();
      cmd->add_option_function<std::int64_t>(
          "--model-seed", [m](const std::int64_t& seed) { m->backend.seed = seed; },
          "Seed sent with every request (OpenAI-compatible back-ends: OpenAI, vLLM, llama.cpp; "
          "Anthropic's API has none and refuses it here); the submission header records it. "
          "Default: none sent");
    };
    run_cmd = app.add_subcommand(
        "run",
        "Run configurations over scenarios (replay: the recorded bundles; live: a fresh lab "
        "with the fault injected), write submissions and transcripts, score them");
    run_cmd
        ->add_option("--config", run_options.configs,
                     "Configuration(s): A-E, folk, graphwalk, ticketonly (rca-bench configs), or "
                     "a file")
        ->required();
    add_model(run_cmd, &run_options.model);
    run_cmd->add_option("--scenarios", run_options.scenarios, "all, or comma-separated ids")
        ->capture_default_str();
    run_cmd->add_option("--mode", run_options.mode, "replay or live (root)")
        ->check(CLI::IsMember({"replay", "live"}))
        ->capture_default_str();
    run_cmd->add_option("--repeats", run_options.repeats, "Runs of each configuration")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    run_cmd->add_option("--first-repeat", run_options.first_repeat, "Number of the first repeat")
        ->check(CLI::Range(1, 100000));
    run_cmd
        ->add_option("--out", run_options.out,
                     "Results directory. OUT/run.journal records each finished task run; run "
                     "again on the same OUT (same configurations, model, tasks, repeats, prices "
                     "and suite fingerprint) and it keeps those, redoes the ones a kill or a cap "
                     "cut, and writes the same submissions; a directory of another run is refused "
                     "(exit 2)")
        ->capture_default_str();
    run_cmd->add_flag("--fresh", run_options.fresh,
                      "Discard OUT/run.journal and run every task run again, instead of resuming");
    run_cmd
        ->add_option("--jobs", run_options.jobs,
                     "Task runs at once in this process, each with its own slurm-mcp child, "
                     "transcript and model connection; submissions are the same as with 1 apart "
                     "from wall times. --mode live takes only 1")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    run_cmd
        ->add_option("--requests-per-minute", run_options.requests_per_minute,
                     "HTTP model endpoint: at most this many requests in any minute, over every "
                     "worker (default: no limit). A 429 or Retry-After pauses every worker "
                     "whatever this says")
        ->check(CLI::PositiveNumber);
    run_cmd
        ->add_option("--tokens-per-minute", run_options.tokens_per_minute,
                     "HTTP model endpoint: at most this many tokens in any minute, over every "
                     "worker (a request counts bytes/4 + --max-tokens until its reply's usage "
                     "comes; default: no limit)")
        ->check(CLI::PositiveNumber);
    run_cmd->add_option("--offset", run_options.offset_s,
                        "Replay: seconds after the fault the evidence is shown at (default: each "
                        "scenario's observe_s)");
    run_cmd->add_option("--slurm", run_options.slurm_script,
                        "Write a Slurm job-array script (one task per configuration x scenario x "
                        "repeat) instead of running, and make OUT/parts (--out must be absolute, on "
                        "a file system the compute nodes share); merge with rca-bench collect");
    run_cmd->add_flag("--no-score", no_score, "Write the submissions only");
    run_cmd->add_option("--slurm-mcp", run_options.slurm_mcp,
                        "slurm-mcp binary (default: next to "
                        "rca-bench)");
    run_cmd->add_option("--port-base", run_options.port_base, "Live: the lab's port base")
        ->capture_default_str();
    run_cmd->add_option("--lab-dir", run_options.lab_dir, "Live: the lab's directory")
        ->capture_default_str();
    run_cmd
        ->add_option("--prices", run_options.prices,
                     "Price file, USD per million input / output / cached_input (and Anthropic "
                     "cache_write) tokens per model (agents/README.md); without it cost is "
                     "unmeasured")
        ->check(CLI::ExistingFile);
    run_cmd
        ->add_option("--max-tokens-total", run_options.max_tokens_total,
                     "Stop between task runs once this many input+output tokens are spent "
                     "(exit 3; running task runs finish; the run is resumable)")
        ->check(CLI::PositiveNumber);
    run_cmd
        ->add_option("--max-cost", run_options.max_cost_usd,
                     "Stop between task runs once this many USD are spent (needs --prices; exit 3; "
                     "the run is resumable)")
        ->check(CLI::PositiveNumber);
    AddProfile(run_cmd, &run_options.profile, &run_options.seed);
    // --slurm is taken here (the array script), so the lab's release is --lab-slurm.
    run_cmd
        ->add_option("--lab-slurm", run_options.slurm_prefix,
                     "--mode live: a Slurm release built by scripts/build-slurm.sh (its prefix) "
                     "for the lab, instead of Debian's 22.05")
        ->check(CLI::ExistingDirectory);

    diagnose = app.add_subcommand(
        "diagnose",
        "On call: one configuration diagnoses a symptom on a live cluster through "
        "slurm-mcp, read-only, and proposes actions without taking any");
    diagnose->add_option("--config", diag.config, "Configuration")->capture_default_str();
    diagnose->add_option("--symptom", diag.symptom, "What is wrong, in the reporter's words")
        ->required();
    add_model(diagnose, &diag.model);
    diagnose->add_option("--slurm-conf", diag.cluster.slurm_conf, "SLURM_CONF of the cluster");
    diagnose->add_option("--log-file", diag.cluster.log_files,
                         "DAEMON=PATH of a Slurm log, repeatable");
    diagnose->add_option("--clusters", diag.cluster.clusters, "Cluster names -M may name");
    diagnose->add_option("--replay", diag.replay, "A recorded bundle instead of the cluster");
    diagnose->add_option("--offset", diag.offset_s, "Replay: seconds after the fault")
        ->capture_default_str();
    diagnose->add_option("--transcript", diag.transcript, "Write the run's transcript here");
    diagnose->add_option("--slurm-mcp", diag.slurm_mcp, "slurm-mcp binary");
    auto* mcp_url =
        diagnose
            ->add_option("--mcp-url", diag.mcp_url,
                         "Read through a slurm-mcp already serving Streamable HTTP at this "
                         "http(s)://HOST:PORT/mcp URL (a site's shared server, perhaps behind "
                         "OAuth), instead of starting one; not with configuration A, whose raw "
                         "reads need the cluster itself")
            ->type_name("URL");
    diagnose
        ->add_option("--mcp-token-file", diag.mcp_auth.token_file,
                     "--mcp-url: send 'Authorization: Bearer <file contents>' (read again after "
                     "a 401)")
        ->needs(mcp_url);
    diagnose
        ->add_option("--mcp-oauth-issuer", diag.mcp_auth.issuer,
                     "--mcp-url: get access tokens from this OAuth issuer by the client "
                     "credentials grant, renewed when they expire or are refused")
        ->type_name("URL")
        ->needs(mcp_url);
    diagnose->add_option("--mcp-oauth-client-id", diag.mcp_auth.client_id,
                         "With --mcp-oauth-issuer: the client id");
    diagnose
        ->add_option("--mcp-oauth-client-secret-file", diag.mcp_auth.client_secret_file,
                     "With --mcp-oauth-issuer: a file holding the client secret")
        ->type_name("FILE");
    diagnose->add_option("--mcp-oauth-scope", diag.mcp_auth.scope,
                         "With --mcp-oauth-issuer: the scopes asked for (slurm:read, "
                         "slurm:read:own, slurm:logs)");
    diagnose
        ->add_option("--mcp-oauth-resource", diag.mcp_auth.resource,
                     "With --mcp-oauth-issuer: the server's --auth-audience (default: --mcp-url)")
        ->type_name("URI");
    diagnose
        ->add_option("--mcp-tls-ca", diag.mcp_tls_ca,
                     "--mcp-url https: check the server's certificate against the CAs in this PEM "
                     "file instead of the system's")
        ->check(CLI::ExistingFile)
        ->needs(mcp_url);
    mcp_url->excludes(diagnose->get_option("--replay"));
    diagnose->add_flag("--json", diag.json, "The answer as JSON");

    collect = app.add_subcommand(
        "collect",
        "Merge the parts of a --slurm run into one submission per configuration, model "
        "and repeat");
    collect->add_option("parts", parts_dir, "The parts directory (OUT/parts)")->required();
    collect->add_option("--out", collect_out, "Where the merged submissions go")
        ->capture_default_str();

    configs_cmd = app.add_subcommand("configs",
                                     "The agent configurations (agents/configs) with their hashes");

    graph_cmd = app.add_subcommand(
        "graph", "The dependency graph: causes COMPONENT (and what is ruled out), stats, summary");
    graph_cmd->add_option("what", graph_what, "causes, stats or summary")
        ->check(CLI::IsMember({"causes", "stats", "summary"}))
        ->capture_default_str();
    graph_cmd->add_option("component", graph_component, "The component showing the symptom");
    graph_cmd->add_option("--severity", graph_severity, "halts or degrades")->capture_default_str();

    fit = app.add_subcommand("fit-abstention",
                             "Fit configuration E's abstention threshold on its development split "
                             "from a submission of D");
    fit->add_option("submission", fit_submission, "A D submission")->required();
    fit->add_option("--config", fit_config, "The configuration declaring the split")
        ->capture_default_str();
  }

  std::optional<int> Run() override {
    if (*graph_cmd) {
      if (graph_what == "causes" && graph_component.empty()) {
        std::cerr << "rca-bench: graph causes COMPONENT\n";
        return kUsage;
      }
      return slurm_rca::cli::GraphCommand(graph_what, graph_component, graph_severity);
    }
    if (*diagnose) return slurm_rca::cli::DiagnoseCommand(diag);
    if (*run_cmd || *collect || *configs_cmd || *fit) {
      base::Result<sc::Suite> loaded = LoadScenarios({});
      if (!loaded.ok()) {
        Fail(loaded.status().message());
        return kUsage;
      }
      sc::Suite suite = std::move(loaded).value();
      if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
      CutToRecorded(&suite);
      if (*configs_cmd) return slurm_rca::cli::ConfigsCommand(suite.scenarios);
      if (*collect) return slurm_rca::cli::CollectCommand(parts_dir, collect_out, suite.scenarios);
      if (*fit)
        return slurm_rca::cli::FitAbstentionCommand(fit_submission, fit_config, suite.scenarios);
      run_options.score = !no_score;
      return slurm_rca::cli::RunCommand(run_options, suite.scenarios);
    }
    return std::nullopt;
  }

 private:
  slurm_rca::cli::RunCommandOptions run_options;
  CLI::App* run_cmd = nullptr;
  bool no_score = false;
  slurm_rca::cli::DiagnoseOptions diag;
  CLI::App* diagnose = nullptr;
  std::string parts_dir, collect_out = "results";
  CLI::App* collect = nullptr;
  CLI::App* configs_cmd = nullptr;
  std::string graph_what = "causes", graph_component, graph_severity = "halts";
  CLI::App* graph_cmd = nullptr;
  std::string fit_submission, fit_config = "E";
  CLI::App* fit = nullptr;
};

}  // namespace

std::unique_ptr<CommandGroup> AddAgentCommands(CLI::App& app) {
  return std::make_unique<AgentCommandGroup>(app);
}

}  // namespace slurm_rca::cli

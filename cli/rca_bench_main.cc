// rca-bench: the benchmark's command: the live Slurm control plane (`cluster`), its fault
// primitives (`fault`) and the scenarios (`validate`, `list`, `show`). The logic is in scenarios/.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <chrono>
#include <sstream>

#include "agents/graph/graph.h"
#include "cli/agent_commands.h"
#include "grader/baselines.h"
#include "grader/leaderboard.h"
#include "grader/score.h"
#include "scenarios/live/capture.h"
#include "scenarios/live/record.h"
#include "scenarios/live/runner.h"
#include "scenarios/measure.h"
#include "scenarios/views.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"
#include "scenarios/scenario.h"
#include "scenarios/validate.h"
#include "scenarios/vocabulary.h"

namespace {

using slurm_rca::live::FaultTarget;
using slurm_rca::live::Lab;
using slurm_rca::live::LabOptions;

constexpr int kUsage = 2;

std::string DefaultDir() {
  const char* env = std::getenv("SLURM_RCA_LAB_DIR");
  return env && *env ? env : "/tmp/slurm-rca-lab";
}

int Fail(const std::string& what) {
  std::cerr << "rca-bench: " << what << "\n";
  return 1;
}

// --- scenarios: validate, list, show -------------------------------------------------------

namespace sc = slurm_rca::scenarios;

// PATHs (files, scenario directories or suite directories) to scenario.yaml files; "" on success.
std::string ExpandScenarioPaths(const std::vector<std::string>& args,
                                std::vector<std::string>* out) {
  namespace fs = std::filesystem;
  if (args.empty()) {
    std::string dir = sc::DefaultScenariosDir();
    if (!fs::is_directory(dir)) return "no scenario directory " + dir;
    *out = sc::ScenarioPaths(dir);
    if (out->empty()) return "no */scenario.yaml under " + dir;
    return "";
  }
  for (const std::string& a : args) {
    if (fs::is_regular_file(a)) {
      out->push_back(a);
    } else if (fs::is_regular_file(fs::path(a) / "scenario.yaml")) {
      out->push_back((fs::path(a) / "scenario.yaml").string());
    } else if (fs::is_directory(a)) {
      auto found = sc::ScenarioPaths(a);
      if (found.empty()) return "no */scenario.yaml under " + a;
      out->insert(out->end(), found.begin(), found.end());
    } else {
      return "no such file or directory: " + a;
    }
  }
  return "";
}

// Loads the default suite (or PATHs); exits via *code on a usage error.
bool LoadScenarios(const std::vector<std::string>& args, sc::Suite* suite, int* code) {
  std::vector<std::string> paths;
  if (std::string err = ExpandScenarioPaths(args, &paths); !err.empty()) {
    std::cerr << "rca-bench: " << err << "\n";
    *code = kUsage;
    return false;
  }
  *suite = sc::LoadSuite(paths);
  return true;
}

// A set recorded on another release than Debian's may hold only some tasks (the 25.11 set is
// recorded a session at a time): the suite is cut to the tasks it holds, and says so. The 22.05
// sets must be complete, so a missing bundle there stays an error.
void CutToRecorded(sc::Suite* suite) {
  const std::string& set = sc::DefaultBundleSet();
  if (sc::BundleSetRelease(set) == "22.05") return;
  std::vector<sc::Scenario> kept;
  std::vector<std::string> missing;
  for (sc::Scenario& s : suite->scenarios) {
    if (s.status == "runnable" && !sc::RecordedIn(s, set)) {
      missing.push_back(s.id);
    } else {
      kept.push_back(std::move(s));
    }
  }
  if (missing.empty()) return;
  std::cerr << "rca-bench: the " << set << " set (Slurm " << sc::BundleSetRelease(set)
            << ") holds " << kept.size() << " of " << kept.size() + missing.size()
            << " tasks; the others are left out (rca-bench list shows which), so its scores and "
               "floor are not comparable with the full suite's\n";
  suite->scenarios = std::move(kept);
}

int ValidateScenarios(const std::vector<std::string>& args, bool bundles) {
  sc::Suite suite;
  int code = 0;
  if (!LoadScenarios(args, &suite, &code)) return code;
  std::vector<sc::Problem> problems = suite.problems;
  int hops = 0, measured = 0;
  std::ostringstream other_sets;
  if (bundles) {
    for (const sc::Scenario& s : suite.scenarios) {
      sc::Measurement m = sc::MeasureScenario(s, sc::BundleDir(s.id));
      for (sc::Problem& p : sc::MeasurementProblems(s, m)) problems.push_back(std::move(p));
      for (const sc::HopResult& h : m.hops) {
        ++hops;
        measured += h.measured;
      }
    }
    // The other sets: every bundle they hold measures every hop; a scenario not recorded in one
    // is counted, not a problem (only the default set must be complete).
    for (const std::string& set : sc::BundleSets()) {
      if (set == sc::DefaultBundleSet()) continue;
      int recorded = 0, set_hops = 0, set_measured = 0, runnable = 0;
      for (const sc::Scenario& s : suite.scenarios) {
        if (s.status != "runnable") continue;
        ++runnable;
        if (!sc::RecordedIn(s, set)) continue;
        ++recorded;
        sc::Measurement m = sc::MeasureScenario(s, sc::BundleDir(s.id, set));
        for (sc::Problem& p : sc::MeasurementProblems(s, m)) {
          p.message = set + " set: " + p.message;
          problems.push_back(std::move(p));
        }
        for (const sc::HopResult& h : m.hops) {
          ++set_hops;
          set_measured += h.measured;
        }
      }
      other_sets << "; " << set << " (Slurm " << sc::BundleSetRelease(set) << "): " << recorded
                 << " of " << runnable << " recorded, " << set_measured << " of " << set_hops
                 << " hops measured";
    }
  }
  if (args.empty()) {
    for (sc::Problem& p : sc::SuiteMinimum(suite.scenarios, sc::DefaultScenariosDir())) {
      problems.push_back(std::move(p));
    }
  }
  // Scenarios written after the graph's freeze use none of the edges it measures.
  std::string freeze_error;
  auto freeze = slurm_rca::graph::ReadFreeze(slurm_rca::graph::DefaultFreezePath(), &freeze_error);
  auto graph = slurm_rca::graph::LoadGraphFile(slurm_rca::graph::DefaultGraphPath());
  if (!freeze || !graph.graph) {
    problems.push_back({slurm_rca::graph::DefaultFreezePath(), 0, "post-freeze-edge",
                        freeze ? "the graph does not load" : freeze_error});
  } else {
    for (sc::Problem& p : slurm_rca::graph::PostFreezeProblems(*graph.graph, *freeze, suite.scenarios)) {
      problems.push_back(std::move(p));
    }
  }
  for (const sc::Problem& p : problems) std::cout << p.ToString() << "\n";
  int runnable = 0;
  for (const sc::Scenario& s : suite.scenarios) runnable += s.status == "runnable";
  std::cerr << suite.scenarios.size() << " scenario(s), " << runnable << " runnable";
  if (bundles) {
    std::cerr << ", " << measured << " of " << hops << " hops measured in their "
              << sc::DefaultBundleSet() << " bundles" << other_sets.str();
  }
  std::cerr << ", " << problems.size() << " problem(s)\n";
  return problems.empty() ? 0 : 1;
}

int ListScenarios() {
  sc::Suite suite;
  int code = 0;
  if (!LoadScenarios({}, &suite, &code)) return code;
  // Every set, the default first (fewest calls is read from it), the others for comparison.
  std::vector<sc::SetMeasurements> sets = {
      {sc::DefaultBundleSet(), sc::MeasureSuite(suite.scenarios, sc::DefaultBundleSet())}};
  for (const std::string& set : sc::BundleSets()) {
    if (set != sc::DefaultBundleSet()) sets.push_back({set, sc::MeasureSuite(suite.scenarios, set)});
  }
  std::cout << sc::ScenarioTable(suite.scenarios, sets);
  if (!suite.problems.empty()) {
    std::cerr << "rca-bench: " << suite.problems.size() << " problem(s); run rca-bench validate\n";
    return 1;
  }
  return 0;
}

int ExportScenarios(const std::string& view) {
  sc::Suite suite;
  int code = 0;
  if (!LoadScenarios({}, &suite, &code)) return code;
  if (!suite.problems.empty()) {
    std::cerr << "rca-bench: " << suite.problems.size() << " problem(s); run rca-bench validate\n";
    return 1;
  }
  std::cout << sc::ExportView(suite.scenarios, sc::MeasureSuite(suite.scenarios),
                              view == "agent" ? sc::View::kAgent : sc::View::kScorer)
                   .dump(2)
            << "\n";
  return 0;
}

// The scenario named by its id or task id.
const sc::Scenario* FindScenario(const sc::Suite& suite, const std::string& id) {
  for (const sc::Scenario& s : suite.scenarios) {
    if (s.id == id || s.TaskId() == id) return &s;
  }
  std::cerr << "rca-bench: no scenario '" << id << "' (see rca-bench list)\n";
  return nullptr;
}

int ShowScenario(const std::string& id) {
  sc::Suite suite;
  int code = 0;
  if (!LoadScenarios({}, &suite, &code)) return code;
  const sc::Scenario* found = FindScenario(suite, id);
  if (!found) return kUsage;
  const sc::Scenario& s = *found;
  sc::Measurement m = sc::MeasureScenario(s, sc::BundleDir(s.id));
  std::cout << s.id << ": " << s.title << "\n  task id:    " << s.TaskId()
            << "\n  file:       " << s.file << "\n  family:     " << s.family << ", "
            << s.difficulty << ", " << s.status
            << (s.blocked_reason.empty() ? "" : " (" + s.blocked_reason + ")")
            << "\n  reported:   " << s.reported_node << "\n  root cause: " << s.RootCause()
            << "\n  observe_s:  " << s.observe_s << " (propagation " << s.PropagationS()
            << " s)\n  bundle:     "
            << (m.error.empty() ? m.bundle + " (" + std::to_string(m.trials) + " trials)"
                                : m.error)
            << "\n  ticket:     " << s.symptom << "\n  injection:  " << s.injection
            << "\n  faults:";
  for (const sc::FaultRef& f : s.faults) {
    std::cout << " " << f.name;
    for (const auto& [k, v] : f.target) std::cout << " --" << k << " " << v;
    if (f.at_s) std::cout << " at +" << f.at_s << " s";
    if (f.heal_at_s) std::cout << " healed at +" << *f.heal_at_s << " s";
    std::cout << ";";
  }
  std::cout << "\n  workload:";
  for (const sc::Workload& w : s.workload) {
    std::cout << " " << w.count << " x " << w.name << " (" << w.kind << ") at " << w.at_s << " s;";
  }
  std::cout << "\n  causal chain:\n";
  for (size_t i = 0; i < s.causal_chain.size(); ++i) {
    const sc::Hop& h = s.causal_chain[i];
    std::cout << "    t+" << h.observable_at_s << "s " << h.node << " (" << h.state << ")";
    if (i < m.hops.size()) {
      std::cout << (m.hops[i].measured ? "  MEASURED " : "  NOT MEASURED ") << m.hops[i].detail;
    }
    std::cout << "\n";
    for (const sc::Item& e : h.evidence) std::cout << "      - " << e.value << "\n";
  }
  std::cout << "  credit:\n";
  for (const sc::Credit& c : s.scoring) {
    std::cout << "    " << std::left << std::setw(22) << c.node << std::setw(6) << c.credit
              << c.rationale << "\n";
  }
  for (const sc::NodeNote& r : s.ruled_out) {
    std::cout << "  ruled out:  " << r.node << ": " << r.why << "\n";
  }
  for (const sc::NodeNote& d : s.distractors) {
    std::cout << "  distractor: " << d.node << ": " << d.why << "\n";
  }
  if (s.remediation_helpful) {
    for (const sc::Item& a : *s.remediation_helpful) std::cout << "  helpful:    " << a.value << "\n";
  }
  for (const sc::Item& a : s.harmful_actions) std::cout << "  harmful:    " << a.value << "\n";
  if (s.verification) std::cout << "  caveats:    " << s.verification->caveats << "\n";
  for (const sc::Problem& p : suite.problems) {
    if (p.file == s.file) std::cout << "  problem:    " << p.ToString() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rca-bench: an incident-diagnosis benchmark for the Slurm control plane.\n"
      "A real Slurm control plane on this machine and its faults; scenarios recorded into evidence "
      "bundles; agents (configurations A-E, reference agents) run over them; their answers scored "
      "beside the floor of answers that read nothing."};
  app.require_subcommand(1);
  std::string bundle_set = sc::DefaultBundleSet();
  app.add_option("--bundles", bundle_set,
                 "Which recorded evidence the suite is measured, replayed and fingerprinted on: "
                 "busy (fixtures/busy/, the lab under its background profile) or clean "
                 "(fixtures/, the bare lab)")
      ->check(CLI::IsMember(sc::BundleSets()))
      ->capture_default_str();
  std::string slurm_release;
  app.add_option("--slurm-release", slurm_release,
                 "The Slurm release whose busy recordings to use: 22.05 (the busy set) or 25.11 "
                 "(busy-25.11, partly recorded: the suite is cut to what it holds, and says so); "
                 "instead of --bundles")
      ->check(CLI::IsMember({"22.05", "25.11"}))
      ->excludes("--bundles");
  // `rca-bench run --slurm-release 25.11` as well as `rca-bench --slurm-release 25.11 run`.
  app.fallthrough();
  LabOptions options;
  options.dir = DefaultDir();
  // --profile clean|busy and --seed N of the commands that bring up a lab.
  auto add_profile = [](CLI::App* c, std::string* profile, std::uint64_t* seed) {
    c->add_option("--profile", *profile,
                  "The lab's background: clean (idle nodes, an empty queue) or busy (other "
                  "users' running and pending jobs, failed and timed-out jobs in accounting, "
                  "node4 drained for maintenance; scenarios/SCHEMA.md, \"The busy profile\")")
        ->check(CLI::IsMember(slurm_rca::live::LabProfiles()))
        ->capture_default_str();
    c->add_option("--seed", *seed,
                  "Seed of the busy profile: the same seed, the same users, jobs and timings")
        ->capture_default_str();
  };
  auto add_slurm = [](CLI::App* c, std::string* prefix) {
    c->add_option("--slurm", *prefix,
                  "A Slurm release built by scripts/build-slurm.sh (its prefix, e.g. "
                  "~/.cache/slurm-rca/slurm-25.11.4): the lab runs its daemons and clients "
                  "instead of Debian's 22.05")
        ->check(CLI::ExistingDirectory);
  };
  auto add_dir = [&](CLI::App* c) {
    c->add_option("--dir", options.dir, "Lab directory (env SLURM_RCA_LAB_DIR)")
        ->capture_default_str();
  };

  CLI::App* cluster = app.add_subcommand("cluster", "The live control plane");
  cluster->require_subcommand(1);
  CLI::App* up = cluster->add_subcommand(
      "up", "Start munged, MariaDB, slurmdbd, slurmctld and N slurmd on loopback");
  add_dir(up);
  up->add_option("--nodes", options.nodes, "Number of slurmd nodes")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  up->add_option("--port-base", options.port_base,
                 "MariaDB base+6, slurmctld base+17, slurmdbd base+19, slurmd base+200+i")
      ->check(CLI::Range(1024, 65000))
      ->capture_default_str();
  add_profile(up, &options.profile, &options.seed);
  add_slurm(up, &options.slurm_prefix);
  CLI::App* down = cluster->add_subcommand(
      "down", "Stop every daemon of the lab by PID, heal its faults, remove the lab directory");
  add_dir(down);
  bool json = false;
  CLI::App* status = cluster->add_subcommand("status", "Each daemon, its PID and its health");
  add_dir(status);
  status->add_flag("--json", json, "As JSON");
  CLI::App* env = cluster->add_subcommand("env", "Print how to point Slurm commands at the lab");
  add_dir(env);
  slurm_rca::live::CaptureOptions capture_options;
  CLI::App* capture = cluster->add_subcommand(
      "capture",
      "Bring up a private lab (port base 21800) in a known state, record what Slurm prints for "
      "every read the guard corpus allows, tear it down");
  capture->add_option("--out", capture_options.out_dir,
                      "Fixture directory (default: the source tree's fixtures/slurm-MAJOR.MINOR of "
                      "the release that answers, e.g. fixtures/slurm-22.05)");
  add_slurm(capture, &capture_options.slurm_prefix);
  capture->add_option("--port-base", capture_options.port_base,
                      "Ports of the private lab: base+6, +17, +19, +201.. (keep below 32768)")
      ->capture_default_str()
      ->check(CLI::Range(1024, 65000));
  slurm_rca::live::RecordOptions record_options;
  CLI::App* record = cluster->add_subcommand(
      "record",
      "Bring up a private lab (port base 20800), record every slurm-mcp topic before, during and "
      "after a fault into an evidence bundle, tear it down");
  record->add_option("--out", record_options.out_dir,
                     "Bundle directory (default: the source tree's fixtures/demo)");
  record->add_option("--port-base", record_options.port_base,
                     "Ports of the private lab: base+6, +17, +19, +201.. (keep below 32768)")
      ->capture_default_str()
      ->check(CLI::Range(1024, 65000));
  record->add_option("--fault", record_options.fault, "The fault (rca-bench fault list)")
      ->capture_default_str();
  add_profile(record, &record_options.profile, &record_options.seed);
  add_slurm(record, &record_options.slurm_prefix);

  CLI::App* fault = app.add_subcommand("fault", "Inject and heal faults in the live lab");
  fault->require_subcommand(1);
  fault->add_subcommand("list", "The fault primitives, what they do and what shows");
  CLI::App* fstatus = fault->add_subcommand("status", "The faults injected now");
  add_dir(fstatus);
  std::string fault_name;
  FaultTarget target;
  auto add_target = [&](CLI::App* c) {
    add_dir(c);
    c->add_option("name", fault_name, "Fault name (rca-bench fault list)")->required();
    c->add_option("--node", target.node, "Node (slurmd-kill, slurmd-pause, drain, gpu-fake)")
        ->capture_default_str();
    c->add_option("--daemon", target.daemon,
                  "net-drop: slurmdbd, slurmctld, mariadbd or slurmd-<node>")
        ->capture_default_str();
    c->add_option("--partition", target.partition, "partition-down: the partition")
        ->capture_default_str();
    c->add_option("--state", target.state, "partition-down: DOWN, DRAIN or INACTIVE")
        ->check(CLI::IsMember({"DOWN", "DRAIN", "INACTIVE"}))
        ->capture_default_str();
    c->add_option("--account", target.account, "assoc-limit: the account")->capture_default_str();
    c->add_option("--qos", target.qos, "qos-limit: the QOS")->capture_default_str();
    c->add_option("--limit", target.limit,
                  "assoc-limit (default GrpJobs=0), qos-limit (default MaxJobsPerUser=1): "
                  "NAME=VALUE");
    c->add_option("--reason", target.reason, "drain: the reason")->capture_default_str();
    c->add_option("--mode", target.mode, "gpu-fake: ecc or driver")
        ->check(CLI::IsMember({"ecc", "driver"}))
        ->capture_default_str();
    c->add_option("--workers", target.workers, "rpc-flood: client loops")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    c->add_option("--seconds", target.seconds, "rpc-flood: each loop stops by itself after this")
        ->check(CLI::Range(1, 3600))
        ->capture_default_str();
    c->add_option("--method", target.method, "statesave-readonly: bind-ro or immutable")
        ->check(CLI::IsMember({"bind-ro", "immutable"}))
        ->capture_default_str();
  };
  CLI::App* inject = fault->add_subcommand("inject", "Inject a fault (idempotent)");
  add_target(inject);
  CLI::App* heal = fault->add_subcommand("heal", "Heal a fault, restoring the prior state");
  add_target(heal);

  std::vector<std::string> validate_paths;
  bool no_bundles = false;
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check scenarios: schema, invariants, ticket leaks, and that each hop's signals show in "
      "its recorded bundle (fixtures/<id>); file:line: rule: message");
  validate->add_option(
      "paths", validate_paths,
      "scenario.yaml files or directories (default: every scenarios/*/scenario.yaml, plus the "
      "suite minima)");
  validate->add_flag("--no-bundles", no_bundles, "Skip the bundles (schema and invariants only)");
  CLI::App* list = app.add_subcommand(
      "list", "The scenario table of the README: family, root cause, hops measured, timings");
  std::string show_id;
  CLI::App* show = app.add_subcommand("show", "One scenario in full (ground truth included)");
  show->add_option("id", show_id, "Scenario id or task id")->required();
  std::string view = "agent";
  CLI::App* export_cmd = app.add_subcommand(
      "export", "The suite as JSON: --view agent (task ids and tickets only) or scorer (all)");
  export_cmd->add_option("--view", view, "agent or scorer")
      ->check(CLI::IsMember({"agent", "scorer"}))
      ->capture_default_str();

  int top = 8;
  bool include_blocked = false;
  CLI::App* baselines = app.add_subcommand(
      "baselines", "What answers that read nothing score on the suite: the floor for every agent");
  baselines->add_option("--top", top, "Rows to print (0: all)")->check(CLI::Range(0, 100))
      ->capture_default_str();
  baselines->add_flag("--include-blocked", include_blocked,
                      "Over the designed suite, blocked scenarios included (planning only)");

  std::string submission_path;
  bool score_json = false;
  CLI::App* score = app.add_subcommand(
      "score", "Score one submission (JSON Lines: a header, then one answer per scenario)");
  score->add_option("submission", submission_path, "The submission file")->required();
  score->add_flag("--json", score_json, "The report as JSON");
  std::string transcripts_dir;
  score->add_option("--transcripts", transcripts_dir,
                    "The run's transcripts, for time to hypothesis (default: SUBMISSION with "
                    ".transcripts for .jsonl, when it exists)");
  std::string results_dir, html_path;
  bool no_html = false;
  CLI::App* leaderboard = app.add_subcommand(
      "leaderboard", "Every submission (*.jsonl) of RESULTS_DIR scored, runs of a configuration "
                     "as mean ± SE, beside the floor: Markdown on stdout and a self-contained "
                     "HTML page");
  leaderboard->add_option("results_dir", results_dir, "Directory of submissions")
      ->required()
      ->check(CLI::ExistingDirectory);
  leaderboard->add_option("--html", html_path,
                          "Where to write the HTML page (default: RESULTS_DIR/leaderboard.html)");
  leaderboard->add_flag("--no-html", no_html, "Print the Markdown only");
  CLI::App* fingerprint = app.add_subcommand(
      "fingerprint", "The suite fingerprint a submission's header must carry");

  // --- agents: run, diagnose, collect, configs, graph, fit-abstention -------------------------
  auto add_model = [](CLI::App* cmd, slurm_rca::cli::ModelOptions* m) {
    cmd->add_option("--backend", m->backend.kind, "Model back-end: openai (any OpenAI-compatible "
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
  };
  slurm_rca::cli::RunCommandOptions run_options;
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run configurations over scenarios (replay: the recorded bundles; live: a fresh lab "
             "with the fault injected), write submissions and transcripts, score them");
  run_cmd->add_option("--config", run_options.configs,
                      "Configuration(s): A-E, folk, graphwalk, ticketonly (rca-bench configs), or "
                      "a file")->required();
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
  run_cmd->add_option("--out", run_options.out, "Results directory")->capture_default_str();
  run_cmd->add_option("--offset", run_options.offset_s,
                      "Replay: seconds after the fault the evidence is shown at (default: each "
                      "scenario's observe_s)");
  run_cmd->add_option("--slurm", run_options.slurm_script,
                      "Write a Slurm job-array script (one task per configuration x scenario x "
                      "repeat) instead of running; merge with rca-bench collect");
  bool no_score = false;
  run_cmd->add_flag("--no-score", no_score, "Write the submissions only");
  run_cmd->add_option("--slurm-mcp", run_options.slurm_mcp, "slurm-mcp binary (default: next to "
                      "rca-bench)");
  run_cmd->add_option("--port-base", run_options.port_base, "Live: the lab's port base")
      ->capture_default_str();
  run_cmd->add_option("--lab-dir", run_options.lab_dir, "Live: the lab's directory")
      ->capture_default_str();
  add_profile(run_cmd, &run_options.profile, &run_options.seed);
  // --slurm is taken here (the array script), so the lab's release is --lab-slurm.
  run_cmd->add_option("--lab-slurm", run_options.slurm_prefix,
                      "--mode live: a Slurm release built by scripts/build-slurm.sh (its prefix) "
                      "for the lab, instead of Debian's 22.05")
      ->check(CLI::ExistingDirectory);

  slurm_rca::cli::DiagnoseOptions diag;
  CLI::App* diagnose = app.add_subcommand(
      "diagnose", "On call: one configuration diagnoses a symptom on a live cluster through "
                  "slurm-mcp, read-only, and proposes actions without taking any");
  diagnose->add_option("--config", diag.config, "Configuration")->capture_default_str();
  diagnose->add_option("--symptom", diag.symptom, "What is wrong, in the reporter's words")
      ->required();
  add_model(diagnose, &diag.model);
  diagnose->add_option("--slurm-conf", diag.slurm_conf, "SLURM_CONF of the cluster");
  diagnose->add_option("--log-file", diag.log_files, "DAEMON=PATH of a Slurm log, repeatable");
  diagnose->add_option("--clusters", diag.clusters, "Cluster names -M may name");
  diagnose->add_option("--replay", diag.replay, "A recorded bundle instead of the cluster");
  diagnose->add_option("--offset", diag.offset_s, "Replay: seconds after the fault")
      ->capture_default_str();
  diagnose->add_option("--transcript", diag.transcript, "Write the run's transcript here");
  diagnose->add_option("--slurm-mcp", diag.slurm_mcp, "slurm-mcp binary");
  diagnose->add_flag("--json", diag.json, "The answer as JSON");

  std::string parts_dir, collect_out = "results";
  CLI::App* collect = app.add_subcommand(
      "collect", "Merge the parts of a --slurm run into one submission per configuration, model "
                 "and repeat");
  collect->add_option("parts", parts_dir, "The parts directory (OUT/parts)")->required();
  collect->add_option("--out", collect_out, "Where the merged submissions go")->capture_default_str();

  CLI::App* configs_cmd = app.add_subcommand(
      "configs", "The agent configurations (agents/configs) with their hashes");

  std::string graph_what = "causes", graph_component, graph_severity = "halts";
  CLI::App* graph_cmd = app.add_subcommand(
      "graph", "The dependency graph: causes COMPONENT (and what is ruled out), stats, summary");
  graph_cmd->add_option("what", graph_what, "causes, stats or summary")
      ->check(CLI::IsMember({"causes", "stats", "summary"}))
      ->capture_default_str();
  graph_cmd->add_option("component", graph_component, "The component showing the symptom");
  graph_cmd->add_option("--severity", graph_severity, "halts or degrades")->capture_default_str();

  std::string fit_submission, fit_config = "E";
  CLI::App* fit = app.add_subcommand(
      "fit-abstention", "Fit configuration E's abstention threshold on its development split "
                        "from a submission of D");
  fit->add_option("submission", fit_submission, "A D submission")->required();
  fit->add_option("--config", fit_config, "The configuration declaring the split")
      ->capture_default_str();

  std::vector<std::string> ids;
  bool all = false;
  CLI::App* sinject = app.add_subcommand(
      "inject", "Inject a scenario's faults and submit its workload into the lab (idempotent)");
  add_dir(sinject);
  sinject->add_option("id", ids, "Scenario id")->required()->expected(1);
  CLI::App* sheal = app.add_subcommand(
      "heal", "Heal a scenario's faults and cancel its jobs, or every scenario's (--all)");
  add_dir(sheal);
  sheal->add_option("id", ids, "Scenario id")->expected(0, 1);
  sheal->add_flag("--all", all, "Heal every scenario");
  slurm_rca::live::ScenarioRecordOptions rec;
  CLI::App* srecord = app.add_subcommand(
      "record",
      "Record scenarios' evidence bundles into fixtures/<id>: each trial in a fresh private lab "
      "(port base + 1000 per trial), every slurm-mcp topic at scheduled offsets");
  srecord->add_option("ids", ids, "Scenario ids");
  srecord->add_flag("--all", all, "Every runnable scenario");
  srecord->add_option("--trials", rec.trials, "Trials per scenario")
      ->check(CLI::Range(1, 10))
      ->capture_default_str();
  srecord->add_option("--jobs", rec.jobs, "Trials run at once")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  srecord->add_option("--port-base", rec.port_base, "Port base of the first trial's lab")
      ->check(CLI::Range(1024, 60000))
      ->capture_default_str();
  srecord->add_option("--fixtures", rec.fixtures, "Bundle root (default: the source tree's fixtures)");
  srecord->add_option("--work-dir", rec.work_dir,
                      "Where the trials' labs and bundles are kept for --reuse (default /tmp)");
  srecord->add_flag("--reuse", rec.reuse_trials,
                    "Re-derive the timings from the trials a previous run left in /tmp");
  srecord->add_option("--timeout", rec.read_timeout_seconds, "Seconds before a read is killed")
      ->check(CLI::Range(1.0, 120.0))
      ->capture_default_str();
  add_profile(srecord, &rec.profile, &rec.seed);
  add_slurm(srecord, &rec.slurm_prefix);
  int window = 45;
  slurm_rca::live::SmokeSuiteOptions smoke_options;
  smoke_options.lab.dir = "/tmp/rca-bench-smoke";
  smoke_options.lab.port_base = 29800;
  CLI::App* smoke = app.add_subcommand(
      "smoke",
      "For each scenario, in a fresh private lab: check its first hop's signals do not hold yet, "
      "inject it, watch them through the slurm-mcp live back-end, heal it, take the lab down");
  smoke->add_option("ids", ids, "Scenario ids (default: every runnable one)");
  smoke->add_option("--window", window,
                    "Seconds to wait for the first hop (a scenario's observe_s when longer)")
      ->check(CLI::Range(5, 600))
      ->capture_default_str();
  smoke->add_option("--dir", smoke_options.lab.dir,
                    "Folder of the labs (one per slot: DIR/1, DIR/2, ...)")
      ->capture_default_str();
  smoke->add_option("--port-base", smoke_options.lab.port_base,
                    "Port base of the first slot's lab (slot k: + 1000 k)")
      ->check(CLI::Range(1024, 60000))
      ->capture_default_str();
  smoke->add_option("--jobs", smoke_options.jobs,
                    "Scenarios smoked at once, each in a fresh lab of its own")
      ->check(CLI::Range(1, 4))
      ->capture_default_str();
  add_profile(smoke, &smoke_options.lab.profile, &smoke_options.lab.seed);
  add_slurm(smoke, &smoke_options.lab.slurm_prefix);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "rca-bench: " << e.what() << " (see rca-bench --help)\n";
    return kUsage;
  }
  sc::SetDefaultBundleSet(slurm_release.empty() ? bundle_set : sc::BusySetOfRelease(slurm_release));

  if (*graph_cmd) {
    if (graph_what == "causes" && graph_component.empty()) {
      std::cerr << "rca-bench: graph causes COMPONENT\n";
      return kUsage;
    }
    return slurm_rca::cli::GraphCommand(graph_what, graph_component, graph_severity);
  }
  if (*diagnose) return slurm_rca::cli::DiagnoseCommand(diag);
  if (*run_cmd || *collect || *configs_cmd || *fit) {
    sc::Suite suite;
    int code = 0;
    if (!LoadScenarios({}, &suite, &code)) return code;
    if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
    CutToRecorded(&suite);
    if (*configs_cmd) return slurm_rca::cli::ConfigsCommand(suite.scenarios);
    if (*collect) return slurm_rca::cli::CollectCommand(parts_dir, collect_out, suite.scenarios);
    if (*fit) return slurm_rca::cli::FitAbstentionCommand(fit_submission, fit_config, suite.scenarios);
    run_options.score = !no_score;
    return slurm_rca::cli::RunCommand(run_options, suite.scenarios);
  }
  if (*validate) return ValidateScenarios(validate_paths, !no_bundles);
  if (*list) return ListScenarios();
  if (*show) return ShowScenario(show_id);
  if (*export_cmd) return ExportScenarios(view);
  if (*fingerprint || *score || *leaderboard) {
    sc::Suite suite;
    int code = 0;
    if (!LoadScenarios({}, &suite, &code)) return code;
    if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
    CutToRecorded(&suite);
    if (*fingerprint) {
      std::cout << slurm_rca::grader::SuiteFingerprint(suite.scenarios) << "\n";
      std::cerr << "rca-bench: " << suite.scenarios.size() << " scenarios, bundles "
                << sc::DefaultBundleSet() << " (Slurm " << sc::BundleSetRelease(sc::DefaultBundleSet())
                << ")\n";
      return 0;
    }
    if (*leaderboard) {
      auto lb = slurm_rca::grader::BuildLeaderboard(results_dir, suite.scenarios);
      std::cout << slurm_rca::grader::LeaderboardMarkdown(lb);
      if (!no_html) {
        if (html_path.empty()) html_path = results_dir + "/leaderboard.html";
        std::ofstream out(html_path, std::ios::binary | std::ios::trunc);
        out << slurm_rca::grader::LeaderboardHtml(lb);
        out.close();
        if (!out) return Fail("cannot write " + html_path);
        std::cerr << "rca-bench: wrote " << html_path << "\n";
      }
      return lb.rows.empty() ? 1 : 0;
    }
    std::ifstream in(submission_path, std::ios::binary);
    if (!in) {
      std::cerr << "rca-bench: cannot read " << submission_path << "\n";
      return kUsage;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = slurm_rca::grader::ParseSubmission(text.str(), submission_path, suite.scenarios);
    if (!parsed.submission) {
      for (const auto& p : parsed.problems) std::cout << p.ToString() << "\n";
      std::cerr << "rca-bench: " << parsed.problems.size()
                << " problem(s) in the submission; nothing was scored\n";
      return 1;
    }
    if (transcripts_dir.empty()) {
      std::filesystem::path t = submission_path;
      t.replace_extension(".transcripts");
      transcripts_dir = t.string();
    } else if (!std::filesystem::is_directory(transcripts_dir)) {
      std::cerr << "rca-bench: --transcripts " << transcripts_dir << " is not a directory\n";
      return kUsage;
    }
    auto times = slurm_rca::grader::ReadTranscripts(transcripts_dir, suite.scenarios);
    auto report = slurm_rca::grader::Score(*parsed.submission, suite.scenarios, &times);
    if (score_json) {
      std::cout << slurm_rca::grader::ReportJson(*parsed.submission, report).dump(2) << "\n";
    } else {
      std::cout << slurm_rca::grader::RenderReport(*parsed.submission, report);
    }
    return 0;
  }
  if (*baselines) {
    sc::Suite suite;
    int code = 0;
    if (!LoadScenarios({}, &suite, &code)) return code;
    if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
    CutToRecorded(&suite);
    auto b = slurm_rca::grader::ComputeBaselines(suite.scenarios, include_blocked);
    int n = 0;
    for (const sc::Scenario& s : suite.scenarios) n += include_blocked || s.status == "runnable";
    std::cout << slurm_rca::grader::BaselineTable(b, n, !include_blocked, top);
    if (!include_blocked) {
      for (const auto& d : slurm_rca::grader::Degenerate(b, 0.20, /*with_abstain=*/true)) {
        std::cout << "DEGENERATE: " << d.name << " scores " << d.depth << " (>= 0.20)\n";
      }
    }
    return 0;
  }
  if (*sinject || *sheal || *srecord || *smoke) {
    sc::Suite suite;
    int code = 0;
    if (!LoadScenarios({}, &suite, &code)) return code;
    if (!suite.problems.empty()) {
      for (const sc::Problem& p : suite.problems) std::cerr << p.ToString() << "\n";
      return Fail("the suite has problems; fix them first (rca-bench validate)");
    }
    std::vector<const sc::Scenario*> chosen;
    if (all || (*smoke && ids.empty())) {
      for (const sc::Scenario& s : suite.scenarios) {
        if (s.status == "runnable") chosen.push_back(&s);
      }
    } else {
      for (const std::string& id : ids) {
        const sc::Scenario* s = FindScenario(suite, id);
        if (!s) return kUsage;
        chosen.push_back(s);
      }
    }
    if (chosen.empty()) {
      std::cerr << "rca-bench: name a scenario or --all (see rca-bench list)\n";
      return kUsage;
    }
    if (*srecord) {
      // Every scenario is tried; the failures are reported together at the end.
      std::string failed;
      for (const sc::Scenario* s : chosen) {
        std::cout << "recording " << s->id << " (" << rec.trials << " trials, observe "
                  << s->observe_s << " s)\n";
        std::cout.flush();
        slurm_rca::live::Status st = slurm_rca::live::RecordScenario(*s, rec, std::cout);
        if (!st.ok()) {
          std::cout << "FAILED " << s->id << ": " << st.message() << "\n";
          failed += " " + s->id;
        }
        std::cout.flush();
        if (slurm_rca::live::Interrupted()) {
          Fail("interrupted; not recorded:" + failed);
          return 128 + slurm_rca::live::Interrupted();
        }
      }
      if (!failed.empty()) return Fail("not recorded:" + failed);
      return 0;
    }
    if (*smoke) {
      smoke_options.window_s = window;
      int missed = slurm_rca::live::SmokeSuite(chosen, smoke_options, std::cout);
      if (slurm_rca::live::Interrupted()) return 128 + slurm_rca::live::Interrupted();
      return missed == 0 ? 0 : 1;
    }
    Lab lab(options);
    if (!lab.exists()) return Fail("no lab in " + options.dir + " (rca-bench cluster up)");
    if (*sinject) {
      slurm_rca::live::Status st = slurm_rca::live::InjectScenario(lab, *chosen[0], std::cout);
      return st.ok() ? 0 : Fail(st.message());
    }
    std::vector<sc::Scenario> heal_list;
    for (const sc::Scenario* s : chosen) heal_list.push_back(*s);
    slurm_rca::live::Status st = slurm_rca::live::HealAll(lab, heal_list, std::cout);
    if (st.ok()) std::cout << "healed " << heal_list.size() << " scenario(s)\n";
    return st.ok() ? 0 : Fail(st.message());
  }

  if (fault->got_subcommand("list")) {
    for (const auto& f : slurm_rca::live::FaultCatalog()) {
      std::cout << f.name << (f.options.empty() ? "" : "  [" + f.options + "]") << "\n"
                << "  inject: " << f.what << "\n  shows:  " << f.effect << "\n  heal:   "
                << f.heal << "\n";
    }
    return 0;
  }

  if (*record) {
    slurm_rca::live::Status s = slurm_rca::live::RecordDemoBundle(record_options, std::cout);
    return s.ok() ? 0 : Fail(s.message());
  }
  if (*capture) {
    slurm_rca::live::Status s = slurm_rca::live::CaptureReads(capture_options, std::cout);
    return s.ok() ? 0 : Fail(s.message());
  }

  Lab lab(options);
  if (*up) {
    slurm_rca::live::Status s = lab.Up(std::cout);
    if (s.ok()) return 0;
    return Fail(s.message() + (lab.exists() ? "; `rca-bench cluster down --dir " + options.dir +
                                                  "` stops what was started"
                                            : ""));
  }
  if (*down) {
    slurm_rca::live::Status s = lab.Down(std::cout);
    return s.ok() ? 0 : Fail(s.message());
  }
  if (*env) {
    if (!lab.exists()) return Fail("no lab in " + options.dir + " (rca-bench cluster up)");
    std::cout << "export SLURM_CONF=" << lab.SlurmConf() << "\n";
    return 0;
  }
  if (*status) {
    if (!lab.exists()) {
      if (json) {
        std::cout << nlohmann::json{{"dir", options.dir}, {"exists", false}}.dump() << "\n";
      } else {
        std::cout << "no slurm-rca lab in " << options.dir << "\n";
      }
      return 1;
    }
    auto daemons = lab.Inspect();
    bool healthy = true;
    nlohmann::json j = {{"dir", options.dir}, {"exists", true}, {"daemons", nlohmann::json::array()}};
    for (const auto& d : daemons) {
      healthy = healthy && d.health == "ok";
      j["daemons"].push_back({{"name", d.name},
                              {"pid", d.id ? d.id->pid : 0},
                              {"alive", d.alive},
                              {"state", std::string(1, d.state)},
                              {"health", d.health}});
    }
    j["faults"] = slurm_rca::live::ActiveFaults(lab);
    j["slurm_conf"] = lab.SlurmConf();
    j["profile"] = lab.options().profile;
    j["slurm_prefix"] = lab.options().slurm_prefix;
    j["slurm_version"] = lab.SlurmVersion();
    j["seed"] = lab.options().seed;
    if (json) {
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "slurm-rca lab in " << options.dir << " (SLURM_CONF=" << lab.SlurmConf()
                << ")\n  profile " << lab.options().profile
                << (lab.options().profile == "busy"
                        ? ", seed " + std::to_string(lab.options().seed)
                        : std::string())
                << "\n  " << (j["slurm_version"].get<std::string>().empty()
                                  ? "Slurm version unknown (sinfo -V did not answer)"
                                  : j["slurm_version"].get<std::string>())
                << (lab.options().slurm_prefix.empty() ? " (Debian's packages)"
                                                       : " from " + lab.options().slurm_prefix)
                << "\n";
      for (const auto& d : daemons) {
        std::cout << "  " << std::left << std::setw(14) << d.name << std::setw(9)
                  << (d.id ? std::to_string(d.id->pid) : "-") << d.health << "\n";
      }
      for (const std::string& f : slurm_rca::live::ActiveFaults(lab)) {
        std::cout << "  fault injected: " << f << "\n";
      }
    }
    return healthy ? 0 : 1;
  }
  if (fault->got_subcommand("status")) {
    if (!lab.exists()) return Fail("no lab in " + options.dir);
    auto active = slurm_rca::live::ActiveFaults(lab);
    if (active.empty()) std::cout << "no fault injected\n";
    for (const std::string& f : active) std::cout << f << "\n";
    return 0;
  }
  bool known = false;
  for (const auto& f : slurm_rca::live::FaultCatalog()) known = known || f.name == fault_name;
  if (!known) {
    std::cerr << "rca-bench: unknown fault '" << fault_name << "' (see rca-bench fault list)\n";
    return kUsage;
  }
  // The option values a primitive reads, checked as the scenario validator checks them.
  for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{
           {"daemon", target.daemon}, {"node", target.node}, {"partition", target.partition},
           {"account", target.account}, {"qos", target.qos}}) {
    if (auto err = sc::CheckFaultOption(opt, value)) {
      std::cerr << "rca-bench: " << *err << "\n";
      return kUsage;
    }
  }
  if (!target.limit.empty()) {
    if (auto err = sc::CheckFaultOption("limit", target.limit)) {
      std::cerr << "rca-bench: " << *err << "\n";
      return kUsage;
    }
  }
  bool is_inject = inject->parsed();
  auto outcome = is_inject ? slurm_rca::live::InjectFault(lab, fault_name, target)
                           : slurm_rca::live::HealFault(lab, fault_name, target);
  if (!outcome.status.ok()) return Fail(outcome.status.message());
  std::cout << (outcome.changed ? "" : "unchanged: ") << outcome.message << "\n";
  return 0;
}

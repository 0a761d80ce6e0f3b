// rca-bench: the benchmark's command: the live Slurm control plane (`cluster`), its fault
// primitives (`fault`) and the scenarios (`validate`, `list`, `show`). The logic is in scenarios/.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "scenarios/live/capture.h"
#include "scenarios/live/record.h"
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

int ValidateScenarios(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  if (std::string err = ExpandScenarioPaths(args, &paths); !err.empty()) {
    std::cerr << "rca-bench: " << err << "\n";
    return kUsage;
  }
  sc::Suite suite = sc::LoadSuite(paths);
  for (const sc::Problem& p : suite.problems) std::cout << p.ToString() << "\n";
  std::cerr << paths.size() << " scenario file(s), " << suite.problems.size() << " problem(s)\n";
  return suite.problems.empty() ? 0 : 1;
}

int ListScenarios() {
  std::vector<std::string> paths;
  if (std::string err = ExpandScenarioPaths({}, &paths); !err.empty()) {
    std::cerr << "rca-bench: " << err << "\n";
    return kUsage;
  }
  sc::Suite suite = sc::LoadSuite(paths);
  std::cout << std::left << std::setw(34) << "ID" << std::setw(17) << "FAMILY" << std::setw(15)
            << "DIFFICULTY" << std::setw(21) << "ROOT CAUSE" << std::setw(10) << "STATUS"
            << "MEASURED\n";
  for (const sc::Scenario& s : suite.scenarios) {
    std::cout << std::left << std::setw(34) << s.id << std::setw(17) << s.family << std::setw(15)
              << s.difficulty << std::setw(21) << s.RootCause() << std::setw(10) << s.status
              << (s.Measured() ? "yes" : "no") << "\n";
  }
  if (!suite.problems.empty()) {
    std::cerr << "rca-bench: " << suite.problems.size() << " problem(s); run rca-bench validate\n";
    return 1;
  }
  return 0;
}

int ShowScenario(const std::string& id) {
  std::vector<std::string> paths;
  if (std::string err = ExpandScenarioPaths({}, &paths); !err.empty()) {
    std::cerr << "rca-bench: " << err << "\n";
    return kUsage;
  }
  sc::Suite suite = sc::LoadSuite(paths);
  for (const sc::Scenario& s : suite.scenarios) {
    if (s.id != id) continue;
    std::cout << s.id << ": " << s.title << "\n  file:       " << s.file
              << "\n  family:     " << s.family << ", " << s.difficulty << ", " << s.status
              << (s.blocked_reason.empty() ? "" : " (" + s.blocked_reason + ")")
              << "\n  reported:   " << s.reported_node << "\n  root cause: " << s.RootCause()
              << "\n  observe_s:  " << s.observe_s << " (propagation " << s.PropagationS()
              << " s)\n  measured:   " << (s.Measured() ? "yes" : "no")
              << "\n  ticket:     " << s.symptom << "\n  injection:  " << s.injection
              << "\n  faults:";
    for (const sc::FaultRef& f : s.faults) {
      std::cout << " " << f.name;
      for (const auto& [k, v] : f.target) std::cout << " --" << k << " " << v;
      std::cout << ";";
    }
    std::cout << "\n  causal chain:\n";
    for (const sc::Hop& h : s.causal_chain) {
      std::cout << "    t+" << h.observable_at_s << "s " << h.node << " (" << h.state << ")\n";
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
      for (const sc::Item& a : *s.remediation_helpful)
        std::cout << "  helpful:    " << a.value << "\n";
    }
    for (const sc::Item& a : s.harmful_actions) std::cout << "  harmful:    " << a.value << "\n";
    for (const sc::Problem& p : suite.problems) {
      if (p.file == s.file) std::cout << "  problem:    " << p.ToString() << "\n";
    }
    return 0;
  }
  std::cerr << "rca-bench: no scenario '" << id << "' (see rca-bench list)\n";
  return kUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rca-bench: an incident-diagnosis benchmark for the Slurm control plane.\n"
      "Today it runs a real Slurm control plane on this machine and injects faults into it."};
  app.require_subcommand(1);
  LabOptions options;
  options.dir = DefaultDir();
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
      "Bring up a private lab (port base 36800) in a known state, record what Slurm prints for "
      "every read the guard corpus allows, tear it down");
  capture->add_option("--out", capture_options.out_dir,
                      "Fixture directory (default: the source tree's fixtures/slurm-22.05)");
  slurm_rca::live::RecordOptions record_options;
  CLI::App* record = cluster->add_subcommand(
      "record",
      "Bring up a private lab (port base 37800), record every slurm-mcp topic before, during and "
      "after a fault into an evidence bundle, tear it down");
  record->add_option("--out", record_options.out_dir,
                     "Bundle directory (default: the source tree's fixtures/demo)");
  record->add_option("--fault", record_options.fault, "The fault (rca-bench fault list)")
      ->capture_default_str();

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
    c->add_option("--daemon", target.daemon, "net-drop: slurmdbd, slurmctld or mariadbd")
        ->check(CLI::IsMember({"slurmdbd", "slurmctld", "mariadbd"}))
        ->capture_default_str();
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
  CLI::App* validate = app.add_subcommand(
      "validate", "Check scenarios: schema, invariants, ticket leaks; file:line: rule: message");
  validate->add_option(
      "paths", validate_paths,
      "scenario.yaml files or directories (default: every scenarios/*/scenario.yaml)");
  CLI::App* list = app.add_subcommand("list", "The scenarios: id, family, root cause, status");
  std::string show_id;
  CLI::App* show = app.add_subcommand("show", "One scenario in full (ground truth included)");
  show->add_option("id", show_id, "Scenario id")->required();

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

  if (*validate) return ValidateScenarios(validate_paths);
  if (*list) return ListScenarios();
  if (*show) return ShowScenario(show_id);

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
    if (json) {
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "slurm-rca lab in " << options.dir << " (SLURM_CONF=" << lab.SlurmConf()
                << ")\n";
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
  bool is_inject = inject->parsed();
  auto outcome = is_inject ? slurm_rca::live::InjectFault(lab, fault_name, target)
                           : slurm_rca::live::HealFault(lab, fault_name, target);
  if (!outcome.status.ok()) return Fail(outcome.status.message());
  std::cout << (outcome.changed ? "" : "unchanged: ") << outcome.message << "\n";
  return 0;
}

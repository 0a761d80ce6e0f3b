// rca-bench: the benchmark's command. Today: the live Slurm control plane (`cluster`) and its
// fault primitives (`fault`). The logic is in scenarios/live/.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "scenarios/live/capture.h"
#include "scenarios/live/record.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"

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

// rca-bench cluster ... and fault ...: the live control plane and its fault primitives.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/common.h"
#include "scenarios/live/capture.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/record.h"
#include "scenarios/validate.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::cli {
namespace {

namespace sc = slurm_rca::scenarios;
using slurm_rca::live::FaultTarget;
using slurm_rca::live::Lab;
using slurm_rca::live::LabOptions;

// The large profile's lab unless --nodes scales it down (cluster up, cluster record).
constexpr int kLargeNodes = 1024;

class LabCommands : public CommandGroup {
 public:
  explicit LabCommands(CLI::App& app) {
    auto add_dir = [&](CLI::App* c) { AddLabDir(c, &options.dir); };
    cluster = app.add_subcommand("cluster", "The live control plane");
    cluster->require_subcommand(1);
    up = cluster->add_subcommand(
        "up", "Start munged, MariaDB, slurmdbd, slurmctld and N slurmd on loopback");
    add_dir(up);
    up->add_option("--nodes", options.nodes,
                   "Number of slurmd nodes: 1 to 64, or with --profile large a multiple of 64 "
                   "from 256 to 1024 (default 4; 1024 with --profile large)")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    up->add_option("--port-base", options.port_base,
                   "MariaDB base+6, slurmctld base+17, slurmdbd base+19, slurmd base+200+i")
        ->check(CLI::Range(1024, 65000))
        ->capture_default_str();
    AddProfile(up, &options.profile, &options.seed, /*with_large=*/true);
    up->add_option("--history", options.large_history,
                   "With --profile large: the finished jobs the history leaves in accounting "
                   "(default: the plan's 50,000 at 1,024 nodes, scaled)")
        ->check(CLI::Range(0, 1000000));
    AddSlurm(up, &options.slurm_prefix);
    up->add_flag("--hosts", options.hosts,
                 "A lab of hosts: the controller, accounting, a login host and compute hosts of "
                 "two slurmd each, each its own network namespace with its own munged, on "
                 "198.18.0.0/15 (tag port-base/100); clients run on the login host. Clean or busy "
                 "profile");
    down = cluster->add_subcommand(
        "down", "Stop every daemon of the lab by PID, heal its faults, remove the lab directory");
    add_dir(down);
    status = cluster->add_subcommand("status", "Each daemon, its PID and its health");
    add_dir(status);
    status->add_flag("--json", json, "As JSON");
    env = cluster->add_subcommand("env", "Print how to point Slurm commands at the lab");
    add_dir(env);
    capture = cluster->add_subcommand(
        "capture",
        "Bring up a private lab (port base 21800) in a known state, record what Slurm prints for "
        "every read the guard corpus allows, tear it down");
    capture->add_option(
        "--out", capture_options.out_dir,
        "Fixture directory (default: the source tree's fixtures/slurm-MAJOR.MINOR of "
        "the release that answers, e.g. fixtures/slurm-22.05)");
    AddSlurm(capture, &capture_options.slurm_prefix);
    capture
        ->add_option("--port-base", capture_options.port_base,
                     "Ports of the private lab: base+6, +17, +19, +201.. (keep below 32768)")
        ->capture_default_str()
        ->check(CLI::Range(1024, 65000));
    record = cluster->add_subcommand(
        "record",
        "Bring up a private lab (port base 20800), record every slurm-mcp topic before, during and "
        "after a fault into an evidence bundle, tear it down");
    record->add_option("--out", record_options.out_dir,
                       "The bundle's name: it is written as one file, NAME.evidence.gz "
                       "(default: fixtures/demo of the bundle root, $SLURM_RCA_FIXTURES or the "
                       "source tree's)");
    record
        ->add_option("--port-base", record_options.port_base,
                     "Ports of the private lab: base+6, +17, +19, +201.. (keep below 32768)")
        ->capture_default_str()
        ->check(CLI::Range(1024, 65000));
    record->add_option("--fault", record_options.fault, "The fault (rca-bench fault list)")
        ->capture_default_str();
    AddProfile(record, &record_options.profile, &record_options.seed, /*with_large=*/true);
    record
        ->add_option("--nodes", record_options.nodes,
                     "With --profile large: slurmd nodes, a multiple of 64 from 256 to 1024 "
                     "(default 1024; the other profiles record a 4-node lab)")
        ->check(CLI::Range(256, 1024));
    record
        ->add_option("--history", record_options.large_history,
                     "With --profile large: the finished jobs the history leaves in accounting "
                     "(default: the plan's 50,000 at 1,024 nodes, scaled)")
        ->check(CLI::Range(0, 1000000));
    record->add_option("--node", record_options.node, "The fault's node (drain, slurmd-kill, ...)")
        ->capture_default_str();
    AddSlurm(record, &record_options.slurm_prefix);

    fault = app.add_subcommand("fault", "Inject and heal faults in the live lab");
    fault->require_subcommand(1);
    fault->add_subcommand("list", "The fault primitives, what they do and what shows");
    fstatus = fault->add_subcommand("status", "The faults injected now");
    add_dir(fstatus);
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
      c->add_option("--host", target.host,
                    "The lab of hosts: the host the rule goes on (net-cut, net-loss, "
                    "net-throttle, name-gone)")
          ->capture_default_str();
      c->add_option("--peer", target.peer, "net-cut: the host cut from --host")
          ->capture_default_str();
      c->add_option("--direction", target.direction,
                    "net-cut: both (every packet), in (PEER cannot open connections to HOST) or "
                    "out (HOST cannot open connections to PEER)")
          ->check(CLI::IsMember({"both", "in", "out"}))
          ->capture_default_str();
      c->add_option("--percent", target.percent, "net-loss: the share of packets dropped")
          ->check(CLI::Range(1, 100))
          ->capture_default_str();
      c->add_option("--rate", target.rate, "net-throttle: the link's rate each way (tc: 64kbit)")
          ->capture_default_str();
      c->add_option("--name", target.name, "name-gone: the host name that stops resolving on --host")
          ->capture_default_str();
    };
    inject = fault->add_subcommand("inject", "Inject a fault (idempotent)");
    add_target(inject);
    heal = fault->add_subcommand("heal", "Heal a fault, restoring the prior state");
    add_target(heal);
  }

  std::optional<int> Run() override {
    if (!cluster->parsed() && !fault->parsed()) return std::nullopt;
    if (fault->got_subcommand("list")) {
      for (const auto& f : slurm_rca::live::FaultCatalog()) {
        std::cout << f.name << (f.options.empty() ? "" : "  [" + f.options + "]") << "\n"
                  << "  inject: " << f.what << "\n  shows:  " << f.effect
                  << "\n  heal:   " << f.heal << "\n";
      }
      return 0;
    }

    if (*record) {
      record_options.fixtures = Paths().fixtures;
      if (record_options.profile == "large" && record->get_option("--nodes")->count() == 0) {
        record_options.nodes = kLargeNodes;
      }
      for (const char* flag : {"--nodes", "--history"}) {
        if (record_options.profile != "large" && record->get_option(flag)->count() > 0) {
          Fail(std::string(flag) + " is the large profile's (give --profile large)");
          return kUsage;
        }
      }
      slurm_rca::base::Status s = slurm_rca::live::RecordDemoBundle(record_options, std::cout);
      return s.ok() ? 0 : Fail(s.message());
    }
    if (*capture) {
      capture_options.source = Paths().source;
      slurm_rca::base::Status s = slurm_rca::live::CaptureReads(capture_options, std::cout);
      return s.ok() ? 0 : Fail(s.message());
    }

    // The large profile is a 1,024-node lab unless --nodes scales it down.
    if (*up && options.profile == "large" && up->get_option("--nodes")->count() == 0) {
      options.nodes = kLargeNodes;
    }
    if (*up && options.profile != "large" && up->get_option("--history")->count() > 0) {
      Fail("--history is the large profile's (give --profile large)");
      return kUsage;
    }
    Lab lab(options);
    if (*up) {
      slurm_rca::base::Status s = lab.Up(std::cout);
      if (s.ok()) return 0;
      return Fail(s.message() + (lab.exists() ? "; `rca-bench cluster down --dir " + options.dir +
                                                    "` stops what was started"
                                              : ""));
    }
    if (*down) {
      slurm_rca::base::Status s = lab.Down(std::cout);
      return s.ok() ? 0 : Fail(s.message());
    }
    if (*env) {
      if (!lab.exists()) return Fail("no lab in " + options.dir + " (rca-bench cluster up)");
      std::cout << "export SLURM_CONF=" << lab.SlurmConf() << "\n";
      if (lab.options().hosts) {
        // The controller is reachable from the login host's namespace only.
        auto net = lab.Net();
        std::cout << "# a lab of hosts: run Slurm's clients on its login host, e.g.\n# ip netns exec "
                  << (net.ok() ? net->Namespace("login") : std::string("rcah-TAG-login"))
                  << " env SLURM_CONF=" << lab.SlurmConf() << " sinfo\n";
      }
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
      nlohmann::json j = {
          {"dir", options.dir}, {"exists", true}, {"daemons", nlohmann::json::array()}};
      for (const auto& d : daemons) {
        healthy = healthy && d.health == "ok";
        j["daemons"].push_back({{"name", d.name},
                                {"pid", d.id ? d.id->pid : 0},
                                {"alive", d.alive},
                                {"state", std::string(1, d.state)},
                                {"health", d.health},
                                {"host", lab.HostOf(d.name)}});
      }
      j["faults"] = slurm_rca::live::ActiveFaults(lab);
      j["slurm_conf"] = lab.SlurmConf();
      j["profile"] = lab.options().profile;
      j["slurm_prefix"] = lab.options().slurm_prefix;
      j["slurm_version"] = lab.SlurmVersion();
      j["seed"] = lab.options().seed;
      j["hosts"] = nlohmann::json::array();
      const auto net = lab.Net();  // the state file, read once
      for (const auto& h : lab.Hosts()) {
        auto addr = net.ok() ? net->AddressOf(h.name) : slurm_rca::base::Result<std::string>("");
        j["hosts"].push_back({{"name", h.name},
                              {"role", h.role},
                              {"address", addr.ok() ? *addr : std::string()},
                              {"namespace", net.ok() ? net->Namespace(h.name) : std::string()}});
      }
      if (json) {
        std::cout << j.dump() << "\n";
      } else {
        std::cout << "slurm-rca lab in " << options.dir << " (SLURM_CONF=" << lab.SlurmConf()
                  << ")\n  profile " << lab.options().profile
                  << (lab.options().profile == "busy"
                          ? ", seed " + std::to_string(lab.options().seed)
                          : std::string())
                  << "\n  "
                  << (j["slurm_version"].get<std::string>().empty()
                          ? "Slurm version unknown (sinfo --version did not answer)"
                          : "Slurm " + j["slurm_version"].get<std::string>())
                  << (lab.options().slurm_prefix.empty() ? " (Debian's packages)"
                                                         : " from " + lab.options().slurm_prefix)
                  << "\n";
        for (const auto& h : j["hosts"]) {
          std::cout << "  host " << std::left << std::setw(6) << h["name"].get<std::string>()
                    << std::setw(11) << h["role"].get<std::string>() << std::setw(15)
                    << h["address"].get<std::string>() << h["namespace"].get<std::string>()
                    << "\n";
        }
        for (const auto& d : daemons) {
          std::cout << "  " << std::left << std::setw(14) << d.name << std::setw(9)
                    << (d.id ? std::to_string(d.id->pid) : "-") << d.health
                    << (lab.options().hosts ? " (on " + lab.HostOf(d.name) + ")" : "") << "\n";
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
    for (const auto& [opt, value] :
         std::vector<std::pair<std::string, std::string>>{{"daemon", target.daemon},
                                                          {"node", target.node},
                                                          {"partition", target.partition},
                                                          {"account", target.account},
                                                          {"qos", target.qos}}) {
      if (base::Status st = sc::CheckFaultOption(opt, value); !st.ok()) {
        std::cerr << "rca-bench: " << st.message() << "\n";
        return kUsage;
      }
    }
    for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{
             {"host", target.host}, {"peer", target.peer}, {"name", target.name},
             {"rate", target.rate}}) {
      if (base::Status st = sc::CheckFaultOption(opt, value); !st.ok()) {
        std::cerr << "rca-bench: " << st.message() << "\n";
        return kUsage;
      }
    }
    if (!target.limit.empty()) {
      if (base::Status st = sc::CheckFaultOption("limit", target.limit); !st.ok()) {
        std::cerr << "rca-bench: " << st.message() << "\n";
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

 private:
  LabOptions options{.dir = DefaultDir()};
  CLI::App* cluster = nullptr;
  CLI::App* up = nullptr;
  CLI::App* down = nullptr;
  bool json = false;
  CLI::App* status = nullptr;
  CLI::App* env = nullptr;
  slurm_rca::live::CaptureOptions capture_options;
  CLI::App* capture = nullptr;
  slurm_rca::live::RecordOptions record_options;
  CLI::App* record = nullptr;
  CLI::App* fault = nullptr;
  CLI::App* fstatus = nullptr;
  std::string fault_name;
  FaultTarget target;
  CLI::App* inject = nullptr;
  CLI::App* heal = nullptr;
};

}  // namespace

std::unique_ptr<CommandGroup> AddLabCommands(CLI::App& app) {
  return std::make_unique<LabCommands>(app);
}

}  // namespace slurm_rca::cli

// ctld_load_bench: what N agents polling slurm_overview cost slurmctld, in RPCs per minute, with
// slurm-mcp's cache and without it. Needs root (it brings a live lab up). Not a test.
//
//   sudo build/bin/ctld_load_bench [--agents 1,10,50] [--seconds 30] [--ttl 10] [--port-base P]
//                                  [--nodes 4] [--profile clean]
//   sudo build/bin/ctld_load_bench --lab-dir /tmp/rca-large [--agents 64]   a lab already up
//
// One lab; for each configuration and each N a fresh `slurm-mcp serve --http` (so no cache
// carries over), N MCP sessions calling slurm_overview in a loop for --seconds, and slurmctld's
// own counters (sdiag, by message type) read before and after, less the bench's own sdiag RPC.
// Configurations:
//   cache       --cache-ttl TTL, default rate budget (60 reads a minute) and concurrency (2)
//   no cache    --cache-ttl 0 (single-flight still merges identical reads in flight), same budget
//   no cache, no budget   --cache-ttl 0 --max-per-minute 0: what the agents would ask for
// Prints RPCs per minute reaching slurmctld, overview calls per minute, and the ratio of each
// configuration to the cached one. The lab is brought down at the end, on errors too; a lab named
// by --lab-dir (brought up by `rca-bench cluster up`, e.g. --profile large, whose bring-up takes
// half an hour at 1,024 nodes) is used as it is and left up, and no job is added to it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/live/ctld_load.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/mcp_child.h"

namespace {

using namespace slurm_rca::live;
using slurm_rca::base::Status;

struct Config {
  std::string name;
  std::vector<std::string> args;
};

struct Row {
  std::string config;
  int agents = 0;
  AgentLoad load;
  long rpcs = 0;
  double rpm() const { return load.seconds > 0 ? rpcs * 60.0 / load.seconds : 0; }
  double cpm() const { return load.seconds > 0 ? load.calls * 60.0 / load.seconds : 0; }
};

}  // namespace

int main(int argc, char** argv) {
  slurm_rca::live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) +
                                   "/scenarios/live/templates");
  CLI::App app{"ctld_load_bench: slurmctld RPCs per minute for N MCP agents, cache on and off"};
  std::vector<int> agents = {1, 10, 50};
  int seconds = 30, port_base = 22800;  // below the ephemeral range
  int nodes = 4;
  std::string profile = "clean";
  std::string lab_dir;
  double ttl = 10;
  std::string binary = SiblingProgram("slurm-mcp");
  app.add_option("--agents", agents, "Numbers of agents, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, 200))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "Seconds each run polls")
      ->check(CLI::Range(5, 600))
      ->capture_default_str();
  app.add_option("--ttl", ttl, "slurm-mcp --cache-ttl of the cached configuration")
      ->check(CLI::Range(0.5, 600.0))
      ->capture_default_str();
  app.add_option("--port-base", port_base, "Ports of the bench's lab (as rca-bench cluster up)")
      ->check(CLI::Range(1024, 65000))
      ->capture_default_str();
  app.add_option("--nodes", nodes, "Nodes of the bench's lab (as rca-bench cluster up --nodes)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--profile", profile, "The lab's profile (as rca-bench cluster up --profile)")
      ->check(CLI::IsMember(LabProfiles()))
      ->capture_default_str();
  app.add_option("--lab-dir", lab_dir,
                 "Use the lab already up in this directory (rca-bench cluster up --dir) and leave "
                 "it up; --nodes, --profile and --port-base are then the lab's")
      ->check(CLI::ExistingDirectory);
  app.add_option("--slurm-mcp", binary, "The slurm-mcp binary (default: beside this one)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ctld_load_bench: %s (see ctld_load_bench --help)\n", e.what());
    return 2;
  }
  if (::geteuid() != 0) {
    std::fprintf(stderr, "ctld_load_bench: needs root (it starts a live lab); run it with sudo\n");
    return 2;
  }
  if (binary.empty()) {
    std::fprintf(stderr, "ctld_load_bench: no slurm-mcp beside this program; pass --slurm-mcp\n");
    return 2;
  }
  const bool own_lab = lab_dir.empty();
  char dir[] = "/tmp/rca-ctldload-XXXXXX";
  if (own_lab && ::mkdtemp(dir) == nullptr) {
    std::perror("ctld_load_bench: mkdtemp");
    return 1;
  }
  // A lab named by --lab-dir: its lab.conf's settings win over these options (lab.h).
  Lab lab(own_lab ? LabOptions{.dir = dir, .nodes = nodes, .port_base = port_base,
                               .profile = profile}
                  : LabOptions{.dir = lab_dir});
  struct Down {
    Lab& lab;
    bool own;
    ~Down() {
      if (!own) return;
      std::ostringstream quiet;
      lab.Down(quiet);
    }
  } down{lab, own_lab};
  if (own_lab) {
    std::ostringstream progress;
    if (Status s = lab.Up(progress); !s.ok()) {
      std::fprintf(stderr, "ctld_load_bench: bring-up failed: %s\n", s.message().c_str());
      return 1;
    }
    // A running job, so that squeue has a row to send.
    lab.Client({"sbatch", "--chdir=" + lab.Path("work"), "-J", "train", "-w", "node4", "--wrap",
                "sleep 3600"});
  } else if (!lab.exists()) {
    std::fprintf(stderr, "ctld_load_bench: no lab in %s (no lab.conf)\n", lab_dir.c_str());
    return 2;
  } else if (Status s = lab.WaitReady(std::chrono::seconds(30)); !s.ok()) {
    std::fprintf(stderr, "ctld_load_bench: the lab in %s is not ready: %s\n", lab_dir.c_str(),
                 s.message().c_str());
    return 1;
  }
  port_base = lab.options().port_base;
  RpcCounts s0 = ReadRpcCounts(lab), s1 = ReadRpcCounts(lab);
  if (s1.empty()) {
    std::fprintf(stderr, "ctld_load_bench: no RPC statistics in sdiag's output\n");
    return 1;
  }
  const long sdiag_self = Total(Delta(s0, s1));

  std::ostringstream ttl_text;
  ttl_text << ttl;
  const std::vector<Config> configs = {
      {"cache " + ttl_text.str() + " s", {"--cache-ttl", ttl_text.str()}},
      {"no cache", {"--cache-ttl", "0"}},
      {"no cache, no budget", {"--cache-ttl", "0", "--max-per-minute", "0"}},
  };
  std::vector<Row> rows;
  int port = port_base + 30;
  for (const Config& c : configs) {
    for (int n : agents) {
      auto started = HttpServer::Start(binary, lab, port++, c.args);
      if (!started.ok()) {
        std::fprintf(stderr, "ctld_load_bench: %s\n", started.status().message().c_str());
        return 1;
      }
      std::unique_ptr<HttpServer> server = std::move(started).value();
      std::fprintf(stderr, "ctld_load_bench: %s, %d agents, %d s\n", c.name.c_str(), n, seconds);
      RpcCounts before = ReadRpcCounts(lab);
      AgentLoad load = RunOverviewAgents(server->port(), n, std::chrono::seconds(seconds));
      RpcCounts after = ReadRpcCounts(lab);
      rows.push_back({c.name, n, load, Total(Delta(before, after)) - sdiag_self});
    }
  }

  std::printf("slurmctld load: RPCs per minute reaching slurmctld (sdiag, all message types, less "
              "the bench's own sdiag) while N agents call slurm_overview in a loop (%d s a run; "
              "one overview = sinfo, squeue, sdiag)\n\n",
              seconds);
  std::printf("lab: %d nodes, profile %s (%s, %s)\n\n", lab.options().nodes,
              lab.options().profile.c_str(), lab.options().dir.c_str(),
              own_lab ? "brought up by this bench" : "already up, left up");
  std::printf("| configuration | agents | overview calls/min | slurmctld RPCs/min | RPCs per "
              "call | x cached | errors | no-evidence sections |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::map<int, double> cached;
  for (const Row& r : rows) {
    if (r.config == configs[0].name) cached[r.agents] = r.rpm();
  }
  for (const Row& r : rows) {
    double base = cached[r.agents];
    std::printf("| %s | %d | %.0f | %.1f | %.3f | %s | %ld | %ld |\n", r.config.c_str(), r.agents,
                r.cpm(), r.rpm(), r.load.calls > 0 ? double(r.rpcs) / r.load.calls : 0.0,
                base > 0 ? (std::to_string(r.rpm() / base).substr(0, 5)).c_str() : "-",
                r.load.errors, r.load.no_evidence);
  }
  return 0;
}

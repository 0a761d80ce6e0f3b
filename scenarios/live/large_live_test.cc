// The large profile on a live lab (ctest label `live`; root, skipped otherwise): 256 nodes (port
// base 22300) in `make test`, 1,024 (port base 18100) with SLURM_RCA_LARGE_NODES=1024, which is
// what `make test-large` runs. Every figure is Slurm's own: sinfo's nodes and partitions, squeue's
// running and pending jobs and their reasons, sacct's finished jobs; after Down, no process of the
// lab (a daemon by its recorded PID, a job process by the lab's SLURM_CONF) is alive.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "scenarios/live/lab.h"
#include "scenarios/live/large_profile.h"

namespace slurm_rca::live {
namespace {

const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

constexpr std::uint64_t kSeed = 1;

int Nodes() {
  const char* env = std::getenv("SLURM_RCA_LARGE_NODES");
  return env != nullptr ? std::atoi(env) : 256;
}

// The history's finished jobs: 2,000 unless SLURM_RCA_LARGE_HISTORY says (-1: the plan's 50,000
// scaled to the nodes, 12,500 at 256). At about 37 tasks a second on this machine the plan's
// history alone takes 5.6 minutes at 256 nodes: make test keeps the bring-up to about 2.
int History() {
  const char* env = std::getenv("SLURM_RCA_LARGE_HISTORY");
  return env != nullptr ? std::atoi(env) : 2000;
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Processes with this lab's SLURM_CONF in their environment (job processes, slurmstepd, the
// daemons) or its directory on their command line.
std::vector<std::string> LabProcesses(const std::string& dir) {
  const std::string conf = "SLURM_CONF=" + dir + "/etc/slurm.conf";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(pid) == ::getpid()) continue;
    std::string env = ReadFile(entry.path() / "environ");
    std::string cmdline = ReadFile(entry.path() / "cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    bool ours = cmdline.find(dir + "/") != std::string::npos;
    for (size_t at = 0; !ours && at < env.size();) {
      size_t end = env.find('\0', at);
      if (env.compare(at, (end == std::string::npos ? env.size() : end) - at, conf) == 0) {
        ours = true;
      }
      at = end == std::string::npos ? env.size() : end + 1;
    }
    if (ours) found.push_back(pid + " " + cmdline);
  }
  return found;
}

TEST(LargeLab, UpShowsASitesQueueAndDownLeavesNothing) {
  if (::geteuid() != 0) GTEST_SKIP() << "the lab needs root";
  const int nodes = Nodes();
  ASSERT_TRUE(CheckLargeNodes(nodes).ok()) << CheckLargeNodes(nodes).message();
  const std::string dir = "/tmp/rca-large-live-" + std::to_string(::getpid());
  Lab lab(LabOptions{.dir = dir,
                     .nodes = nodes,
                     .port_base = nodes > 256 ? 18100 : 22300,
                     .profile = "large",
                     .seed = kSeed,
                     .large_history = History()});
  const LargeTrace trace =
      GenerateLargeTrace(kSeed, LargeOptions{.nodes = nodes, .history_tasks = History()});

  auto start = Clock::now();
  base::Status up = lab.Up(std::cout);
  const double up_s = Since(start);
  std::cout << "bring-up of " << nodes << " nodes: " << up_s << " s\n";
  // Every recorded daemon, before Down removes the records.
  std::map<std::string, ProcessId> daemons;
  for (const std::string& name : lab.DaemonNames()) {
    if (auto id = lab.DaemonId(name)) daemons.emplace(name, *id);
  }
  if (up.ok()) {
    // Nodes and partitions, as sinfo has them.
    ToolResult sinfo = lab.Client({"sinfo", "-h", "-N", "-o", "%N %R %T"}, seconds(30));
    ASSERT_TRUE(sinfo.ok()) << sinfo.Summary();
    std::set<std::string> names, partitions;
    std::map<std::string, int> per_partition;
    for (const std::string& line : Lines(sinfo.out)) {
      std::istringstream f(line);
      std::string node, partition, state;
      f >> node >> partition >> state;
      names.insert(node);
      partitions.insert(partition);
      ++per_partition[partition];
      EXPECT_EQ(state.find("down"), std::string::npos) << line;
      EXPECT_EQ(state.find("drain"), std::string::npos) << line;
    }
    EXPECT_EQ(static_cast<int>(names.size()), nodes);
    EXPECT_EQ(partitions, (std::set<std::string>{"cpu", "debug", "gpu", "long"}));
    EXPECT_EQ(per_partition["gpu"], nodes / 8);
    EXPECT_EQ(per_partition["cpu"], nodes - nodes / 8);
    ToolResult gres = lab.Client({"scontrol", "show", "node", "node1"}, seconds(30));
    EXPECT_NE(gres.out.find("Gres=gpu:2"), std::string::npos) << gres.out;
    // The GPU nodes' nvidia-smi test double, healthy.
    ToolResult smi = RunTool(
        {lab.Path("nodes/node1/bin/nvidia-smi"),
         "--query-gpu=ecc.errors.uncorrected.volatile.total", "--format=csv,noheader,nounits"},
        lab.ClientEnv(), seconds(10));
    EXPECT_EQ(smi.out, "0\n0\n") << smi.Summary();

    // Running and pending, task by task.
    ToolResult running = lab.Client({"squeue", "-h", "-r", "-t", "R", "-o", "%i"}, seconds(60));
    const long run = static_cast<long>(Lines(running.out).size());
    EXPECT_GE(run, trace.Tasks(LargePhase::kRunning) * 95 / 100);
    // The reasons are the scheduler's: wait for a pass of the main scheduler and the backfill.
    std::map<std::string, long> reasons;
    const std::set<std::string> want = {
        "Priority",          "Resources",   "QOSMaxJobsPerUserLimit",
        "AssocGrpJobsLimit", "Reservation", "Dependency",
        "JobHeldUser",       "BeginTime"};
    auto deadline = Clock::now() + seconds(150);
    long queued = 0;
    while (true) {
      reasons.clear();
      ToolResult pd = lab.Client({"squeue", "-h", "-r", "-t", "PD", "-o", "%r"}, seconds(60));
      for (const std::string& r : Lines(pd.out)) ++reasons[r];
      queued = 0;
      for (const auto& [r, n] : reasons) queued += n;
      bool all = true;
      for (const std::string& w : want) all = all && reasons.count(w);
      if (all || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(seconds(5));
    }
    std::cout << "running " << run << ", pending " << queued << ":";
    for (const auto& [r, n] : reasons) std::cout << " " << r << "=" << n;
    std::cout << "\n";
    for (const std::string& w : want) EXPECT_TRUE(reasons.count(w)) << "no job pending for " << w;
    EXPECT_GE(run + queued,
              (trace.Tasks(LargePhase::kRunning) + trace.Tasks(LargePhase::kPending)) * 95 / 100);
    if (nodes == 1024) {
      EXPECT_GE(run + queued, 20000);
    }

    // Finished jobs, as accounting has them (array tasks one a line).
    // Up() returns once the controller's queue to slurmdbd is empty; slurmdbd may still be
    // committing the last of it.
    long finished = 0;
    for (auto until = Clock::now() + seconds(60);;) {
      ToolResult acct = lab.Client({"sacct", "-a", "-X", "-n", "-S", "now-1days", "-E", "now",
                                    "-s", "CD,F", "-o", "JobID"},
                                   seconds(120));
      ASSERT_TRUE(acct.ok()) << acct.Summary();
      finished = static_cast<long>(Lines(acct.out).size());
      if (finished >= trace.Tasks(LargePhase::kHistory) || Clock::now() >= until) break;
      std::this_thread::sleep_for(seconds(5));
    }
    std::cout << "finished in sacct: " << finished << "\n";
    EXPECT_GE(finished, trace.Tasks(LargePhase::kHistory));
    std::cout << lab.MeasureFootprint().ToText() << "\n";
  } else {
    ADD_FAILURE() << up.message();
  }

  auto down_start = Clock::now();
  base::Status down = lab.Down(std::cout);
  std::cout << "tear-down: " << Since(down_start) << " s\n";
  EXPECT_TRUE(down.ok()) << down.message();
  EXPECT_EQ(static_cast<int>(daemons.size()), 4 + nodes);
  for (const auto& [name, id] : daemons) EXPECT_FALSE(IsAlive(id)) << name << " " << id.pid;
  EXPECT_EQ(LabProcesses(dir), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace slurm_rca::live

// The slurmctld protection, measured on a live lab (ctest label `live`, #9, port base 24800).
//
// One real slurm-mcp serves the lab over Streamable HTTP with its production read settings
// (--cache-ttl 10, the default rate budget and concurrency bound): the deployment in which a fleet
// of agents shares one process-wide cache (a stdio server serves one agent). 50 MCP sessions call
// slurm_overview in a loop for 30 s. slurmctld's own RPC counters (sdiag, "Remote Procedure Call
// statistics by message type") are read before and after, less the test's own sdiag RPC.
//
// The bound, per message type T: delta(T) <= k(T) * (floor(W / TTL) + 1), where W is the time
// the agents ran (30 s and the last calls' answers) and k(T) the number of RPCs of type T one
// uncached overview sends (measured first on the quiet lab: sinfo, squeue and sdiag each send
// their own types). A read is reused for TTL seconds from when it finished, so two reads of one
// argv start more than TTL apart and at most floor(W / TTL) + 1 start within W: 4 for 30 s and
// a 10 s TTL, which is the ceil(30 / TTL) + 1. Types the overview does not send (the lab's
// own traffic) are held to the same per-entry bound. bench/ctld_load_bench.cc measures the same
// loop without the cache.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "mcp/protocol/client.h"
#include "scenarios/live/ctld_load.h"
#include "scenarios/live/lab.h"

#ifndef SLURM_MCP_BINARY
#define SLURM_MCP_BINARY ""
#endif

namespace slurm_rca {
namespace {

// The lab's templates, from this source tree (main sets them in rca-bench: base::DataPaths).
const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

namespace fs = std::filesystem;
using live::RpcCounts;
using mcp::Json;

// Below Linux's ephemeral range (32768-60999): 50 HTTP clients' local ports took a lab port there.
constexpr int kPortBase = 24800;
constexpr int kAgents = 50;
constexpr auto kLoop = std::chrono::seconds(30);
constexpr double kTtl = 10;

TEST(McpProtectionLive, FiftyAgentsCostSlurmctldAtMostOneRpcOfEachKindPerTtl) {
  if (::geteuid() != 0) GTEST_SKIP() << "the live lab needs root";
  const std::string binary = SLURM_MCP_BINARY;
  ASSERT_TRUE(fs::exists(binary)) << binary;
  char dir[] = "/tmp/rca-mcpprot-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  live::Lab lab(live::LabOptions{.dir = dir, .nodes = 4, .port_base = kPortBase});
  struct Down {
    live::Lab& lab;
    ~Down() { lab.Down(std::cout); }
  } down{lab};
  {
    base::Status up = lab.Up(std::cout);
    ASSERT_TRUE(up.ok()) << up.message();
  }
  // Something in the queue, so that squeue has rows to send.
  ASSERT_TRUE(lab.Client({"sbatch", "--chdir=" + lab.Path("work"), "-J", "train", "-w", "node4",
                          "--wrap", "sleep 600"}).ok());

  // Production read settings but for the TTL, which is stated: the default rate budget (60 a
  // minute), concurrency bound (2) and timeout (20 s).
  std::ostringstream ttl;
  ttl << kTtl;
  auto started =
      live::HttpServer::Start(binary, lab, kPortBase + 30, {"--cache-ttl", ttl.str()});
  ASSERT_TRUE(started.ok()) << started.status().message();
  std::unique_ptr<live::HttpServer> server = std::move(started).value();
  const live::ProcessId server_pid = server->pid();

  // The cost of reading sdiag, and of one uncached overview (k(T)), on the quiet lab.
  RpcCounts s0 = live::ReadRpcCounts(lab);
  RpcCounts s1 = live::ReadRpcCounts(lab);
  ASSERT_FALSE(s1.empty()) << "no RPC statistics in sdiag's output";
  RpcCounts self = live::Delta(s0, s1);
  {
    mcp::Client probe(std::make_unique<mcp::HttpClientTransport>("127.0.0.1", server->port()));
    ASSERT_TRUE(probe.Initialize("protection-test", "0.1.0").ok());
    auto first = probe.CallTool("slurm_overview", Json::object());
    ASSERT_TRUE(first.ok() && !first->is_error) << (first.ok() ? first->Text() : "");
    for (const Json& s : (*first->structured)["sections"]) {
      ASSERT_EQ(s.value("outcome", ""), "ok") << s.dump().substr(0, 300);
      ASSERT_FALSE(s.value("cached", true)) << "the calibration read must start the processes";
    }
  }
  RpcCounts per_overview = live::Delta(s1, live::ReadRpcCounts(lab));
  for (const auto& [type, n] : self) per_overview[type] -= n;
  std::erase_if(per_overview, [](const auto& kv) { return kv.second <= 0; });
  ASSERT_FALSE(per_overview.empty());

  // 50 sessions, each its own MCP client, looping for 30 s.
  RpcCounts before = live::ReadRpcCounts(lab);
  live::AgentLoad load = live::RunOverviewAgents(server->port(), kAgents, kLoop);
  RpcCounts delta = live::Delta(before, live::ReadRpcCounts(lab));
  for (const auto& [type, n] : self) delta[type] -= n;  // the test's own sdiag
  // Reads start only while agents call: within load.seconds.
  const double window = load.seconds;
  const long per_entry = static_cast<long>(std::floor(window / kTtl)) + 1;

  std::cout << std::fixed << std::setprecision(1) << "[protection] " << kAgents
            << " agents, slurm_overview in a loop for " << window << " s, cache TTL " << kTtl
            << " s: " << load.calls << " calls (" << load.calls / window << "/s), "
            << load.errors << " errors, " << load.no_evidence << " no-evidence sections, "
            << load.sections_read << " sections read live\n";
  std::cout << "[protection] sdiag's own RPC per read (subtracted):";
  for (const auto& [type, n] : self) std::cout << " " << type << "=" << n;
  std::cout << "\n[protection] bound per type: k * (floor(" << window << " / " << kTtl
            << ") + 1) = k * " << per_entry << ", k = RPCs of that type in one uncached overview\n";
  std::cout << "[protection] " << std::left << std::setw(34) << "message type" << std::right
            << std::setw(6) << "k" << std::setw(8) << "delta" << std::setw(8) << "bound" << "\n";
  for (const auto& [type, k] : per_overview) {
    long bound = k * per_entry;
    std::cout << "[protection] " << std::left << std::setw(34) << type << std::right
              << std::setw(6) << k << std::setw(8) << delta[type] << std::setw(8) << bound
              << "\n";
    EXPECT_LE(delta[type], bound) << type;
  }
  for (const auto& [type, n] : delta) {
    if (per_overview.count(type) || n == 0) continue;
    // Not sent by the overview: the lab's own traffic (slurmd registrations, say).
    std::cout << "[protection] " << std::left << std::setw(34) << type << std::right
              << std::setw(6) << "-" << std::setw(8) << n << std::setw(8) << per_entry
              << "  (not an RPC of the overview)\n";
    EXPECT_LE(n, per_entry) << type << " is not an RPC of the overview, yet it grew";
  }
  std::cout << "[protection] slurmctld RPCs in the window: " << live::Total(delta) << " for "
            << load.calls << " overview calls\n";
  EXPECT_EQ(load.errors, 0) << "first: " << load.first_error;
  EXPECT_EQ(load.no_evidence, 0);
  EXPECT_GT(load.calls, kAgents) << "every agent should have called more than once";

  server.reset();
  EXPECT_FALSE(live::IsAlive(server_pid)) << "slurm-mcp is still running";
  EXPECT_TRUE(lab.Down(std::cout).ok());
}

}  // namespace
}  // namespace slurm_rca

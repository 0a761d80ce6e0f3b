// What a fleet of MCP agents costs slurmctld: its RPC counters from sdiag, a slurm-mcp serving a
// lab over Streamable HTTP, and N agents (one MCP session each) looping on slurm_overview.
// Used by tests/mcp_protection_live_test.cc and bench/ctld_load_bench.cc. Privileged harness:
// it starts a process.
//
//   auto started = HttpServer::Start(binary, lab, port, {"--cache-ttl", "10"});  // base::Result
//   if (!started.ok()) die(started.status().message());
//   std::unique_ptr<HttpServer> server = std::move(started).value();
//   RpcCounts before = ReadRpcCounts(lab);
//   AgentLoad load = RunOverviewAgents(server->port(), 50, std::chrono::seconds(30));
//   RpcCounts cost = Delta(before, ReadRpcCounts(lab));   // includes one sdiag of ours
//   server.reset();                                         // SIGTERM by PID, then SIGKILL
#ifndef SLURM_RCA_SCENARIOS_LIVE_CTLD_LOAD_H_
#define SLURM_RCA_SCENARIOS_LIVE_CTLD_LOAD_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/process.h"

namespace slurm_rca::live {

// sdiag's "Remote Procedure Call statistics by message type": message type -> count.
using RpcCounts = std::map<std::string, long>;

// Parses sdiag's output; empty when the section is missing.
RpcCounts ParseRpcCounts(const std::string& sdiag_output);
// The counters of the lab's slurmctld now (one sdiag: one REQUEST_STATS_INFO of its own); empty
// when sdiag fails.
RpcCounts ReadRpcCounts(const Lab& lab);
// after - before, types that did not change left out.
RpcCounts Delta(const RpcCounts& before, const RpcCounts& after);
long Total(const RpcCounts& counts);

// `slurm-mcp serve --http 127.0.0.1:PORT` for the lab's cluster, with extra arguments (e.g.
// --cache-ttl 0), started detached and tracked by PID; stderr to DIR/log/slurm-mcp-PORT.log.
class HttpServer {
 public:
  // Never null. A failed status (Status::Error) when it does not start or does not answer
  // initialize within 10 s; the message says which, and where its log is. `bearer`: the token
  // initialize carries (a server started with --auth-*); "" none.
  static base::Result<std::unique_ptr<HttpServer>> Start(
      const std::string& binary, const Lab& lab, int port,
      const std::vector<std::string>& extra_args, const std::string& bearer = "");
  ~HttpServer();  // SIGTERM, then SIGKILL after 5 s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  const ProcessId& pid() const { return pid_; }

 private:
  HttpServer() = default;
  ProcessId pid_;
  int port_ = 0;
};

struct AgentLoad {
  int agents = 0;
  double seconds = 0;         // from the first call to the last answer
  long calls = 0;             // slurm_overview calls answered
  long errors = 0;            // transport errors, tool errors, agents that could not connect
  long no_evidence = 0;       // sections that were not evidence (failed, timed out, refused)
  long sections_read = 0;     // sections read live (not cached): reads that reached Slurm
  std::string first_error;    // what the first error said
};

// `agents` MCP sessions to 127.0.0.1:port, each calling slurm_overview in a loop until `duration`
// has passed (a call in flight then is finished and counted).
AgentLoad RunOverviewAgents(int port, int agents, std::chrono::milliseconds duration);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_CTLD_LOAD_H_

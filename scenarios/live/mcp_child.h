// slurm-mcp as a stdio child with the C++ MCP client connected to it: how `rca-bench run` and
// `rca-bench diagnose` give agents the MCP tools. Part of the privileged harness (it starts a
// process); agents receive only the connected client. The client speaks MCP 2026-07-28 when
// slurm-mcp does and falls back to the 2025 handshake when it does not (mcp::Client::Connect);
// client().connection() says which era it got.
//
//   auto started = McpChild::Start("/path/slurm-mcp", {"--replay", dir, "--offset", "120"});
//   if (!started.ok()) die(started.status().message());
//   std::unique_ptr<McpChild> child = std::move(started).value();
//   child->client().CallTool("slurm_overview", {});
//   child.reset();   // closes its stdin, then stops it by PID
#ifndef SLURM_RCA_SCENARIOS_LIVE_MCP_CHILD_H_
#define SLURM_RCA_SCENARIOS_LIVE_MCP_CHILD_H_

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/protocol/client.h"
#include "scenarios/live/process.h"

namespace slurm_rca::live {

class McpChild {
 public:
  // Starts `binary serve --stdio <serve_args>` (stderr to log_path, or discarded), connects the
  // client in `era` mode. Never null; a failed status (Status::Error) when it cannot start or
  // the client cannot connect.
  static base::Result<std::unique_ptr<McpChild>> Start(const std::string& binary,
                                                       const std::vector<std::string>& serve_args,
                                                       const std::string& log_path = "",
                                                       mcp::EraMode era = mcp::EraMode::kAuto);
  ~McpChild();
  McpChild(const McpChild&) = delete;
  McpChild& operator=(const McpChild&) = delete;

  mcp::Client& client() { return *client_; }
  const ProcessId& pid() const { return pid_; }

 private:
  McpChild() = default;
  ProcessId pid_;
  int to_child_ = -1, from_child_ = -1;
  std::unique_ptr<mcp::Client> client_;
};

// The slurm-mcp next to the running program (/proc/self/exe), or "" when there is none.
std::string SiblingProgram(const std::string& name);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_MCP_CHILD_H_

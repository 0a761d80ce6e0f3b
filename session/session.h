// OpenSession: the one place an agent's session is opened (agents::Session, agents/harness.h):
// slurm-mcp as a stdio child with the MCP client connected to it, beside an mcp::Backend of the
// same evidence for the raw reads of configuration A. Used by `rca-bench run` and `rca-bench
// diagnose` and by bench/agent_loop_bench. Four sources, one SessionOptions:
//
//   kReplay   a recorded bundle at an offset (run --mode replay, diagnose --replay)
//   kLab      a fresh live lab with a scenario injected, read offset_s later; healed and taken
//             down when the session ends (run --mode live; needs root)
//   kCluster  the running cluster, read as slurm-mcp's back-end flags say (diagnose)
//   kRemote   a slurm-mcp already serving Streamable HTTP, perhaps https behind OAuth (diagnose
//             --mcp-url): no child and no back-end, so no raw reads (configuration A)
//
//   SessionOptions o;
//   o.slurm_mcp = live::SiblingProgram("slurm-mcp");
//   o.bundle_dir = "fixtures/busy/S01-accounting-backend-stall";
//   base::Result<std::unique_ptr<agents::Session>> s = OpenSession(o);
//   if (!s.ok()) die(s.status().ToString());
//   (*s)->client()->CallTool("slurm_overview", {});
//   s->reset();  // stops the child (and heals and takes down a lab)
//
// It starts processes (the child, and for kLab the lab's daemons), so it lives outside agents/,
// which is on the read path and never does (tests/read_path_test.cc): the one module above both
// agents/ and scenarios/live/.
//
// Refuses with InvalidArgument what the options name but cannot be used (a bundle that does not
// open: "bundle DIR: why"; cluster flags that do not map: the flag's own message); with
// Unavailable what did not start ("slurm-mcp: why", "lab up: why", "inject ID: why").
#ifndef SLURM_RCA_SESSION_SESSION_H_
#define SLURM_RCA_SESSION_SESSION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agents/harness.h"
#include "base/status.h"
#include "mcp/backend/live_flags.h"
#include "scenarios/live/lab.h"
#include "scenarios/scenario.h"

namespace slurm_rca::session {

struct SessionOptions {
  enum class Source { kReplay, kLab, kCluster, kRemote };
  // Where the evidence comes from (see above).
  Source source = Source::kReplay;
  // The slurm-mcp started as the stdio child; required (live::SiblingProgram finds the one beside
  // the running program).
  std::string slurm_mcp;
  // kReplay: the recorded bundle's directory.
  std::string bundle_dir;
  // kReplay: the evidence as it was this many seconds after the fault. kLab: how long after the
  // injection the session opens.
  double offset_s = 120;
  // kLab: the scenario injected into the lab, and healed when the session ends.
  scenarios::Scenario scenario;
  // kLab: the lab brought up for the session and taken down after it.
  live::LabOptions lab;
  // kCluster: how the cluster is read; the child gets the same flags (mcp::ServeArgs).
  mcp::LiveFlags cluster;
  // kRemote: where the server is (RemoteFromUrl), how to reach it and its tokens.
  struct Remote {
    std::string url;  // as given, for messages
    std::string host;
    int port = 0;
    std::string path = "/mcp";
    bool tls = false;     // https: the certificate checked against ca_file ('': the system's CAs)
    std::string ca_file;
    // Bearer tokens (mcp::TokenSource's shape; mcp/auth MakeTokenSource); empty: none.
    std::function<base::Result<std::string>(bool refresh)> token;
  };
  Remote remote;
  // What the session opens: the child and its client, the back-end. Both by default; rca-bench
  // run opens what the configuration reads (agents::NeedsOf: no child for configuration A, no
  // back-end of their own for the MCP configurations). Without the back-end a bundle is opened
  // by the child alone, so one that does not open is "slurm-mcp: why" (Unavailable).
  agents::SessionNeeds needs;
};

// http(s)://HOST[:PORT][/PATH] (PATH default /mcp, PORT 80 or 443, HOST may be [IPv6]) as a
// Remote without its CA and token; InvalidArgument naming what is wrong.
base::Result<SessionOptions::Remote> RemoteFromUrl(const std::string& url);

// The session `options` describe, its child started and its client initialized; never null.
base::Result<std::unique_ptr<agents::Session>> OpenSession(const SessionOptions& options);

// slurm-mcp serve arguments that replay `bundle_dir` at `offset_s`, as a kReplay session's child
// gets them (the benches start servers with them too).
std::vector<std::string> ReplayServeArgs(const std::string& bundle_dir, double offset_s);

}  // namespace slurm_rca::session

#endif  // SLURM_RCA_SESSION_SESSION_H_

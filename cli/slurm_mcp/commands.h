// slurm-mcp's commands, each a function that main's table calls once argv is parsed: serve (the
// MCP server over stdio or Streamable HTTP), the one-shot verbs for people (tools, describe,
// overview, query) and call (a tool of a running server, through the C++ client). Each returns
// the process's exit code: 0, 1 (a tool's error, or a failure said on stderr), 2 (usage, said on
// stderr as "slurm-mcp: <what> (see slurm-mcp --help)").
#ifndef SLURM_RCA_CLI_SLURM_MCP_COMMANDS_H_
#define SLURM_RCA_CLI_SLURM_MCP_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/slurm_mcp/oauth.h"
#include "base/status.h"
#include "mcp/auth/client_credentials.h"
#include "mcp/backend/audit_log.h"
#include "mcp/backend/live_flags.h"
#include "mcp/evidence/evidence.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/protocol/metrics.h"
#include "mcp/telemetry/gpu_idle.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::cli::slurm_mcp {

inline constexpr int kUsage = 2;

// "slurm-mcp: <message> (see slurm-mcp --help)" on stderr; returns kUsage.
int Usage(const std::string& message);

// Options that choose and tune the back-end, shared by serve and the one-shot verbs.
struct BackendFlags {
  std::string replay;
  double offset = -1;
  mcp::LiveFlags live;  // the live back-end's flags, mapped by mcp::LiveOptionsFromFlags
  std::string audit_log;
  size_t max_rows = 200;
  mcp::Metrics* metrics = nullptr;  // serve --metrics: counts the live back-end's reads

  void Add(CLI::App* app);
  // Builds the back-end (never null), or says why the flags do not make one.
  base::Result<std::unique_ptr<mcp::Backend>> Make() const;
};

// What the tools of a command read through: the back-end and the audit log the flags name.
struct ToolBackend {
  std::unique_ptr<mcp::Backend> backend;
  std::unique_ptr<mcp::AuditLog> audit;  // null: no --audit-log
};
// Opens both and points `surface` at them; InvalidArgument says why the flags open nothing.
base::Result<ToolBackend> OpenToolBackend(const BackendFlags& flags, mcp::SurfaceOptions& surface);
// The live back-end's read timeout fitted to the controller's MessageTimeout
// (mcp/backend/live_flags.h, ChooseReadTimeout): one read of the config topic's argv, bounded by
// --timeout, the choice applied to `backend` and said on stderr. Nothing for a replay. The
// one-shot commands call it before their read; serve runs it on a thread of its own beside the
// server (a tool's read made before it ends keeps the timeout it started with).
void FitReadTimeout(const BackendFlags& flags, mcp::Backend& backend);

// serve --http's limits (HttpOptions, mcp/protocol/http_transport.h), with their defaults.
struct HttpLimits {
  int workers = -1;  // unset: 8, or 0 on the replay back-end
  // One event thread beside the worker pool: on two cores a second one cost 36-37 us of CPU a
  // replayed call against 23-26 us (mcp_bench c8/c64, bench/README.md), contending with the
  // first and with the clients for the cores.
  int event_threads = 1;
  double header_timeout = 10;
  double idle_timeout = 60;
  std::size_t max_connections = 4096;
  std::size_t max_per_address = 2048;

  void Add(CLI::App* serve);
  // Raises the open-file limit to what max_connections takes (a connection is one descriptor;
  // the back-end's reads, the audit log and the listeners take a few more), or lowers
  // max_connections to what the hard limit allows, so that a client past it gets a 503 rather
  // than waiting in the kernel's backlog for a descriptor. What it lowered, for stderr; "" if
  // nothing.
  std::string FitToFileLimit();
  void ApplyTo(mcp::HttpOptions& h, bool replay) const;
};

// The bearer token in `path`, its trailing newlines cut; InvalidArgument when it cannot be read.
base::Result<std::string> ReadToken(const std::string& path);

// serve's options beside the back-end's.
struct ServeOptions {
  bool stdio = false;
  std::string http;  // HOST:PORT
  std::string token_file;
  std::string tls_cert;  // --tls-cert / --tls-key: https
  std::string tls_key;
  bool behind_tls_proxy = false;
  std::vector<std::string> allowed_hosts;  // --allowed-host
  OAuthFlags oauth;  // --auth-*: OAuth 2.1 access tokens instead of --token-file
  bool no_sessions = false;
  size_t max_body = 1 << 20;
  HttpLimits limits;
  std::string skills_dir;        // '' serves none
  bool skills_explicit = false;  // --skills given: runbooks that do not load are a usage error
  std::string metrics_addr;      // --metrics ADDR; '' is off
  bool conformance_fixtures = false;
  // gpu_idle's sampling: off unless an interval is given (it starts processes and HTTP requests
  // on a schedule, which a read-only server must not do unasked).
  std::int64_t gpu_interval = 0;
  std::string gpu_node;
  std::vector<std::string> dcgm_hosts;
  mcp::GpuIdleOptions idle;
};

// serve --http: SIGINT and SIGTERM stop the server cleanly. Blocks them in this thread, before
// any thread starts, so that every thread inherits the mask and the one Serve starts waits for
// them.
void BlockStopSignals();

// The serve subcommand of `app`, its options bound to `options` and `flags`.
CLI::App* AddServe(CLI::App& app, ServeOptions& options, BackendFlags& flags);
// Serves MCP until stdin closes (--stdio) or a stop signal (--http).
int Serve(ServeOptions options, BackendFlags flags);

// The one-shot verbs' options.
struct OneShotOptions {
  bool json = false;                  // the tool result (tools: the tools/list result) as JSON
  bool conformance_fixtures = false;  // tools: list the conformance suite's test tools too
  std::string topic;                  // query, describe
  std::vector<std::string> filters;   // query: NAME=VALUE
  std::string group_by;               // query: "state,reason" (the tool splits it)
};
CLI::App* AddTools(CLI::App& app, OneShotOptions& options);
CLI::App* AddOverview(CLI::App& app, OneShotOptions& options, BackendFlags& flags);
CLI::App* AddQuery(CLI::App& app, OneShotOptions& options, BackendFlags& flags);
CLI::App* AddDescribe(CLI::App& app, OneShotOptions& options);
// tools: the tool list; describe: slurm_describe of the topic (neither needs a back-end).
int ListTools(const OneShotOptions& options);
int Describe(const OneShotOptions& options);
// overview and query: the tool on the back-end the flags name.
int Overview(const BackendFlags& flags, const OneShotOptions& options);
int Query(const BackendFlags& flags, const OneShotOptions& options);

// call: one tool of a running slurm-mcp over HTTP, through the C++ MCP client.
struct CallOptions {
  std::string http;  // HOST:PORT
  // --token-file, or OAuth client credentials (--oauth-*; mcp/auth/client_credentials.h); the
  // resource defaults to http(s)://HOST:PORT/mcp of --http.
  mcp::auth::ClientTokenFlags auth;
  bool https = false;          // --https, or --tls-ca
  std::string tls_ca;
  std::string tool;
  std::string args = "{}";  // a JSON object
  std::string era = "auto";  // auto, modern or legacy
  bool json = false;
};
CLI::App* AddCall(CLI::App& app, CallOptions& options);
int Call(const CallOptions& options);

}  // namespace slurm_rca::cli::slurm_mcp

#endif  // SLURM_RCA_CLI_SLURM_MCP_COMMANDS_H_

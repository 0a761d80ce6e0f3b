// The stdio transport: newline-delimited JSON-RPC on a pair of file descriptors (stdin/stdout
// for a server a client spawned).
//
// Every line read is one message; every line written is one compact message, and nothing else
// ever reaches out_fd (diagnostics go to stderr). Cheap requests (initialize, ping,
// logging/setLevel, tools/list) and all notifications are handled on the reading thread, in
// order; other requests (tools/call) run on a small pool of worker threads, so a ping or a
// notifications/cancelled is answered while a slow Slurm read is in flight. Responses may
// therefore come out of order, which the spec allows.
//
//   Server server(options);
//   return RunStdio(server, STDIN_FILENO, STDOUT_FILENO);   // returns on stdin EOF
//
// Refused input is answered, never fatal: invalid JSON → -32700, a batch or a malformed message
// → -32600 (id null when unreadable), a line over max_line_bytes → -32600 and the line skipped,
// more than max_queued waiting calls → -32000 "server busy". Empty lines are ignored.
//
// Shutdown: on EOF of in_fd the calls in flight get drain_timeout to finish (their responses are
// still written); then they are marked cancelled and get cancel_grace to notice; then RunStdio
// writes nothing more to out_fd and returns 0 (1 on a read error). A call that ignores
// cancellation still runs on its worker and uses `server`. Given `still_running`, RunStdio returns
// anyway and stores how many such calls there are: while it is above 0 `server` must not be
// destroyed, so the caller ends the process without destructors (slurm-mcp calls _Exit). Without
// it, RunStdio waits for them, and `server` may be destroyed as soon as it returns.
//
// RunStdio ignores SIGPIPE process-wide (when it was at its default) so that a vanished client
// ends writes with EPIPE instead of killing the server.
#ifndef SLURM_RCA_MCP_PROTOCOL_STDIO_TRANSPORT_H_
#define SLURM_RCA_MCP_PROTOCOL_STDIO_TRANSPORT_H_

#include <chrono>
#include <cstddef>

#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {

struct StdioOptions {
  int workers = 4;                               // requests run at once on worker threads
  std::size_t max_queued = 64;                   // requests waiting for a worker before "busy"
  std::size_t max_line_bytes = 4u << 20;         // longer lines are refused and skipped
  std::chrono::milliseconds drain_timeout{500};  // after EOF, for calls in flight to finish
  std::chrono::milliseconds cancel_grace{200};   // then, for cancelled calls to notice
};

// Serves one session on in_fd/out_fd until EOF of in_fd. Neither descriptor is closed.
int RunStdio(Server& server, int in_fd, int out_fd, StdioOptions options = {},
             int* still_running = nullptr);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_STDIO_TRANSPORT_H_

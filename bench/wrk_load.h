// wrk (Debian's wrk 4.1, C, keep-alive) as mcp_bench's HTTP load generator, driven by
// bench/mcp_session.lua: one connection per wrk thread, a session per connection, every answer
// checked by the script.
//
//   WrkOptions o{.wrk = "/usr/bin/wrk", .script = ".../mcp_session.lua", .port = port,
//                .connections = 64, .seconds = 5, .arguments = R"({"topic":"nodes"})",
//                .rows = 6, .row_key = "\"partition\":"};
//   base::Result<WrkRun> run = RunWrk(o);
//   run->ok / run->seconds   // checked answers per second
//   run->cpu_seconds         // wrk's own utime+stime (getrusage of the child), all its threads
//
// wrk runs as a child of this process with stdout and stderr on a pipe; it gets SIGTERM if this
// process dies and SIGKILL if it outlives its run by 30 s. A failed status (Status::Error) when
// it cannot start, exits non-zero, or prints no CHECK line.
#ifndef SLURM_RCA_BENCH_WRK_LOAD_H_
#define SLURM_RCA_BENCH_WRK_LOAD_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace slurm_rca::bench {

struct WrkOptions {
  std::string wrk;             // the wrk binary
  std::string script;          // bench/mcp_session.lua
  int port = 0;                // 127.0.0.1:port/mcp
  int connections = 1;         // each its own wrk thread and session
  double seconds = 5;          // rounded to whole seconds, as wrk takes them
  double timeout_seconds = 5;  // a request unanswered this long counts as a wrk timeout
  std::string arguments;       // slurm_query's arguments, JSON text
  int rows = 0;                // rows each answer must carry
  std::string row_key;         // a key each row object has once
  std::string expected_file;   // an answer checked before the run ("": none); see mcp_session.lua
  std::string bearer_file;     // a file holding the bearer token every request carries ("": none)
  bool tls = false;            // https://127.0.0.1:port/mcp
};

struct WrkRun {
  long ok = 0;             // tools/call answers that passed every check
  long identical = 0;      // of them, byte-identical to the expected answer
  long bad = 0;            // tools/call answers that failed one
  long init_bad = 0;       // initialize or notifications/initialized answers that failed
  long sessions = 0;       // connections that finished the handshake
  long requests = 0;       // every answer wrk read (the handshakes included)
  long socket_errors = 0;  // wrk's connect, read, write and timeout errors
  long timeouts = 0;
  double seconds = 0;                         // wrk's run time
  double p50_us = 0, p99_us = 0, max_us = 0;  // wrk's histogram, over every answer
  double cpu_seconds = 0;                     // wrk's utime+stime
  std::string first_bad;                      // the first failed answer, abridged
  std::vector<std::string> session_ids;       // the sessions the connections opened
  std::string command;                        // as run, for the report
};

base::Result<WrkRun> RunWrk(const WrkOptions& options);

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_WRK_LOAD_H_

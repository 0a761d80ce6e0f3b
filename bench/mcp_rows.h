// mcp_bench's rows, and one run of them against several MCP servers side by side.
//
//   std::vector<ServerUnderTest> servers = {{"slurm-mcp", stdio_argv, http_argv}, ...};
//   RunOptions o{.seconds = 5, .reps = 3, .wrk = wrk, .script = lua};
//   std::vector<ServerFigures> figures = RunSideBySide(o, servers, Rows(200, 256, 1000));
//
// Each HTTP server is started once and probed: initialize, then one call per topic whose answer
// is parsed as JSON; that answer fixes what every later answer must carry (Expected). Then every
// row runs `reps` times; within a repetition the servers take turns, so that each server's reps
// of a row are measured minutes apart at most and under the same conditions as the others'.
//
// What each row measures, and its load generator:
//   stdio      a client that does no JSON work: it writes a pre-serialized request line, reads one
//              line and checks bytes in it; one call at a time. Its CPU is this process's.
//   stdio-sdk  the same calls through the C++ mcp::Client (JSON both ways), one at a time.
//   c1 c8 c64  wrk (bench/mcp_session.lua) with 1, 8 or 64 keep-alive connections, a session each.
//   queue      wrk with 8 connections calling slurm_query queue: a JOBS-row answer.
//   slowloris  N connections held half-open (40 bytes of a request, then nothing) while wrk
//              measures one client.
//   fleet      N idle keep-alive connections (each had one answer) held open while wrk runs 64.
// Server CPU per call is the server's utime+stime from /proc/PID/stat (10 ms ticks) over the
// measured window, divided by the checked answers; the load generator's is wrk's own utime+stime
// (getrusage of the child) plus the thread that keeps held connections, or this process's for the
// stdio rows. VmHWM is the server's peak resident size over the repetition (the kernel's peak is
// reset before each by /proc/PID/clear_refs; where that fails, the peak since the server started).
// Other processes' CPU over the rep (from /proc/stat) is kept too: on a shared machine it says
// which figures were disturbed. The sessions wrk opened are ended (DELETE) after each run, so
// neither server carries the sessions of earlier runs.
//
// Nothing here fails on speed. A rep that could not run carries `error`; every failed answer,
// handshake, socket error and timeout is counted in `failed`, never in `ok`.
#ifndef SLURM_RCA_BENCH_MCP_ROWS_H_
#define SLURM_RCA_BENCH_MCP_ROWS_H_

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "bench/http_wire.h"
#include "mcp/protocol/jsonrpc.h"

namespace slurm_rca::bench {

struct ServerUnderTest {
  std::string name;
  std::vector<std::string> stdio_argv;  // empty: no stdio rows
  std::vector<std::string> http_argv;   // listens on 127.0.0.1:0 and says where on stderr
  // A file holding the bearer token every HTTP request carries (slurm-mcp --auth-issuer); "": none.
  std::string bearer_file;
  // It speaks https (slurm-mcp --tls-cert): wrk and the probe speak TLS; rows that hold
  // connections (plain TCP) are not run on it.
  bool tls = false;
};

struct RowSpec {
  enum class Kind { kStdio, kStdioSdk, kHttp };
  Kind kind = Kind::kHttp;
  std::string name;
  std::string topic = "nodes";  // "nodes" or "queue"
  int connections = 1;          // kHttp: wrk's connections, each a session
  int held = 0;                 // kHttp: connections held open beside the run
  HeldConnections::Mode held_mode = HeldConnections::Mode::kIdle;
  std::string what;  // one line for the report
};

// stdio, stdio-sdk, c1, c8, c64, queue, slowloris, fleet.
std::vector<RowSpec> Rows(int queue_jobs, int slowloris, int fleet);

struct RunOptions {
  double seconds = 5;  // per repetition (wrk takes whole seconds)
  int reps = 3;
  double warmup_seconds = 2;  // wrk at 8 connections per server before the first row, unrecorded
  int queue_jobs = 200;       // rows the queue answer must carry
  std::string wrk;            // the wrk binary
  std::string script;         // bench/mcp_session.lua
};

struct Rep {
  long ok = 0;      // answers that passed every check
  long failed = 0;  // answers that failed one, failed handshakes, socket errors, timeouts
  double seconds = 0;
  double p50_us = NAN, p99_us = NAN;
  double server_cpu_seconds = NAN;
  double loadgen_cpu_seconds = NAN;
  double other_cpu_seconds = NAN;  // the machine's busy CPU less the server's and the generator's
  double hwm_mib = NAN;
  bool hwm_since_reset = false;  // false: VmHWM is the peak since the server started
  std::string note;              // held connections, the first failed answer
  std::string error;             // the rep could not run; its figures are absent

  double Rate() const { return seconds > 0 ? static_cast<double>(ok) / seconds : NAN; }
  double ServerUsPerCall() const { return ok ? 1e6 * server_cpu_seconds / ok : NAN; }
  double LoadgenUsPerCall() const { return ok ? 1e6 * loadgen_cpu_seconds / ok : NAN; }
};

struct ServerFigures {
  std::string name;
  std::string info;     // serverInfo name and version
  std::string banner;   // what the HTTP server said about itself
  std::string error;    // the HTTP server did not start or answer the probe: no HTTP rows
  std::string stopped;  // how the HTTP server ended
  std::map<std::string, mcp::Json> answers;      // topic -> the probe's structuredContent
  std::map<std::string, std::vector<Rep>> reps;  // row name -> its repetitions
};

// Runs every row against every server (see the top of this file), printing a line per rep as it
// goes.
std::vector<ServerFigures> RunSideBySide(const RunOptions& options,
                                         const std::vector<ServerUnderTest>& servers,
                                         const std::vector<RowSpec>& rows);

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_MCP_ROWS_H_

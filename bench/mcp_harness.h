// What mcp_bench and mcp_load share: an MCP server started as a child and stopped by its PID,
// its memory read from /proc, and the workload (tools/call slurm_query {"topic":"nodes"}) driven
// through the C++ mcp::Client, one call at a time or from many concurrent HTTP clients.
//
//   InstallChildCleanup();  // SIGINT/SIGTERM/SIGHUP end every started server first
//   base::Result<std::unique_ptr<ServerProcess>> s =
//       ServerProcess::Start("slurm-mcp", argv, /*stdio=*/false);
//   if (!s.ok()) die(s.status().message());
//   std::string banner;
//   base::Result<int> port = (*s)->WaitForPort(&banner);
//   Throughput t = MeasureThroughput(*port, 64, 60.0, [&] { ReadMemory((*s)->pid()); });
//   (*s)->Stop();
//
// Every answer is checked (no error, rows present); a bad answer is counted, never timed.
// Nothing here fails a run on speed.
#ifndef SLURM_RCA_BENCH_MCP_HARNESS_H_
#define SLURM_RCA_BENCH_MCP_HARNESS_H_

#include <sys/types.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/protocol/client.h"

namespace slurm_rca::bench {

using Clock = std::chrono::steady_clock;

inline constexpr char kTool[] = "slurm_query";
const mcp::Json& WorkloadArguments();  // {"topic": "nodes"}
inline constexpr auto kStartTimeout = std::chrono::seconds(20);
inline constexpr auto kCallTimeout = std::chrono::milliseconds(30000);

double Seconds(Clock::time_point since);

// Sets SIGINT, SIGTERM and SIGHUP to end every running ServerProcess and then die of the signal,
// and ignores SIGPIPE.
void InstallChildCleanup();

// A server started by this process, stdin and stdout on pipes, stderr in an unlinked temporary
// file (nothing is left behind, even on a signal); it gets SIGTERM if this process dies.
// Stop() (or the destructor) ends it by PID: EOF on stdin (stdio servers get 2 s to exit), then
// SIGTERM, then SIGKILL. One thread uses an object at a time.
class ServerProcess {
 public:
  // Never null; a failed status (Status::Error) saying which system call failed ("fork: ...").
  static base::Result<std::unique_ptr<ServerProcess>> Start(const std::string& name,
                                                            const std::vector<std::string>& argv,
                                                            bool stdio);

  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  pid_t pid() const { return pid_; }  // -1 once stopped
  int to_child() const { return to_child_; }
  int from_child() const { return from_child_; }

  // Waits for "serving MCP on http://HOST:PORT/mcp (...)" on stderr and returns the port (1 to
  // 65535), with the parenthesised words in *banner. A failed status (Status::Error) when the
  // line has no port, the server exits first, or the line does not come within kStartTimeout.
  base::Result<int> WaitForPort(std::string* banner);

  // What the server wrote on stderr, at most its last 400 bytes, on one line.
  std::string StderrTail() const;

  // Ends the server by PID; says how it ended ("PID 123 exited 0 on SIGTERM").
  std::string Stop();

 private:
  ServerProcess(std::string name, bool stdio) : name_(std::move(name)), stdio_(stdio) {}
  std::string StderrText() const;
  bool Reap(bool block);
  bool WaitReaped(std::chrono::milliseconds timeout);

  const std::string name_;
  const bool stdio_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int stderr_fd_ = -1;
  std::string stopped_;
};

// VmRSS (resident now) and VmHWM (the peak resident size) of a process, from /proc/PID/status.
struct Memory {
  double rss_mib = NAN;
  double hwm_mib = NAN;
  bool ok() const { return !std::isnan(rss_mib) && !std::isnan(hwm_mib); }
};
Memory ReadMemory(pid_t pid);

// User plus system CPU seconds a process has used (all its threads), from /proc/PID/stat; NaN
// when it cannot be read.
double CpuSeconds(pid_t pid);

// OK when the answer is a successful slurm_query with rows, else a failed status
// (Status::Error) saying why not: the call's own status as text, "tool error: ...", or "no rows
// in structuredContent".
base::Status CheckAnswer(const base::Result<mcp::ToolCallResult>& r);

struct Latency {
  std::vector<double> us;  // of the calls answered well, sorted
  long errors = 0;
  std::string first_error;
  double seconds = 0;
  double Percentile(double p) const;  // nearest rank; NaN when no call was answered well
};

// `warmup` calls, then `calls` timed one after the other.
Latency MeasureLatency(mcp::Client& client, int calls, int warmup);

struct Throughput {
  int clients = 0;
  int running = 0;         // clients that got a session and called
  long init_failures = 0;  // initialize attempts that failed (each client tries up to 5 times)
  long ok = 0;
  long errors = 0;  // calls answered badly or not at all
  double seconds = 0;
  std::string first_init_error, first_call_error;
  Latency latency;  // of every call answered well under this load (errors are counted above)
  double Rate() const { return seconds > 0 ? static_cast<double>(ok) / seconds : NAN; }
};

// `clients` threads, each with its own Client and session over HTTP to 127.0.0.1:`port`
// (initialized before the clock starts; a failed initialize is counted and retried up to 5
// times), call as fast as they can for `seconds`. The rate counts answers checked good over the
// time from the start to the last answer. `every_second`, when set, runs on the calling thread
// about once a second while the clients run (e.g. to sample the server's memory).
Throughput MeasureThroughput(int port, int clients, double seconds,
                             const std::function<void()>& every_second = nullptr);

// The machine, for the first lines of a report.
std::string FindOnPath(const std::string& name);  // "" when not found
std::string CpuModel();
std::string LoadAverage();  // "1.92 0.63 0.27": other work on the machine skews the figures
int Nproc();

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_MCP_HARNESS_H_

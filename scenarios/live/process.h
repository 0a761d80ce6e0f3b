// Processes of the live control plane: daemons started detached and tracked by PID (with the
// kernel's start time, so a reused PID is never signalled), and tools run to completion with a
// timeout.
//
// This is the privileged harness. It lives in scenarios/live/ and is never linked into slurm-mcp
// or the agents, whose only way to start a process is guard::Executor::Run(const Approved&).
//
//   ProcessId pid = SpawnDaemon({"/usr/sbin/slurmctld", "-D"}, env, "/lab/log/slurmctld.stdout");
//   ToolResult r = RunTool({"/usr/bin/sinfo", "-h"}, env, std::chrono::seconds(5));
//   StopProcess(pid, std::chrono::seconds(10));
#ifndef SLURM_RCA_SCENARIOS_LIVE_PROCESS_H_
#define SLURM_RCA_SCENARIOS_LIVE_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace slurm_rca::live {

// A process as the kernel knows it: PID plus start time in clock ticks since boot
// (/proc/PID/stat field 22). Two processes never share both.
struct ProcessId {
  pid_t pid = 0;
  std::uint64_t start_time = 0;

  std::string ToString() const;  // "1234@5678"
  static std::optional<ProcessId> Parse(const std::string& s);
};

// Reads the start time of pid; nullopt if there is no such process.
std::optional<ProcessId> IdentifyProcess(pid_t pid);

// 'R', 'S', 'T' (stopped), 'Z' (zombie), ...; nullopt if the PID is gone or now belongs to
// another process.
std::optional<char> ProcessState(const ProcessId& id);

// Alive: exists with the same start time and some thread of it is not a zombie (a killed
// process whose leader has exited but whose other threads have not is still alive: it still
// holds its sockets).
bool IsAlive(const ProcessId& id);

// Starts argv[0] (an absolute path) detached: its own session, stdin /dev/null, stdout and
// stderr appended to log_path, the environment exactly env. Returns its id, or an error.
struct SpawnResult {
  std::optional<ProcessId> id;
  std::string error;
};
SpawnResult SpawnDaemon(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                        const std::string& log_path);

// Starts argv[0] (an absolute path) as a child in its own process group with pipes on its stdin
// and stdout (stderr appended to log_path, or inherited when empty): for stdio servers such as
// slurm-mcp. The caller owns both descriptors (close to_child to end the child's input) and
// stops the child with StopProcess.
struct PipedChild {
  std::optional<ProcessId> id;
  int to_child = -1;    // the child's stdin
  int from_child = -1;  // the child's stdout
  std::string error;
};
PipedChild SpawnPiped(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      const std::string& log_path = "");

// SIGCONT then SIGTERM; after grace, SIGKILL. Reaps it if it is our child. Returns true when
// the process is gone (or was already gone). Never signals a PID whose start time differs.
bool StopProcess(const ProcessId& id, std::chrono::milliseconds grace);

// StopProcess for many at once: SIGTERM to all, one grace for all, then SIGKILL to the
// survivors. Returns the ones still alive after that (empty when all are gone). A thousand job
// processes stop in one grace period, not a thousand.
std::vector<ProcessId> StopProcesses(const std::vector<ProcessId>& ids,
                                     std::chrono::milliseconds grace);

// Sends sig to the process (or its group when group is true) if the id still matches.
bool SignalProcess(const ProcessId& id, int sig, bool group = false);

// Reaps any exited children of this process without blocking (daemons we started and that
// died while we were still running).
void ReapChildren();

struct ToolResult {
  int exit_code = -1;  // -1 when it did not exit normally
  bool timed_out = false;
  std::string out;
  std::string err;
  std::string error;  // could not start
  double seconds = 0;
  double cpu_seconds = 0;  // the tool's own user + system CPU (not its children's)

  bool ok() const { return exit_code == 0 && !timed_out && error.empty(); }
  // "exit 1: <first stderr line>" for messages.
  std::string Summary() const;
};

// Runs argv (argv[0] absolute) to completion with the environment env and stdin /dev/null (or
// the given input); kills its process group at the timeout. Output is capped at 16 MiB per
// stream.
// cwd: the tool's working directory (empty: ours). Batch jobs write their output there.
ToolResult RunTool(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   std::chrono::milliseconds timeout, const std::string& input = "",
                   const std::string& cwd = "");

// The first of dirs holding an executable `name`, or "".
std::string FindProgram(const std::string& name, const std::vector<std::string>& dirs);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_PROCESS_H_

// The executor: the only code in the read path that starts a process.
//
// Run() takes an Approved argv (guard/check.h), which only Guard::Check() can make, so nothing
// the guard refused can reach a process. Execution hygiene, all enforced here:
//   - the binary is an absolute path resolved once, at construction, from configured trusted
//     directories (never PATH); a binary that is missing, not a regular executable file, or
//     group/other-writable (file or directory) is refused with a clear error;
//   - a fresh minimal environment built in code (PATH=/usr/bin:/bin, LANG=C, LC_ALL=C, TZ=UTC,
//     and SLURM_CONF only when the operator configured it): nothing is inherited;
//   - stdin is /dev/null; the child is the leader of its own session and process group;
//   - a wall-clock timeout, then SIGKILL of the whole group; a timeout is a first-class result
//     (on Slurm a hang is evidence: a frozen accounting database makes sacct block);
//   - stdout and stderr are capped while reading: bytes beyond the cap are counted and dropped,
//     so memory stays bounded whatever the child prints;
//   - every child is reaped: no zombies.
//
//   Executor executor(ExecutorOptions{});
//   RunResult r = executor.Run(verdict.approved());
//   if (r.outcome == Outcome::kTimedOut) { /* no evidence, and a hang is itself a symptom */ }
//
// Thread safety: Run() is const and may be called from several threads at once; each call uses
// its own event loop.
#ifndef SLURM_RCA_GUARD_RUN_H_
#define SLURM_RCA_GUARD_RUN_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "guard/check.h"

namespace slurm_rca::guard {

struct ExecutorOptions {
  // Directories searched, in order, for each allowlisted program. Must be absolute.
  std::vector<std::string> trusted_dirs = {"/usr/bin", "/usr/local/bin"};
  // Wall-clock limit per run; then the process group is killed with SIGKILL.
  std::chrono::milliseconds timeout{20000};
  // Bytes kept per stream (stdout, stderr); the rest is counted and dropped.
  std::size_t max_output_bytes = 1 << 20;
  // Passed to the child as SLURM_CONF when set; nothing else reaches its environment.
  std::optional<std::string> slurm_conf;
};

enum class Outcome {
  kExited,        // the program ran and exited (exit_code holds its status)
  kSignaled,      // the program was killed by a signal it did not get from us
  kTimedOut,      // we killed it at the timeout: no evidence, and a hang is a symptom
  kNotInstalled,  // no trusted directory holds the program
  kUntrusted,     // the program was found but is writable by others, or not a regular file
  kSpawnFailed,   // the kernel refused to start it (error says why)
};

const char* OutcomeName(Outcome o);  // "exited", "timed_out", ...

struct RunResult {
  Outcome outcome = Outcome::kSpawnFailed;
  int exit_code = -1;    // valid when outcome == kExited
  int term_signal = 0;   // valid when outcome == kSignaled
  std::string binary;    // the absolute path executed (empty if none)
  std::vector<std::string> argv;  // exactly what was executed (Approved::exec_argv())
  std::string stdout_data;        // at most max_output_bytes
  std::string stderr_data;        // at most max_output_bytes
  std::uint64_t stdout_bytes = 0;  // bytes the child wrote, kept or not
  std::uint64_t stderr_bytes = 0;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  std::chrono::milliseconds duration{0};
  std::string error;  // for kNotInstalled, kUntrusted, kSpawnFailed, kTimedOut: what happened

  bool ok() const { return outcome == Outcome::kExited && exit_code == 0; }
  bool timed_out() const { return outcome == Outcome::kTimedOut; }
};

// Where each program resolved at construction.
struct Resolution {
  std::string program;
  std::string path;   // absolute, symlinks resolved; empty if not usable
  Outcome problem = Outcome::kExited;  // kExited means usable; else kNotInstalled/kUntrusted
  std::string error;  // why not usable
};

class Executor {
 public:
  // Resolves every program of the allowlist in options.trusted_dirs. Never fails: programs that
  // cannot be used are remembered and reported by Run() and resolutions().
  explicit Executor(ExecutorOptions options = {});

  RunResult Run(const Approved& approved) const { return Run(approved, options_.timeout); }
  // The same run with its own wall-clock limit instead of options().timeout: a caller whose
  // limit changes after construction (LiveBackend::SetReadTimeout) keeps one executor.
  RunResult Run(const Approved& approved, std::chrono::milliseconds timeout) const;

  const ExecutorOptions& options() const { return options_; }
  const std::vector<Resolution>& resolutions() const { return resolutions_; }

 private:
  ExecutorOptions options_;
  std::vector<Resolution> resolutions_;
  std::vector<std::string> env_;  // built once: "KEY=value"
};

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_RUN_H_

// LiveBackend: reads the running cluster through the guard, and protects slurmctld from the
// agents that read it.
//
// Read(argv) does, in order:
//   1. Guard::Check: a refused argv is kRefused with "DENIED <rule>: <reason>"; nothing runs.
//   2. The TTL cache, process-wide and keyed by argv: a hit within cache_ttl_seconds is served
//      with cached = true and its age, starts no process and spends no budget. Only kOk reads
//      are cached: a failure may be transient and a timeout is a symptom that must be seen
//      again, so neither is remembered.
//   3. Single-flight: a read identical to one already running waits for it and gets its
//      evidence (marked cached, since it started no process). This holds with the cache off too:
//      N agents asking for squeue at the same moment cost slurmctld one RPC, not N.
//   4. The rate budget: at most max_per_minute processes started over a sliding 60 s window,
//      shared fairly between principals (ReadAs): while n principals have asked within the
//      window, one that started max_per_minute / n of them is refused until one of its own
//      expires, so one caller's fleet cannot take the whole budget from another caller. Reads
//      of no principal (stdio, a shared token) count in the total only.
//   5. The concurrency bound: at most max_concurrent processes at once; a read waits for a slot
//      up to slot_wait (default: the read timeout), else it is refused as busy and its
//      budget start is given back.
//   6. Executor::Run, the only way a process starts (guard/run.h).
// A read that fails, times out or is refused is "no evidence" with a cause, never an empty result.
// SetReadTimeout changes the read timeout (the executor timeout at first) and adds a sentence to
// the cause of every Slurm read that times out: slurm-mcp calls it once its start-up read has
// told it the controller's MessageTimeout (mcp/backend/live_flags.h, ChooseReadTimeout).
//
//   LiveBackend live(LiveOptions{.clusters = {"rca"}});
//   Evidence e = live.Read({"squeue", "--noheader"});
//   if (!e.ok()) report(e.cause);
//
// ReadLog(daemon, lines) reads the tail of the configured log file directly: no process, no
// cache, no budget. Thread-safe: every method may be called from several threads at once.
#ifndef SLURM_RCA_MCP_BACKEND_LIVE_BACKEND_H_
#define SLURM_RCA_MCP_BACKEND_LIVE_BACKEND_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "guard/check.h"
#include "guard/run.h"
#include "mcp/evidence/evidence.h"
#include "mcp/protocol/metrics.h"
#include "mcp/telemetry/fabric.h"

namespace slurm_rca::mcp {

// Bytes of a read's stdout the live back-end keeps (the executor's cap): 8 MiB holds squeue's
// answer for about 140,000 jobs and sacct's for about 80,000 rows. A read that reaches it is
// answered as a lower bound (mcp/topics/topics.h, ParseOptions::output_cut), never as a total.
// What it costs: each read held at once (at most max_concurrent running, plus the TTL cache's
// entries: at most max_per_minute * cache_ttl_seconds / 60 reads) holds up to this much.
inline constexpr std::size_t kLiveMaxOutputBytes = std::size_t{8} << 20;

struct LiveOptions {
  guard::ExecutorOptions executor = [] {
    guard::ExecutorOptions e;
    e.max_output_bytes = kLiveMaxOutputBytes;
    return e;
  }();
  // Cluster names -M/--clusters may name (guard::GuardOptions::clusters).
  std::vector<std::string> clusters;
  // How long a successful read is reused, from when it finished. 0 disables the cache.
  double cache_ttl_seconds = 10;
  // Processes running at once. Values below 1 count as 1.
  int max_concurrent = 2;
  // Processes started over any 60 s. 0 disables the budget.
  int max_per_minute = 60;
  // The budget's window: 60 s, shorter only in tests.
  std::chrono::milliseconds budget_window{60'000};
  // How long a read waits for a free slot before it is refused as busy. Unset: the read timeout
  // (the executor timeout, or SetReadTimeout's).
  std::optional<std::chrono::milliseconds> slot_wait;
  // Daemon name (slurmctld, slurmdbd, slurmd) -> log file path, for ReadLog.
  std::map<std::string, std::string> log_files;
  // ReadLog reads at most this many bytes from the end of a log file.
  std::size_t max_log_bytes = 1 << 20;
  // Roots of the fabric topic's reads (sysfs, /proc, cgroups; allowlisted by path pattern).
  FabricOptions fabric;
  // nvidia-smi reads (gpu, gpu_health, gpu_idle's samples) are killed after this, or after the
  // read timeout when that is shorter: a query that has not answered in 10 s is a hang
  // (shared/reference/telemetry-seeds.md §1.3, §2).
  std::chrono::milliseconds nvidia_smi_timeout{10000};
  // Counts cache hits and misses, single-flight merges, budget refusals and the processes started
  // (mcp/protocol/metrics.h). Not owned; must outlive the back-end. Null: nothing is counted.
  Metrics* metrics = nullptr;
};

class LiveBackend : public Backend {
 public:
  // Resolves the programs once (guard::Executor); never fails: unusable programs are reported by
  // Read() as kUnavailable.
  explicit LiveBackend(LiveOptions options);
  ~LiveBackend() override;

  std::string Label() const override { return "live"; }
  Evidence Read(const std::vector<std::string>& argv) override { return ReadAs(argv, {}); }
  Evidence ReadAs(const std::vector<std::string>& argv, const std::string& principal) override;
  // lines <= 0: every whole line within max_log_bytes.
  Evidence ReadLog(const std::string& daemon, int lines) override;
  // Reads the fabric files under options().fabric directly: no process, no cache, no budget.
  Evidence ReadFabric() override;

  // From now on Slurm reads are killed after `timeout` (options().executor.timeout until then)
  // and each that times out has `timed_out_note` (one sentence; "": none) added to its cause.
  // nvidia-smi keeps its own bound (nvidia_smi_timeout) and no note: it is not a Slurm client.
  // Reads already running keep the timeout they started with.
  void SetReadTimeout(std::chrono::milliseconds timeout, std::string timed_out_note);

  // Processes started so far (cache hits, followers and refusals start none).
  std::uint64_t reads_started() const;
  // Every program the executor resolved, with its last read (evidence.h, ProgramReads).
  std::vector<ProgramReads> LastReads() const override;
  const LiveOptions& options() const { return options_; }

 private:
  struct Flight;
  struct CacheEntry {
    Evidence evidence;
    std::chrono::steady_clock::time_point stored;
  };

  // Budget, slot, run, label. Called by the one reader that leads a flight, without mu_.
  Evidence Lead(const guard::Approved& approved, const std::string& principal);
  // Takes a budget start for principal and returns its time; unavailable (the message says why
  // and when to retry) when the per-minute budget, or the principal's fair share of it, is spent.
  base::Result<std::chrono::steady_clock::time_point> Admit(const std::string& principal);
  void GiveBackStart(std::chrono::steady_clock::time_point start);
  bool AcquireSlot(std::chrono::milliseconds wait);
  void ReleaseSlot();
  void PurgeExpiredLocked(std::chrono::steady_clock::time_point now);
  // Records a read that ran, or found its program unable to run, as the program's last read.
  void Remember(const std::string& program, const Evidence& e);

  const LiveOptions options_;
  const guard::Guard guard_;
  const guard::Executor executor_;
  const int max_concurrent_;

  mutable std::mutex mu_;  // the two below, cache_, flights_, starts_, started_, last_reads_
  std::chrono::milliseconds read_timeout_;  // options_.executor.timeout, or SetReadTimeout's
  std::string timed_out_note_;
  std::map<std::vector<std::string>, CacheEntry> cache_;
  std::map<std::vector<std::string>, std::shared_ptr<Flight>> flights_;
  struct Start {
    std::chrono::steady_clock::time_point when;
    std::string principal;
  };
  std::deque<Start> starts_;  // within the budget window
  // Principals that asked for a start within the window (admitted or not), with when they last
  // asked: the n the budget is shared between.
  std::map<std::string, std::chrono::steady_clock::time_point> asking_;
  std::uint64_t started_ = 0;
  std::map<std::string, ProgramReads> last_reads_;  // by program, every resolved one

  std::mutex slot_mu_;
  std::condition_variable slot_cv_;
  int running_ = 0;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_LIVE_BACKEND_H_

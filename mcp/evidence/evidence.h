// Evidence: what one read of the cluster produced, and the back-ends that produce it.
//
// Every answer says where it came from (live or replay), when the evidence was taken, and whether
// it is evidence at all: a read that failed, timed out or was refused is "no evidence" with its
// cause, never an empty result. Back-ends: LiveBackend (mcp/backend/live_backend.h) runs argv
// approved by the guard; ReplayBackend (mcp/backend/replay_backend.h) serves an evidence bundle.
#ifndef SLURM_RCA_MCP_EVIDENCE_EVIDENCE_H_
#define SLURM_RCA_MCP_EVIDENCE_EVIDENCE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace slurm_rca::mcp {

struct Evidence {
  enum class Outcome {
    kOk,          // the command exited 0: stdout is evidence
    kFailed,      // it exited non-zero or was killed: no evidence (stderr says why)
    kTimedOut,    // it did not finish in time: no evidence, and a hang is itself a symptom
    kRefused,     // the guard, the rate budget or the concurrency bound refused it
    kUnavailable, // not installed, not in the bundle, or the back-end cannot serve it
  };
  Outcome outcome = Outcome::kUnavailable;
  std::string source;        // "live" or "replay"
  std::string evidence_time; // ISO 8601 UTC of when the read was taken (replay: recorded time)
  std::vector<std::string> argv;
  int exit_code = -1;
  std::string out;           // stdout, possibly capped
  std::string err;           // stderr, possibly capped
  bool out_truncated = false;  // out holds only the first bytes the read wrote (the cap)
  std::uint64_t out_bytes = 0; // bytes the read wrote to stdout, kept or not; 0: unknown
  // Names the read, for paging: the live back-end numbers the processes it starts (a cached copy
  // or a follower of the read keeps its id), a replay the bundle's snapshot (1 for the first),
  // which holds one read of each argv. Two answers of one argv and one id read the same output.
  // 0: not numbered.
  std::uint64_t read_id = 0;
  double seconds = 0;        // how long the read took
  bool cached = false;       // served from the TTL cache
  double cache_age_seconds = 0;
  std::string cause;         // for every outcome but kOk: one sentence a model can act on
  // A replayed answer that the bundle did not record but derived from the whole read of the same
  // snapshot (mcp/backend/replay_derive.h): that read's argv, and what the derived rows are and
  // cannot show. Both empty for a read that was recorded or run.
  std::vector<std::string> derived_from;
  std::string derivation;

  bool ok() const { return outcome == Outcome::kOk; }
};

const char* OutcomeName(Evidence::Outcome o);  // "ok", "failed", "timed_out", "refused", ...

// A back-end's record of its last read of one program (the last to finish), for a readiness
// probe that must read nothing itself. Only reads that ran, or found the program unable to run, are
// recorded: a cache hit, a follower of a read in flight and a read the server refused (guard, rate
// budget, busy) started no process and say nothing new about the program.
struct ProgramReads {
  std::string program;
  std::string last_read;  // ISO 8601 UTC when the last read started; "" when never read
  std::string outcome;    // OutcomeName of the last read; "" when never read
  std::string cause;      // why the last read gave no evidence; "" when it did
  double seconds = 0;     // how long the last read took
  std::string last_ok;    // ISO 8601 UTC when the last successful read started; "" when none
  std::string unusable;   // why the program cannot run at all (not installed, untrusted); ""
};

// Where reads come from. Thread-safe: several tool calls read at once.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Label() const = 0;  // "live" or "replay"
  // Runs (or replays) one Slurm or nvidia-smi argv.
  virtual Evidence Read(const std::vector<std::string>& argv) = 0;
  // Read, on behalf of `principal` (an OAuth caller; empty: the server itself). The live
  // back-end shares its rate budget fairly between the principals reading; others just Read.
  virtual Evidence ReadAs(const std::vector<std::string>& argv, const std::string& principal) {
    (void)principal;
    return Read(argv);
  }
  // The last `lines` lines of a configured daemon log (slurmctld, slurmdbd, slurmd), before
  // filtering. argv of the evidence is {"log", daemon}.
  virtual Evidence ReadLog(const std::string& daemon, int lines) = 0;
  // The fabric topic's read of this host's sysfs, /proc and cgroups (mcp/telemetry/fabric.h):
  // stdout is the report as JSON. argv of the evidence is {"files", "fabric"}. A back-end that
  // cannot read node files (replay of a bundle recorded before the topic existed) answers
  // kUnavailable.
  virtual Evidence ReadFabric() {
    Evidence e;
    e.outcome = Evidence::Outcome::kUnavailable;
    e.source = Label();
    e.argv = {"files", "fabric"};
    e.cause = "`files fabric` is not recorded in this bundle (node files are read live only); "
              "no evidence, not an empty result";
    return e;
  }
  // The last read of each program this back-end may run, never-read ones included; empty for a
  // back-end that reads no cluster (replay).
  virtual std::vector<ProgramReads> LastReads() const { return {}; }
  // Names the evidence this back-end serves now. While it returns the same value, every read
  // (Read, ReadLog, ReadFabric) of the same arguments returns the same evidence, so an answer
  // built from it may be reused (mcp/topics/answer_cache.h). nullopt: two reads may differ; the
  // default, and always the live back-end's answer, whose reads are evidence of now.
  virtual std::optional<std::int64_t> EvidenceVersion() const { return std::nullopt; }
};

// The readiness answer of `slurm-mcp serve --http` (GET /ready), as JSON text: the back-end, and
// per program whether its last read succeeded ("ok", "failing", "never_read"), with a summary
// "slurm": "failing" when any last read failed, "ok" when some succeeded and none failed,
// "unknown" when nothing was read. Reads nothing.
std::string ReadinessJson(const Backend& backend);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_EVIDENCE_EVIDENCE_H_

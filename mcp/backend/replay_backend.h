// ReplayBackend: serves an evidence bundle recorded from a live cluster, so that agents can be
// run, tested and graded without Slurm.
//
// A bundle is a directory with manifest.json and the recorded stdout/stderr files next to it
// (format "slurm-rca-evidence/1", documented in fixtures/README.md), or the same files in one
// pack, DIR.evidence.gz (bundle_pack.h), as every committed bundle is. It holds one or more
// snapshots, each taken at an offset (seconds) into a scenario. Read(argv) answers from the
// selected snapshot exactly as recorded: a recorded timeout is a timeout, a recorded failure a
// failure, with their causes. An argv the snapshot does not hold is kUnavailable, never an empty
// result, except a filtered sinfo or squeue read derivable from the snapshot's whole read of the
// same topic (replay_derive.h: -n and -p of sinfo -N, -u of squeue), answered from it with
// Evidence::derived_from set, or kUnavailable saying why it could not be. No process is ever
// started.
//
//   auto opened = ReplayBackend::Open("fixtures/db-freeze");  // base::Result<unique_ptr<...>>
//   if (!opened.ok()) die(opened.status().message());   // names the file and the field at fault
//   std::unique_ptr<ReplayBackend> replay = std::move(opened).value();
//   replay->SetOffset(120);         // the latest snapshot taken at or before 120 s
//   Evidence e = replay->Read({"squeue", "--noheader"});
//
// Thread-safe: SetOffset may race with Read; each Read sees one snapshot.
#ifndef SLURM_RCA_MCP_BACKEND_REPLAY_BACKEND_H_
#define SLURM_RCA_MCP_BACKEND_REPLAY_BACKEND_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/evidence/evidence.h"

namespace slurm_rca::mcp {

inline constexpr char kEvidenceBundleFormat[] = "slurm-rca-evidence/1";
// Revision 2 adds the optional top-level `trials` object (fixtures/README.md): the timing of
// every recorded trial of a scenario, of which the bundle keeps the reads of one.
inline constexpr char kEvidenceBundleFormat2[] = "slurm-rca-evidence/2";

class ReplayBackend : public Backend {
 public:
  struct Snapshot {
    double offset_seconds = 0;
    std::string taken_at;
    // Recorded evidence by argv: outcome, exit_code, out, err, seconds, cause, evidence_time
    // (= taken_at) and source ("replay") as Read returns them. Derived reads are not kept.
    std::map<std::vector<std::string>, Evidence> reads;
  };

  // Loads and validates the whole bundle; never null. `dir` is a bundle directory, a pack, or
  // the name of a pack without its suffix (LocateBundle: "fixtures/demo" opens
  // fixtures/demo.evidence.gz). On failure the status's message names the file and the field
  // (PACK:manifest.json for a pack's): an io error when manifest.json or a stream file it names
  // cannot be read, an invalid argument when anything is missing, mistyped or inconsistent, or
  // when a pack is damaged (ReadPack).
  static base::Result<std::unique_ptr<ReplayBackend>> Open(const std::string& dir);

  std::string Label() const override { return "replay"; }
  Evidence Read(const std::vector<std::string>& argv) override;
  // The recorded read {"log", daemon}, cut to its last `lines` lines (all when lines <= 0).
  Evidence ReadLog(const std::string& daemon, int lines) override;

  // Selects the latest snapshot taken at or before offset_seconds. Before the first snapshot,
  // every read is kUnavailable. Default: the last snapshot.
  void SetOffset(double offset_seconds);
  // A recorded snapshot never changes, so the evidence changes only with SetOffset: the value
  // changes with every SetOffset, and is nullopt while one runs.
  std::optional<std::int64_t> EvidenceVersion() const override;

  const std::string& slurm_version() const { return slurm_version_; }
  const std::string& scenario() const { return scenario_; }
  // "clean" or "busy" when the manifest says which background it was recorded on, else "".
  const std::string& profile() const { return profile_; }
  const std::string& recorded_at() const { return recorded_at_; }
  // The `trials` object as JSON text (revision 2), empty when absent.
  const std::string& trials_json() const { return trials_json_; }
  const std::vector<Snapshot>& snapshots() const { return snapshots_; }
  // Index of the selected snapshot, -1 when the offset is before the first.
  int selected() const { return selected_.load(); }

 private:
  ReplayBackend() = default;

  std::string dir_;
  std::string slurm_version_;
  std::string scenario_;
  std::string profile_;
  std::string recorded_at_;
  std::string trials_json_;
  std::vector<Snapshot> snapshots_;  // strictly increasing offsets
  std::atomic<int> selected_{-1};
  std::atomic<double> offset_{0};
  std::mutex set_offset_mu_;  // one SetOffset at a time
  // SetOffset calls begun plus those ended: odd while one runs (EvidenceVersion).
  std::atomic<std::int64_t> offset_sets_{0};
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_BACKEND_REPLAY_BACKEND_H_

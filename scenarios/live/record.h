// Records an evidence bundle (format slurm-rca-evidence/1, fixtures/README.md) from a live lab:
// every topic slurm-mcp serves, read through the same live back-end the server uses (guard,
// executor), at scheduled offsets around an injected fault. The bundle is written as one file,
// OUT_DIR.evidence.gz (mcp/backend/bundle_pack.h), which replays as OUT_DIR.
//
//   RecordOptions o{.out_dir = "fixtures/demo", .fault = "db-freeze"};
//   Status s = RecordDemoBundle(o, std::cout);
//
// The demo bundle: a healthy snapshot at offset 0, the fault injected, a snapshot at offset 10
// while it holds (with db-freeze, accounting times out while nodes answer), and one after the
// heal. The lab's directory is replaced by /LAB in every stream.
#ifndef SLURM_RCA_SCENARIOS_LIVE_RECORD_H_
#define SLURM_RCA_SCENARIOS_LIVE_RECORD_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "scenarios/live/lab.h"

namespace slurm_rca::live {

struct RecordOptions {
  std::string out_dir;                // the bundle's name (+ .evidence.gz); empty: FIXTURES/demo
  std::string fixtures = "fixtures";  // base::DataPaths::fixtures; main sets it
  std::string fault = "db-freeze";    // a fault of FaultCatalog()
  int port_base = 20800;              // below the ephemeral range (32768-60999)
  double read_timeout_seconds = 5;    // the live back-end's executor timeout
  // The lab's background: clean, busy or large (LabOptions::profile). A large lab has `nodes`
  // slurmd (256..1024, a multiple of 64) and its own queue, so the two known jobs of the small
  // labs are not submitted; its reads are given `large_read_timeout_seconds`.
  std::string profile = "clean";
  std::uint64_t seed = 1;  // the busy profile's seed
  int nodes = 4;           // the lab's nodes (LabOptions::nodes): 4, or 256..1024 for large
  int large_history = -1;  // the large profile's finished jobs (LabOptions::large_history)
  double large_read_timeout_seconds = 120;
  std::string node = "node1";  // the fault's node (FaultTarget::node): drain, slurmd-kill, ...
  std::string slurm_prefix;    // a built Slurm release (LabOptions::slurm_prefix); "": Debian's
};

base::Status RecordDemoBundle(const RecordOptions& options, std::ostream& progress);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_RECORD_H_

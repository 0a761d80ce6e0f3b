// The bundle mcp_bench serves: an evidence bundle's last snapshot with its unfiltered squeue read
// replaced by N generated jobs, so that one server answers both the small call (slurm_query
// nodes, as recorded) and the large one (slurm_query queue: N rows).
//
//   base::Status s = WriteQueueBundle("fixtures/demo", "/tmp/mcp_bench.XXXXXX", 200);
//
// The jobs are the same on every run (no clock, no randomness): job ids from 5001, a mix of
// running and pending jobs on the cpu and gpu partitions. Every stream file the snapshot names is
// copied, so the bundle stands alone. Fails (Status::IoError, InvalidArgument) when `from` has
// no readable manifest, no snapshot, or no unfiltered squeue read, or `dir` cannot be written.
#ifndef SLURM_RCA_BENCH_QUEUE_BUNDLE_H_
#define SLURM_RCA_BENCH_QUEUE_BUNDLE_H_

#include <string>

#include "base/status.h"

namespace slurm_rca::bench {

base::Status WriteQueueBundle(const std::string& from, const std::string& dir, int jobs);

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_QUEUE_BUNDLE_H_

// fabric: which Slurm job is behind an InfiniBand / RoCE port's counters? Read-only, from sysfs,
// /proc and the Slurm cgroup tree under configured roots; no process is started.
//
//   FabricOptions o{.sys_root = "/sys", .proc_root = "/proc", .cgroup_root = "/sys/fs/cgroup"};
//   FabricReport r = ReadFabric(o);
//   // r.report: {ports[{device, port, state, up, rate, link_layer, counters{name:{value, width,
//   //            saturated}}, absent_counters, job_users, attributed_job, suppression}],
//   //            jobs[...], node{layout, scopes, scope_found, gaps, ...}}
//
// Rules (shared/reference/telemetry-seeds.md §3, "fd" ownership):
//   - A counter file that is missing, empty or not an unsigned decimal is absent, never 0. A PMA
//     counter of known width equal to 2^width - 1 is saturated (flagged with its width).
//   - Jobs come from the cgroup tree in one of three layouts: cgroup-v1
//     (<ctrl>/slurm/uid_<u>/job_<id>/), cgroup-v2 (<scope>/job_<id>/) and cgroup-v2-sluid
//     (<scope>/<SLUID>/, Slurm 26.05's default). A SLUID is resolved to a job id only from the
//     slurmstepd titles of its steps ("slurmstepd: [<job>.<step>]", all readable titles must
//     agree); otherwise it stays unresolved and still counts as a user.
//   - A job uses an HCA when one of its PIDs holds a /proc/<pid>/fd link to uverbs<N>, and N's
//     HCA is read from class/infiniband_verbs/uverbs<N>/ibdev (never assumed to be mlx5_N); it is
//     then a user of every port of that HCA. A process outside every job holding such a link is a
//     non-job user.
//   - A port is attributed to a job iff there is no evidence gap, exactly one job user and no
//     non-job user; otherwise the suppression reason is evidence_gap, nonjob_user, shared or
//     unresolved. Any gap (unreadable cgroup or /proc/<pid>/fd, a PID in a cgroup but not in
//     /proc, an unreadable ibdev) suppresses every attribution of the read.
//   - Every path read is checked against an allowlist of path patterns (CheckFabricPath), as argv
//     are checked by the guard; anything else is refused and never opened.
// Cannot see: kernel RDMA users (NFS/RDMA, Lustre o2ib, IPoIB), processes in other PID
// namespaces, a neighbour that comes and goes between reads, which link or cable is at fault.
// Thread-safe: pure functions over the file system.
#ifndef SLURM_RCA_MCP_TELEMETRY_FABRIC_H_
#define SLURM_RCA_MCP_TELEMETRY_FABRIC_H_

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace slurm_rca::mcp {

struct FabricOptions {
  std::string sys_root = "/sys";  // holds class/infiniband and class/infiniband_verbs
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

enum class FabricRead { kList, kFile, kLink };

// OK when the read is on the allowlist, else an invalid argument saying why it is refused
// ("refused: file of PATH is not on the fabric allowlist (...)").
base::Status CheckFabricPath(const FabricOptions& options, FabricRead kind,
                             const std::string& path);

struct FabricReport {
  bool evidence = false;  // false: no InfiniBand class directory could be listed (failure says)
  std::string failure;
  nlohmann::json report;  // valid against FabricReportSchema()
};

FabricReport ReadFabric(const FabricOptions& options);

nlohmann::json FabricReportSchema();

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TELEMETRY_FABRIC_H_

// Fault primitives of the lab: each injects one real fault into the live control plane and heals
// it, restoring the exact prior state. Each is idempotent: injecting an injected fault, or
// healing a healthy one, does nothing and says so. What a fault needs to heal (a node's prior
// drain reason, flood workers' PIDs, an nftables table) is kept under DIR/faults/.
//
//   FaultTarget t{.node = "node3"};
//   FaultOutcome o = InjectFault(lab, "slurmd-kill", t);   // SIGKILL the slurmd of node3
//   HealFault(lab, "slurmd-kill", t);                       // start it again
//
// Faults: db-freeze, db-lock, dbd-stop, munge-stop, ctld-pause, slurmd-kill, slurmd-pause,
// statesave-readonly, rpc-flood, net-drop, drain, gpu-fake, partition-down, reservation,
// assoc-limit, qos-limit, ctld-stop, dbd-kill, ctld-kill; on the lab of hosts (lab.h) net-cut,
// net-loss, net-throttle, name-gone. FaultCatalog() describes each.
#ifndef SLURM_RCA_SCENARIOS_LIVE_FAULTS_H_
#define SLURM_RCA_SCENARIOS_LIVE_FAULTS_H_

#include <string>
#include <vector>

#include "scenarios/live/lab.h"

namespace slurm_rca::live {

struct FaultTarget {
  // slurmd-kill, slurmd-pause, drain, gpu-fake: one node; reservation: a hostlist (node[3-4])
  std::string node = "node1";
  std::string daemon = "slurmdbd";   // net-drop: slurmdbd, slurmctld, mariadbd or slurmd-NODE
  std::string reason = "rca-bench: drained by fault injection";  // drain
  std::string mode = "ecc";          // gpu-fake: ecc or driver
  int workers = 16;                  // rpc-flood
  int seconds = 600;                 // rpc-flood: each worker stops by itself after this
  std::string method = "bind-ro";    // statesave-readonly: bind-ro or immutable
  std::string partition = "gpu";     // partition-down
  std::string state = "DOWN";        // partition-down: DOWN, DRAIN or INACTIVE
  std::string account = "research";  // assoc-limit
  std::string qos = "normal";        // qos-limit
  std::string limit;                 // assoc-limit (default GrpJobs=0), qos-limit (MaxJobsPerUser=1)
  // The lab of hosts' network faults: the host whose namespace gets the rule (net-cut, net-loss,
  // net-throttle, name-gone), the other end of a cut, its direction (both: every packet; in: the
  // peer cannot open a connection to host; out: host cannot open one to the peer; established
  // connections and their replies pass one-way cuts), the share of packets dropped (net-loss),
  // the rate each way (net-throttle: tc's tbf, e.g. 64kbit) and the name that stops resolving
  // on host (name-gone).
  std::string host = "c1";
  std::string peer = "ctl";
  std::string direction = "both";
  int percent = 30;
  std::string rate = "64kbit";
  std::string name = "ctl";
};

struct FaultInfo {
  std::string name;
  std::string what;     // what inject does
  std::string effect;   // what shows, as measured on Slurm 22.05 (reference/live-slurm.md)
  std::string heal;     // what heal does
  std::string options;  // which FaultTarget fields it reads
};

const std::vector<FaultInfo>& FaultCatalog();

struct FaultOutcome {
  base::Status status;
  bool changed = false;  // false: it was already injected (or already healthy)
  std::string message;   // what was done
};

FaultOutcome InjectFault(Lab& lab, const std::string& name, const FaultTarget& target);
FaultOutcome HealFault(Lab& lab, const std::string& name, const FaultTarget& target);
// The faults injected now (one line each: name and target).
std::vector<std::string> ActiveFaults(const Lab& lab);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_FAULTS_H_

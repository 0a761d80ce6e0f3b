// The busy background profile of the lab: what a real cluster looks like on an ordinary day.
//
// A clean lab is idle: every node free, an empty queue, no history. A real cluster never is: a
// node is out for maintenance, other people's jobs wait for ordinary reasons, accounting holds
// failed and timed-out jobs, the controller's log moves. The busy profile puts that around the
// scenarios, so that an agent has to tell the fault from the background.
//
//   BusyTrace trace = GenerateBusyTrace(/*seed=*/1, TraceOptions{});
//   std::cout << trace.ToText();                          // the whole trace, one line per item
//   Status s = ApplyBusyProfile(lab, trace, std::cout);   // lab.h; Lab::Up does this for "busy"
//   ...
//   lab.Down(std::cout);   // cancels every job, releases the users this lab holds (refcounted)
//
// GenerateBusyTrace() is pure and deterministic: the same seed gives the same trace on every
// toolchain (a hand-rolled splitmix64, never std::uniform_*_distribution). Every seed has the same
// structure; the seed picks the names, owners, counts, durations and the release schedule:
//
//   - accounts research and ops (the lab's own) and 2-3 of bio, physics, chem, astro, climate;
//   - 4-6 Unix users rcau-<name> (useradd --system, no home, nologin), each with a default account
//     and an association in it (some in a second account);
//   - history, submitted first and waited for before the lab is handed over: COMPLETED CPU and GPU
//     jobs and a job array, FAILED jobs (exit 1-3), jobs CANCELLED by their own user (runuser
//     scancel) while running;
//   - node4 drained for maintenance once the history has run, its reason "maint: <work>, ticket
//     OPS-<n>". Never node1, where slurm-mcp is taken to run. No job that is there at hand-over
//     runs on it (S05 kills node4's slurmd and relies on it having no job);
//   - running for the horizon: a GPU job pinned to node1 (gpu:1, 1 CPU) and, on node3, a CPU job
//     that TIMEOUTs (--time=1 with a longer sleep: about 61 s after hand-over) and its restart
//     (--dependency=afternotok), which then runs in its place;
//   - pending for ordinary reasons: Resources (a 2-node job asking gpu:2 on each node, which cannot
//     fit while node1's GPU job holds one of its GPUs), Priority (a second such job behind it),
//     Dependency (afterok on node1's GPU job, and the restart until the timeout), JobHeldUser (-H),
//     BeginTime (jobs for hours after the horizon);
//   - a stream: short jobs (some failing, some 3-task arrays throttled to one task at a time)
//     submitted up front with --begin=now+N over the first stream_s seconds, so that Slurm itself
//     releases them; no background process is left running.
//
// Capacity left for scenario jobs (root's rca-* jobs, one CPU each, no --time): one CPU and one GPU
// on node1, two CPUs and two GPUs on node2, one CPU on node3: 4 of the 6 CPUs outside maintenance
// (the 2-node job of a scenario, one CPU on each GPU node, fits), less a stream job for a few
// seconds at a time. Every background job has a --time and a --nice of at least 11000: with the
// lab's priority weights (fair share 10000, partition, job size and age 1000 each) a background
// job's priority stays at most about 1000 for the first days, while a root job's is at least 1188
// (partition and job size; measured) whatever its fair share, so the main scheduler considers every
// scenario job first and starts it when a CPU is free. The pending Resources job holds nothing: the
// backfill plans it for when the GPU job on node1 ends (the horizon; sinfo may show the node it
// plans on as `planned`, a state Lab::WaitReady accepts), and a scenario job never waits for it.
//
// What it never contains: a scenario's fault. No partition state, limit, reservation, QOS or daemon
// is touched; only Unix users, accounts, associations, jobs and the one maintenance drain.
//
// The users are system-wide while labs are not (three recording trials run at once): each user is
// recorded in a registry (LabOptions::user_registry) with the labs that hold it, and Lab::Down
// removes it only when no lab still holds it. A user that existed before and is not in the registry
// is used as it is and never removed.
#ifndef SLURM_RCA_SCENARIOS_LIVE_PROFILE_H_
#define SLURM_RCA_SCENARIOS_LIVE_PROFILE_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace slurm_rca::live {

enum class BusyJobKind {
  kShortCpu,    // sleeps seconds on one CPU and completes
  kLongCpu,     // runs for the horizon
  kGpu,         // asks --gres=gpu:N
  kArray,       // --array
  kDependency,  // --dependency on an earlier job of the trace
  kHeld,        // -H: pends with JobHeldUser
  kBeginTime,   // --begin far ahead: pends with BeginTime
  kFails,       // exits non-zero: FAILED
  kTimesOut,    // --time=1 and a longer sleep: TIMEOUT
  kCancelled,   // cancelled by its user once running: CANCELLED
};
std::string_view KindName(BusyJobKind kind);  // "short-cpu", "long-cpu", "gpu", ...
const std::vector<BusyJobKind>& AllBusyJobKinds();

struct BusyUser {
  std::string name;  // rcau-<name>
  std::string default_account;
  std::vector<std::string> accounts;  // its associations, the default account first
};

struct BusyJob {
  BusyJobKind kind = BusyJobKind::kShortCpu;
  std::string user;
  std::string account;
  std::string partition = "cpu";
  std::string name;        // what a user would call it; never starts with "rca-"
  int seconds = 0;         // what it sleeps (0: `true`)
  int exit_code = 0;       // kFails: non-zero
  int time_limit_min = 5;  // --time; every background job has one
  // < 0: history, submitted before hand-over (the most negative first); 0: at hand-over;
  // > 0: submitted at hand-over with --begin=now+N, so that Slurm releases it N s later.
  int submit_offset_s = 0;
  int nodes = 1;                // -N
  int gpus_per_node = 0;        // --gres=gpu:N when > 0
  std::string nodelist;         // -w, when not empty
  int nice = 0;                 // --nice
  int depends_on = -1;          // index in BusyTrace::jobs of an earlier job; -1: none
  std::string dependency_type;  // afterok, afternotok
  std::string array;            // --array, e.g. "1-4" or "1-3%1"
  bool hold = false;            // -H
  bool cancel = false;          // cancelled by its user once it runs
  bool settle = false;          // ApplyBusyProfile waits until it has ended before hand-over
  std::string shows;            // what it is there to show: "COMPLETED", "PENDING Resources", ...
};

struct BusyTrace {
  std::uint64_t seed = 0;
  std::vector<std::string> accounts;  // added to the lab (research and ops exist already)
  std::vector<BusyUser> users;
  std::string maintenance_node;  // drained once the history has run
  std::string maintenance_reason;
  std::vector<BusyJob> jobs;  // dependencies point backwards

  // One line per account, user, the drain and each job, in a fixed order and spelling: two
  // traces are equal when their texts are.
  std::string ToText() const;
};

struct TraceOptions {
  int nodes = 4;         // the lab's nodes (node1 and node2 have GPUs); the profile needs 4
  int horizon_s = 7200;  // how long the running and pending background lasts
  int stream_s = 1800;   // stream jobs are released over this many seconds after hand-over
};

BusyTrace GenerateBusyTrace(std::uint64_t seed, const TraceOptions& options = {});

// sbatch's argv (argv[0] "sbatch") for one job of the trace, run as root on the user's behalf
// (--uid/--gid): group is the user's primary group, workdir its working directory,
// dependency_id the Slurm id of job.depends_on (ignored when it has none).
std::vector<std::string> SbatchArgv(const BusyJob& job, const std::string& group,
                                    const std::string& workdir, const std::string& dependency_id);

// OK when users other than its owner can search every directory above file; else an error that
// names the first one they cannot ("/root is not searchable by others (mode 0700); chmod o+x
// /root"). The busy profile's users run the lab's Slurm clients: a release built under a private
// home is out of their reach.
base::Status CheckOpenToOthers(const std::string& file);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_PROFILE_H_

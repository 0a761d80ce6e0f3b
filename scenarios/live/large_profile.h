// The large background profile of the lab: a site-sized cluster on one machine.
//
// The busy profile (profile.h) is an ordinary day on 4 nodes. The large profile is the same idea
// at the scale slurm-mcp has to answer for (reference/site-scale.md): 1,024 nodes, each a real
// slurmd (`slurmd -N nodeI`), in 4 partitions, tens of thousands of queued jobs and tens of
// thousands of finished ones in accounting, every one of them made by Slurm itself (sbatch and job
// arrays; no row is ever written into the database by hand).
//
//   LargeTrace t = GenerateLargeTrace(/*seed=*/1, LargeOptions{.nodes = 1024});
//   std::cout << t.ToText();                       // the plan, one line per item
//   std::string conf = LargeSlurmConf(t);          // partitions and scale settings of slurm.conf
//   Status s = ApplyLargeProfile(lab, t, std::cout);   // lab.h; Lab::Up does this for "large"
//
// GenerateLargeTrace() is pure and deterministic (rng.h): the same seed, the same trace. The
// plan at `nodes` N (a multiple of 64, 256..1024; counts below are at 1,024 and scale with N/1024):
//
//   - nodes node1..nodeN with 2 CPUs each; node1..node(N/8) are GPU nodes (2 GPUs, device nodes
//     aliasing /dev/null as in every lab, and the healthy-mode nvidia-smi test double in each
//     node's trusted bin directory). Partitions gpu (the GPU nodes), cpu (the rest, default),
//     long (the first half of cpu, 7 days) and debug (the last N/64 nodes, 30 minutes);
//   - 10 users rcau-<name> in the accounts bio, physics, chem, astro and climate (2 each); one
//     account, drawn, is capped by an association limit (GrpJobs); QOS high (priority) and
//     scavenger (MaxJobsPerUser);
//   - history: about 50,000 array tasks of `true` (some exiting 1), run to completion before the
//     lab is handed over, at most 300 at once (50 arrays, %6 each): on 1,024 nodes 2,048 tasks
//     launched at once took the machine to a load of 343 and the controller stopped answering;
//   - running for the horizon: GPU jobs filling the gpu partition, 8-node exclusive MPI jobs on
//     half the cpu partition, one-CPU jobs and arrays on the rest (at least 1,000 jobs); the
//     capped account and the scavenger user run exactly up to their limits;
//   - pending: about 20,000 array tasks and 1,000 single jobs for Priority and Resources, jobs of
//     the capped account (AssocGrpJobsLimit) and of the scavenger user (QOSMaxJobsPerUserLimit),
//     jobs for a reservation that starts tomorrow (Reservation), jobs after a running one
//     (Dependency), held jobs (JobHeldUser) and jobs for later (BeginTime).
//
// What it never contains: a fault. No node is drained, no partition is down.
#ifndef SLURM_RCA_SCENARIOS_LIVE_LARGE_PROFILE_H_
#define SLURM_RCA_SCENARIOS_LIVE_LARGE_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/live/profile.h"

namespace slurm_rca::live {

struct LargeOptions {
  int nodes = 1024;      // a multiple of 64, between kLargeMinNodes and kLargeMaxNodes
  int horizon_s = 7200;  // how long the running and pending background lasts
  // Finished jobs the history leaves in accounting; < 0: 50,000 scaled to the nodes. A bounded
  // test asks for fewer: at about 30 tasks a second (README) the history is most of a bring-up.
  int history_tasks = -1;
};

inline constexpr int kLargeMinNodes = 256;
inline constexpr int kLargeMaxNodes = 1024;

struct LargePartition {
  std::string name;
  std::string nodes;  // hostlist, "node[129-1024]"
  std::string max_time;
  bool is_default = false;
};

struct LargeQos {
  std::string name;
  std::vector<std::string> settings;  // sacctmgr's, "Priority=1000", "MaxJobsPerUser=8"
};

// When a job of the plan is submitted, and what is waited for before the next phase.
enum class LargePhase {
  kHistory,  // submitted first and waited for until it has left the queue
  kRunning,  // submitted next and waited for until it runs
  kPending,  // submitted last: the queue at hand-over
};

struct LargeJob {
  LargePhase phase = LargePhase::kPending;
  std::string user;
  std::string account;
  std::string partition = "cpu";
  std::string qos;  // empty: the default (normal)
  std::string name;
  int copies = 1;          // how many times this sbatch is run
  int array = 0;           // > 0: --array=0-(array-1)
  int array_limit = 0;     // > 0: at most this many of its tasks at once (--array=...%N)
  int nodes = 1;           // -N
  bool exclusive = false;  // whole nodes
  int gpus_per_node = 0;
  int seconds = 0;  // what it sleeps (0: `true`)
  int exit_code = 0;
  int time_limit_min = 60;
  int nice = 0;
  bool hold = false;
  int begin_s = 0;          // > 0: --begin=now+N
  std::string reservation;  // --reservation
  int depends_on = -1;      // index of a kRunning job of the plan (afterok on its first copy)
  std::string shows;        // "RUNNING", "PENDING Priority", "COMPLETED", ...

  // Jobs (array tasks counted one by one) this entry puts in Slurm.
  long Tasks() const { return static_cast<long>(copies) * (array > 0 ? array : 1); }
};

struct LargeTrace {
  std::uint64_t seed = 0;
  int nodes = 0;
  int gpu_nodes = 0;
  std::vector<LargePartition> partitions;
  std::vector<std::string> accounts;  // added to the lab (research and ops exist already)
  std::vector<BusyUser> users;
  std::vector<LargeQos> qos;
  std::string limited_account;  // its association's GrpJobs is assoc_grp_jobs
  int assoc_grp_jobs = 0;
  std::string scavenger_user;  // runs scavenger jobs up to the QOS's MaxJobsPerUser
  int scavenger_max_jobs = 0;
  std::string reservation;        // starts a day after hand-over, on reservation_nodes
  std::string reservation_nodes;  // hostlist
  std::string reservation_account;
  std::vector<LargeJob> jobs;  // dependencies point backwards, at kRunning jobs

  // Jobs of a phase (array tasks counted one by one).
  long Tasks(LargePhase phase) const;
  // One line per partition, account, user, QOS, limit, the reservation and each job, in a fixed
  // order and spelling: two traces are equal when their texts are.
  std::string ToText() const;
};

// Refuses a node count the profile cannot be laid out on ("--nodes 100: the large profile takes a
// multiple of 64 between 256 and 1024").
base::Status CheckLargeNodes(int nodes);

LargeTrace GenerateLargeTrace(std::uint64_t seed, const LargeOptions& options = {});

// The lines of slurm.conf the large profile adds after the node lines: its partitions, and the
// limits a site of this size raises (MaxJobCount, MaxArraySize) and its scheduler settings.
std::string LargeSlurmConf(const LargeTrace& trace);

// sbatch's argv (argv[0] "sbatch") for one copy of a job of the plan, run as root on the user's
// behalf (--uid/--gid): group is the user's primary group, workdir its working directory,
// dependency_id the Slurm id of job.depends_on's first copy (ignored when it has none).
std::vector<std::string> LargeSbatchArgv(const LargeJob& job, const std::string& group,
                                         const std::string& workdir,
                                         const std::string& dependency_id);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_LARGE_PROFILE_H_

#include "mcp/topics/topics.h"

#include <re2/re2.h>

#include "base/status.h"
#include "base/strings.h"
#include "mcp/telemetry/fabric.h"
#include "mcp/telemetry/gpu_health.h"
#include "mcp/telemetry/gpu_idle.h"
#include "mcp/telemetry/text.h"
#include "mcp/topics/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace slurm_rca::mcp {
namespace {

// Value grammars. Each is a subset of the guard's grammar for the option it is given to
// (guard/policy.cc), so a value accepted here is never the reason the guard refuses an argv.
// None lets a value start with '-', contain a space, a quote, '$', '/' or a byte outside
// printable ASCII.
constexpr char kNamePattern[] = R"([A-Za-z0-9][A-Za-z0-9_.,:@+-]{0,127})";
constexpr char kNameGrammar[] =
    "a name or comma list of names: letters, digits and _ . , : @ + -, starting with a letter or "
    "digit, at most 128 characters";
constexpr char kStatePattern[] = R"([A-Za-z][A-Za-z_,]{0,127})";
constexpr char kStateGrammar[] =
    "a state name or comma list of them (letters, _ and ,), at most 128 characters";
constexpr char kHostlistPattern[] = R"([A-Za-z0-9][A-Za-z0-9_.,:+\[\]-]{0,127})";
constexpr char kHostlistGrammar[] =
    "a node name, comma list or hostlist such as node[1-4]: letters, digits and _ . , : + [ ] -, "
    "starting with a letter or digit, at most 128 characters";
constexpr char kTimePattern[] = R"([A-Za-z0-9][A-Za-z0-9:.+-]{0,63})";
constexpr char kTimeGrammar[] =
    "a Slurm time such as 2026-08-01T00:00:00, now or now-1hour: letters, digits and : . + -, at "
    "most 64 characters";
constexpr char kJobListPattern[] = R"([0-9][0-9A-Za-z_.,+]{0,127})";
constexpr char kJobListGrammar[] =
    "a job id or comma list of them (1008, 1008,1009, 1234.0, 1008_3): starting with a digit, "
    "letters, digits and _ . , +, at most 128 characters";
constexpr char kJobIdPattern[] = R"([0-9]{1,12}([_+][0-9]{1,10})?)";
constexpr char kJobIdGrammar[] =
    "one job id: digits, optionally followed by _N (array task) or +N (heterogeneous component)";
constexpr char kObjectPattern[] = R"([A-Za-z0-9][A-Za-z0-9_.:+-]{0,127})";
constexpr char kObjectGrammar[] =
    "one name: letters, digits and _ . : + -, starting with a letter or digit, at most 128 "
    "characters";
constexpr char kGpuIdPattern[] = R"([A-Za-z0-9][A-Za-z0-9:.,-]{0,127})";
constexpr char kGpuIdGrammar[] =
    "a GPU index (0), UUID (GPU-...) or PCI bus id (00000000:3B:00.0), or a comma list of them";
constexpr char kDaemonPattern[] = "slurmctld|slurmdbd|slurmd";
constexpr char kDaemonGrammar[] = "one of slurmctld, slurmdbd, slurmd";
constexpr char kLogPatternPattern[] = R"([\x20-\x7e]{1,256})";
constexpr char kLogPatternGrammar[] =
    "an RE2 regular expression (no backreferences or lookaround) of printable ASCII, at most 256 "
    "characters, matched anywhere in a line";

Filter Option(std::string name, std::string flag, const char* pattern, const char* grammar,
              std::string example, std::string description) {
  return Filter{.name = std::move(name),
                .kind = Filter::Kind::kOption,
                .flag = std::move(flag),
                .pattern = pattern,
                .grammar = grammar,
                .example = std::move(example),
                .description = std::move(description)};
}

Filter Operand(std::string name, const char* pattern, const char* grammar, std::string example,
               std::string description) {
  return Filter{.name = std::move(name),
                .kind = Filter::Kind::kOperand,
                .pattern = pattern,
                .grammar = grammar,
                .example = std::move(example),
                .description = std::move(description)};
}

std::vector<Topic> BuildTopics() {
  std::vector<Topic> t;

  t.push_back(Topic{
      .name = "queue",
      .summary = "Pending and running jobs with their state and reason codes (squeue).",
      .detail =
          "The reason code is the payload. In `reason`, a PENDING job shows its reason in "
          "parentheses and a RUNNING job its node list. Slurm's job_reason_codes: Resources = "
          "\"the resources requested by the job are not available\" (waiting on capacity); "
          "Priority = \"one or more higher priority jobs exist for this partition or advanced "
          "reservation\" (waiting on jobs ahead); ReqNodeNotAvail = \"some node specifically "
          "required by the job is not currently available\" (often an unnoticed DRAINED or DOWN "
          "node: read `nodes`); JobHeldUser / JobHeldAdmin = held, never starts until released; "
          "Dependency = waiting on another job. `elapsed` is run time so far (0:00 while "
          "pending). squeue lists only jobs slurmctld still holds: finished jobs leave after "
          "MinJobAge (default 300 s), so use `accounting` for history. Slurm 22.05 answers a "
          "user filter naming an unknown user with an error on stderr, exit 0 and no jobs: an "
          "empty queue under a user filter is not proof that the user has no jobs.",
      .argv = {"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"},
      .filters = {Option("user", "-u", kNamePattern, kNameGrammar, "alice",
                         "jobs of these users (squeue -u)"),
                  Option("partition", "-p", kNamePattern, kNameGrammar, "gpu",
                         "jobs in these partitions (squeue -p)"),
                  Option("state", "-t", kStatePattern, kStateGrammar, "PENDING",
                         "jobs in these states, e.g. PENDING,RUNNING (squeue -t)"),
                  Option("account", "-A", kNamePattern, kNameGrammar, "research",
                         "jobs charged to these accounts (squeue -A)"),
                  Option("node", "-w", kHostlistPattern, kHostlistGrammar, "node[1-4]",
                         "jobs running on these nodes (squeue -w; an unknown node is an error)")},
      .columns = {{"jobid", "job id (array jobs as 1008_3)"},
                  {"partition", "partition the job runs or waits in"},
                  {"user", "user name"},
                  {"state", "job state: PENDING, RUNNING, COMPLETING, ..."},
                  {"elapsed", "run time so far, [days-]hours:minutes:seconds"},
                  {"nodes", "number of nodes allocated or requested"},
                  {"reason", "PENDING: (reason code); RUNNING: node list"}},
      .format = Format::kDelimited,
  });

  t.push_back(Topic{
      .name = "nodes",
      .summary = "Node and partition state, including drains and their reasons (sinfo).",
      .detail =
          "One row per node per partition: a node in two partitions appears twice, and the "
          "default partition carries a trailing '*'. `state` is the extended state (drained, "
          "draining, down, allocated, mixed, idle; a trailing '*' means the node is not "
          "responding). `cpus` is allocated/idle/other/total: other counts CPUs of drained or "
          "down nodes. `gres` is the configured generic resources, e.g. gpu:2, or (null). "
          "Read `reason` first: it is free text set by whoever drained the node (an admin, a "
          "health check or epilog script, or slurmd itself, e.g. \"Kill task failed\" or "
          "\"Not responding\"), and it tells a hardware fault from a human action; \"none\" "
          "when the node is healthy.",
      .argv = {"sinfo", "--noheader", "-N", "-o", "%N|%P|%T|%C|%G|%E"},
      .filters = {Option("partition", "-p", kNamePattern, kNameGrammar, "gpu",
                         "nodes of these partitions (sinfo -p)"),
                  Option("state", "-t", kStatePattern, kStateGrammar, "drained",
                         "nodes in these states, e.g. drained,down (sinfo -t)"),
                  Option("node", "-n", kHostlistPattern, kHostlistGrammar, "node[1-4]",
                         "these nodes (sinfo -n; unknown names give no rows, not an error)")},
      .columns = {{"node", "node name"},
                  {"partition", "partition; the default one ends with '*'"},
                  {"state", "extended node state: idle, mixed, allocated, drained, down, ..."},
                  {"cpus", "CPUs allocated/idle/other/total"},
                  {"gres", "configured generic resources, e.g. gpu:2, or (null)"},
                  {"reason", "why the node is drained or down; none when healthy"}},
      .format = Format::kDelimited,
  });

  t.push_back(Topic{
      .name = "accounting",
      .summary = "Job history from the accounting database (sacct): finished, failed, "
                 "cancelled and running jobs.",
      .detail =
          "sacct reads slurmdbd, not the controller: an error, a hang or a timeout here is "
          "evidence about slurmdbd and its database, not about the jobs. One row per job "
          "allocation (-X: steps are not shown). Without `starttime` sacct starts at 00:00 "
          "today; giving `state` changes that default (jobs in that state during the window). "
          "-a shows every user's jobs only for root, an operator, or when PrivateData does not "
          "hide jobs. `state` reads e.g. FAILED (non-zero exit), TIMEOUT, OUT_OF_MEMORY, "
          "NODE_FAIL, \"CANCELLED by <uid>\" (who cancelled it). Compare `elapsed` with "
          "`timelimit` for jobs killed at their limit and for backfill questions; `reqtres` is "
          "what the job asked for.",
      .argv = {"sacct", "-a", "-X", "--parsable2", "--noheader",
               "--format=JobID,Account,User,State,Elapsed,Timelimit,NNodes,ReqTRES"},
      .filters = {Option("user", "-u", kNamePattern, kNameGrammar, "alice",
                         "jobs of these users (sacct -u; an unknown user is an error)"),
                  Option("account", "-A", kNamePattern, kNameGrammar, "research",
                         "jobs charged to these accounts (sacct -A)"),
                  Option("partition", "-r", kNamePattern, kNameGrammar, "gpu",
                         "jobs in these partitions (sacct -r)"),
                  Option("state", "-s", kStatePattern, kStateGrammar, "FAILED,TIMEOUT",
                         "jobs in these states during the window (sacct -s)"),
                  Option("job", "-j", kJobListPattern, kJobListGrammar, "1008",
                         "these jobs (sacct -j)"),
                  Option("node", "-N", kHostlistPattern, kHostlistGrammar, "node1",
                         "jobs that ran on these nodes (sacct -N)"),
                  Option("starttime", "-S", kTimePattern, kTimeGrammar, "2026-08-01T00:00:00",
                         "window start (sacct -S; default 00:00 today)"),
                  Option("endtime", "-E", kTimePattern, kTimeGrammar, "now",
                         "window end (sacct -E; default now)")},
      .columns = {{"jobid", "job id"},
                  {"account", "account charged"},
                  {"user", "user name"},
                  {"state", "final or current state, e.g. COMPLETED, FAILED, CANCELLED by 0"},
                  {"elapsed", "run time, [days-]hours:minutes:seconds"},
                  {"timelimit", "time limit"},
                  {"nnodes", "number of nodes"},
                  {"reqtres", "requested trackable resources, e.g. cpu=1,mem=1000M,node=1"}},
      .format = Format::kDelimited,
  });

  t.push_back(Topic{
      .name = "priority",
      .summary = "Priority factor breakdown of each pending job (sprio).",
      .detail =
          "Read the factors, not the total: every factor column is already weighted "
          "(PriorityWeight* from `config`) and they sum to `priority`. `partition` is the "
          "partition name (%r) while `partition_prio` is the weighted partition factor (%P). A "
          "job stuck behind others with reason Priority is explained by which factor separates "
          "it from the jobs ahead. sprio needs PriorityType=priority/multifactor: with "
          "priority/basic it exits 1 with \"You are not running a supported priority plugin\" "
          "and there is no breakdown to read (check PriorityType in `config`).",
      .argv = {"sprio", "--noheader", "-o", "%i|%r|%u|%Y|%A|%F|%J|%P|%Q"},
      .filters = {Option("user", "-u", kNamePattern, kNameGrammar, "alice",
                         "pending jobs of these users (sprio -u)"),
                  Option("partition", "-p", kNamePattern, kNameGrammar, "gpu",
                         "pending jobs in these partitions (sprio -p)")},
      .columns = {{"jobid", "job id"},
                  {"partition", "partition name"},
                  {"user", "user name"},
                  {"priority", "total priority"},
                  {"age", "weighted age factor"},
                  {"fairshare", "weighted fairshare factor"},
                  {"jobsize", "weighted job size factor"},
                  {"partition_prio", "weighted partition factor"},
                  {"qos", "weighted QOS factor"}},
      .format = Format::kDelimited,
  });

  t.push_back(Topic{
      .name = "fairshare",
      .summary = "Fairshare tree: shares, usage and fairshare factor per account and user "
                 "(sshare).",
      .detail =
          "Rows follow the association tree, root first; sshare's indentation of the tree is "
          "removed, so a row with an empty `user` is an account and rows with a user are that "
          "user's association under the account. `fairshare` near 1 means under-served, near 0 "
          "over-served; `effectvusage` is the share of the cluster's decayed usage. Usage "
          "decays with PriorityDecayHalfLife: read it with `config`. With priority/basic the "
          "numbers are all zero and do not influence scheduling. The explicit --format pins the "
          "column order (sshare's default differs between short and long output).",
      .argv = {"sshare", "--noheader", "--parsable2", "-a",
               "--format=Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"},
      .filters = {Option("user", "-u", kNamePattern, kNameGrammar, "alice",
                         "associations of these users (sshare -u)"),
                  Option("account", "-A", kNamePattern, kNameGrammar, "research",
                         "these accounts (sshare -A)")},
      .columns = {{"account", "account"},
                  {"user", "user; empty on the account's own row"},
                  {"rawshares", "shares assigned to the association"},
                  {"normshares", "shares normalised to the siblings"},
                  {"rawusage", "decayed usage in CPU-seconds"},
                  {"effectvusage", "effective usage, share of the total"},
                  {"fairshare", "fairshare factor, 0..1"}},
      .format = Format::kDelimited,
  });

  t.push_back(Topic{
      .name = "diagnostics",
      .summary = "Scheduler internals: main and backfill cycles, RPC and agent queues (sdiag).",
      .detail =
          "Read first when scheduling is slow. Rows are the numeric figures, named "
          "<section>_<label>: server_thread_count, agent_queue_size, dbd_agent_queue_size, "
          "jobs_submitted/started/completed/canceled/failed, main_last_cycle, main_max_cycle, "
          "main_mean_cycle (microseconds), backfill_last_cycle, backfill_max_cycle "
          "(microseconds), backfill_last_depth_cycle, ...; the full text follows, including "
          "RPC counts by type and by user. A climbing dbd_agent_queue_size means accounting "
          "messages to slurmdbd are backing up; a server_thread_count near its limit or a "
          "growing agent_queue_size means slurmctld is saturated; a backfill cycle close to "
          "bf_max_time, or a last depth well below the queue length, means backfill does not "
          "reach the whole queue. One measured run (slurm-rca-bench S01, Slurm 25.11.4, "
          "database paused about 15 minutes) saw a growing DBD agent queue slow job starts "
          "without halting scheduling: one cluster, one scenario. Counters restart at "
          "midnight and at slurmctld start (\"Data since\").",
      .argv = {"sdiag"},
      .columns = {{"figure", "figure name, <section>_<label>, e.g. backfill_last_cycle"},
                  {"value", "its value (cycle times in microseconds)"}},
      .format = Format::kDiagnostics,
  });

  t.push_back(Topic{
      .name = "config",
      .summary = "The running controller's configuration (scontrol show config).",
      .detail =
          "The configuration slurmctld is running with, which may differ from slurm.conf on "
          "disk until `scontrol reconfigure` or a restart. Priority weights (PriorityType, "
          "PriorityWeight*), PriorityDecayHalfLife, SchedulerType and SchedulerParameters "
          "(bf_window, bf_resolution, bf_max_job_test, bf_max_time), timeouts (SlurmdTimeout, "
          "MessageTimeout), MinJobAge, log file locations and the accounting storage "
          "settings live here. The last lines say whether the primary and backup controllers "
          "answer.",
      .argv = {"scontrol", "show", "config"},
      .format = Format::kText,
  });

  t.push_back(Topic{
      .name = "jobs",
      .summary = "The controller's full record of each job it holds (scontrol -o show job).",
      .detail =
          "One row per job slurmctld still holds (running, pending, and finished within "
          "MinJobAge). Use it for what `queue` does not show: why a job ended (ExitCode "
          "status:signal, Reason such as NonZeroExitCode), when it was submitted, became "
          "eligible and started, what it asked for (ReqNodeList, ExcNodeList, TRES, "
          "Features), where it runs (NodeList, BatchHost) and its output paths. Priority=0 with "
          "Reason=JobHeldUser or JobHeldAdmin is a held job. Filter `job` for one job; a job "
          "the controller no longer holds is an error (\"Invalid job id specified\"): read "
          "`accounting` instead.",
      .argv = {"scontrol", "-o", "show", "job"},
      .filters = {Operand("job", kJobIdPattern, kJobIdGrammar, "1234", "only this job")},
      .columns = {{"JobId", "job id"},
                  {"JobName", "job name"},
                  {"UserId", "user(uid)"},
                  {"Account", "account charged"},
                  {"QOS", "quality of service"},
                  {"Partition", "partition"},
                  {"JobState", "state: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ..."},
                  {"Reason", "why it waits or how it ended"},
                  {"Dependency", "dependency expression, or (null)"},
                  {"Priority", "priority; 0 when held"},
                  {"ExitCode", "exit status:signal"},
                  {"RunTime", "run time so far"},
                  {"TimeLimit", "time limit"},
                  {"SubmitTime", "submission time"},
                  {"EligibleTime", "when it became eligible to run"},
                  {"StartTime", "start time, or expected start"},
                  {"EndTime", "end time, or expected end"},
                  {"ReqNodeList", "nodes it asked for"},
                  {"ExcNodeList", "nodes it excluded"},
                  {"NodeList", "nodes it runs or ran on"},
                  {"BatchHost", "node running the batch script"},
                  {"NumNodes", "node count"},
                  {"NumCPUs", "CPU count"},
                  {"TRES", "trackable resources allocated or requested (22.05)"},
                  // 25.11 prints these two where 22.05 printed TRES (fixtures/slurm-25.11).
                  {"ReqTRES", "trackable resources requested (25.11 and later)"},
                  {"AllocTRES", "trackable resources allocated (25.11 and later)"},
                  {"Features", "required node features"},
                  {"WorkDir", "working directory"},
                  {"StdOut", "standard output path"},
                  {"StdErr", "standard error path"}},
      .format = Format::kKeyValue,
  });

  t.push_back(Topic{
      .name = "partitions",
      .summary = "Partition limits, state and membership (scontrol -o show partition).",
      .detail =
          "State UP accepts and starts jobs; DOWN accepts but starts none (jobs pend with "
          "reason PartitionDown); DRAIN accepts none; INACTIVE neither. Default=YES is where "
          "jobs without -p go. MaxTime, MaxNodes and DefaultTime bound jobs (reasons "
          "PartitionTimeLimit, PartitionNodeLimit); AllowAccounts, AllowGroups and AllowQos "
          "limit who may submit. PriorityTier orders partitions sharing nodes; PreemptMode and "
          "OverSubscribe say whether jobs share or preempt. Nodes is the member hostlist.",
      .argv = {"scontrol", "-o", "show", "partition"},
      .filters = {Operand("partition", kObjectPattern, kObjectGrammar, "gpu",
                          "only this partition (an unknown one is an error)")},
      .columns = {{"PartitionName", "partition name"},
                  {"State", "UP, DOWN, DRAIN or INACTIVE"},
                  {"Default", "YES for the default partition"},
                  {"Nodes", "member nodes (hostlist)"},
                  {"TotalNodes", "node count"},
                  {"TotalCPUs", "CPU count"},
                  {"MaxTime", "longest time limit allowed"},
                  {"DefaultTime", "time limit of jobs that give none"},
                  {"MaxNodes", "most nodes per job"},
                  {"AllowAccounts", "accounts allowed to submit"},
                  {"AllowGroups", "groups allowed to submit"},
                  {"AllowQos", "QOS allowed"},
                  {"QoS", "partition QOS"},
                  {"PriorityTier", "scheduling tier among overlapping partitions"},
                  {"PriorityJobFactor", "partition priority factor"},
                  {"PreemptMode", "preemption mode"},
                  {"OverSubscribe", "whether jobs share nodes"},
                  {"TRES", "trackable resources of the partition"}},
      .format = Format::kKeyValue,
  });

  t.push_back(Topic{
      .name = "reservations",
      .summary = "Advance reservations: nodes, window, flags and who may use them (scontrol -o "
                 "show reservation).",
      .detail =
          "A reservation holds its nodes for its users during [StartTime, EndTime]. Jobs of "
          "other users whose time limit would overlap the window do not start on those nodes "
          "and pend (reasons such as ReqNodeNotAvail or Reservation, or \"Reserved for "
          "maintenance\"): compare the window with the jobs' TimeLimit. Flags=MAINT marks a "
          "maintenance reservation (its nodes show as maint in sinfo); State is ACTIVE inside "
          "the window and INACTIVE before it. No reservation prints \"No reservations in the "
          "system\", which is zero rows.",
      .argv = {"scontrol", "-o", "show", "reservation"},
      .filters = {Operand("reservation", kObjectPattern, kObjectGrammar, "maint_window",
                          "only this reservation")},
      .columns = {{"ReservationName", "reservation name"},
                  {"State", "ACTIVE or INACTIVE"},
                  {"StartTime", "window start"},
                  {"EndTime", "window end"},
                  {"Duration", "window length"},
                  {"Nodes", "reserved nodes (hostlist)"},
                  {"NodeCnt", "node count"},
                  {"CoreCnt", "core count"},
                  {"PartitionName", "partition, or (null)"},
                  {"Flags", "flags, e.g. MAINT,SPEC_NODES"},
                  {"Users", "users allowed"},
                  {"Groups", "groups allowed"},
                  {"Accounts", "accounts allowed"},
                  {"TRES", "trackable resources reserved"}},
      .format = Format::kKeyValue,
  });

  t.push_back(Topic{
      .name = "gpu",
      .summary = "GPU telemetry of the server's host: temperature, utilisation, memory, "
                 "uncorrected ECC errors (nvidia-smi).",
      .detail =
          "Read by nvidia-smi on the host this server runs on, which is not necessarily the "
          "node a job used: compare `uuid` and the node before blaming a GPU. A non-zero "
          "`ecc_uncorrected_volatile` (since the last driver load) marks a GPU that needs a "
          "reset or replacement and usually explains jobs failing on that node; a GPU missing "
          "from the list, or nvidia-smi failing, points at the driver or a fallen-off-the-bus "
          "device. Values are without units: degrees C, percent, MiB. \"[N/A]\" or \"[Not "
          "Supported]\" means the GPU does not report it. This topic's parser is tested on a "
          "test double's output, not on a real nvidia-smi.",
      .argv = {"nvidia-smi",
               "--query-gpu=index,name,uuid,temperature.gpu,utilization.gpu,memory.used,"
               "memory.total,ecc.errors.uncorrected.volatile.total",
               "--format=csv,noheader,nounits"},
      .filters = {Option("id", "-i", kGpuIdPattern, kGpuIdGrammar, "0",
                         "only these GPUs (nvidia-smi -i)")},
      .columns = {{"index", "GPU index"},
                  {"name", "product name"},
                  {"uuid", "GPU UUID"},
                  {"temperature_c", "core temperature, degrees C"},
                  {"utilization_pct", "GPU utilisation, percent"},
                  {"memory_used_mib", "memory used, MiB"},
                  {"memory_total_mib", "memory total, MiB"},
                  {"ecc_uncorrected_volatile", "uncorrected ECC errors since driver load"}},
      .format = Format::kCsv,
  });

  t.push_back(Topic{
      .name = "gpu_health",
      .summary = "Are the GPUs of the server's host persistently faulty? Health checks "
                 "(fatal/degraded/transient/unknown) and a would-drain classification from one "
                 "node-wide nvidia-smi query.",
      .detail =
          "One node-wide nvidia-smi query (no -i) read as an epilog GPU validator reads it, "
          "with the seed's unvalidated site-policy defaults. Every field is value-or-unknown: "
          "[N/A], [Not Supported], any [...], empty, non-numeric or out of range is unknown "
          "with a reason, never 0; a GPU with MIG enabled has its memory unknown and is not "
          "checked per instance. Checks: ecc-uncorrectable (volatile > 0) fatal; "
          "row-remap-failure fatal; ecc-correctable (> 1000) degraded; throttle degraded for a "
          "hardware thermal slowdown (0x40) or power brake (0x80), transient for other clock "
          "event reasons (gpu_idle, applications_clocks_setting and sync_boost are ignored; "
          "names are in clock_reasons); leaked-memory (used/total > 0.05) degraded; "
          "ecc-uncorrectable-history transient with persistence Enabled, else unknown; "
          "row-remap-uncorrectable, row-remap-pending, temperature (>= 90 C) transient; "
          "ecc-volatile-unreliable (persistence Disabled), pcie-width, pcie-gen, unreadable, "
          "mig and malformed-row unknown. nvidia-smi exits 8 (power cables), 10 (interrupt "
          "issue), 14 (infoROM corrupted) and 15 (fell off the bus) are evidence: a fatal node "
          "finding nvidia-smi-exit-N that names no GPU. Any other exit, a timeout (even one "
          "that would have ended in 15), a refusal or output that is not CSV is QUERY FAILED: "
          "no evidence, neither a fault nor a healthy GPU. `report.summary.would_drain` (worst "
          "severity degraded or fatal) and `reason` are a classification only: this server "
          "never drains, resumes or writes anything. CANNOT SEE: GPUs of other nodes (only the "
          "host the server runs on); which job used a GPU (no job scoping); Xid events, "
          "NVLink, PCIe replays, retired pages of pre-Ampere GPUs, anything under load; MIG "
          "instances; history (one reading). leaked-memory assumes no job holds the GPU: a "
          "running job's memory reads the same. Tested on a synthetic nvidia-smi test double "
          "(mcp/testdata/nvidia-smi-double), never on a real GPU.",
      .argv = GpuHealthArgv(),
      .columns = {{"index", "NVML index"},
                  {"label", "gpuN, as named in findings and the reason"},
                  {"uuid", "GPU UUID, or null when unreadable"},
                  {"name", "product name, or null when unreadable"},
                  {"pci_bus_id", "canonical PCI bus id DDDDDDDD:BB:DD.F"},
                  {"mig", "true when MIG is enabled (or its mode is unreadable)"},
                  {"clock_reasons", "decoded clock event reason names, or null when unreadable"},
                  {"worst_severity", "none, unknown, transient, degraded or fatal"},
                  {"findings", "{check, severity, label, detail} of this GPU"},
                  {"fields", "each queried field as {value, known, raw, reason}"}},
      .format = Format::kGpuHealth,
  });

  t.push_back(Topic{
      .name = "gpu_idle",
      .summary = "Are running Slurm GPU jobs holding idle GPUs? An idle/hung/starved/unknown "
                 "classification per job from GPU samples this server takes itself (nvidia-smi "
                 "or dcgm-exporter), with the evidence window.",
      .detail =
          "Judged from samples this server keeps in memory, per node, from its own periodic "
          "reads: nvidia-smi on the server's host (through the guard) and/or the dcgm-exporter "
          "/metrics page of each host on an allowlist. Sampling is OFF unless slurm-mcp serve "
          "is started with --gpu-sample-interval (and --gpu-node-name and/or --dcgm-host); "
          "without it, and in replay, this topic is no evidence. Running GPU jobs come from "
          "squeue (tres-alloc gres/gpu, node list, start time in UTC). The seed's unvalidated "
          "defaults: a job is judged only after a 15 min warm-up (samples before it are never "
          "evidence) over the last 20 min window, with at least 8 observations per node, none "
          "older than 3 min (max_sample_gap), no hole longer than 3 min between them (a hole or "
          "a stale newest sample is a monitoring outage, never idleness: history before it is "
          "not used and the window must be covered again), every sample judgeable (utilisation "
          "and memory known, not MIG), the same GPU count in each and at least as many GPUs as "
          "allocated. PEAK, NOT MEAN: one sample at or above 15 % utilisation anywhere clears "
          "the job (status judged, signature null). Otherwise signature idle (memory not held "
          "(< 5 %), zero processes known, power known and < 60 W), hung (memory held, "
          "processes seen, peak < 1 %), starved (memory held, peak >= 1 %) or unknown (anything "
          "else, e.g. processes or power unknown). Every other status says why the job is not "
          "judged: no_gpus, start_unknown, in_warmup, shared_node (another GPU job on a node: "
          "GPUs cannot be attributed), no_samples, partial_nodes, stale_newest, gap_exceeded, "
          "window_not_covered, insufficient_observations, varying_gpu_count, unjudgeable_gpu, "
          "attribution_conflict (a dcgm hpc_job label names another job), "
          "fewer_gpus_than_allocated. `evidence` shows the window and per node the first and "
          "last sample, count, failed reads and largest gap; `stage_if_enforced` (alert, or "
          "drain after 60 min of an idle/hung breach) is a classification only: this server "
          "never drains, cancels or writes anything. A value that is [N/A], empty, not a number "
          "or out of range is unknown, never 0; a failed, timed-out or refused read is a hole, "
          "never an idle or healthy GPU. CANNOT SEE: which job uses which GPU on a shared node "
          "(no PID to job mapping, so shared nodes are skipped); processes under dcgm-exporter "
          "(no process data: dcgm evidence is never idle or hung); a stalled exporter that "
          "still answers; nodes that are not sampled (only this host and the allowlisted "
          "exporters); anything before the server started sampling (a restart starts with no "
          "history); MIG instances; work that is not on the GPU (nvidia-smi utilisation is "
          "coarse: one busy SM reads as busy). Tested on synthetic nvidia-smi and "
          "dcgm-exporter test doubles with a simulated clock, never on a real GPU.",
      .source = Source::kSamples,
      .argv = {"samples", "gpu_idle"},
      .columns = {{"job_id", "Slurm job id"},
                  {"name", "job name"},
                  {"start_time", "start time (UTC), null when unparseable"},
                  {"nodes", "expanded node list"},
                  {"allocated_gpus", "GPUs in tres-alloc"},
                  {"classification_only", "always true: nothing is done"},
                  {"status", "judged, or why the job is not judged"},
                  {"detail", "the reason in words"},
                  {"evidence", "window_start, window_end and per node first, last, count, gaps"},
                  {"figures", "peak/mean util, memory fraction, power, PIDs (judged jobs)"},
                  {"signature", "idle, hung, starved, unknown; null when busy"},
                  {"breach_since", "first sample of the current below-threshold run"},
                  {"dwell_seconds", "now - breach_since"},
                  {"gpu_hours_in_breach", "GPUs x dwell"},
                  {"stage_if_enforced", "alert or drain: classification only"}},
      .format = Format::kGpuIdle,
  });

  t.push_back(Topic{
      .name = "fabric",
      .summary = "InfiniBand/RoCE ports of the server's host: state, rate, PMA and mlx5 counters, "
                 "and the Slurm job that is each port's only visible user (sysfs, /proc, "
                 "cgroups).",
      .detail =
          "Read from files, no process: class/infiniband/<hca>/ports/<n>/{state,rate,link_layer,"
          "counters/*,hw_counters/*} under the sysfs root, the Slurm cgroup tree and "
          "/proc/<pid>/fd; every path is checked against an allowlist of path patterns and "
          "anything else is refused (report.node.refused_reads). A counter file that is "
          "missing, empty or not a decimal is listed in absent_counters, never 0; a PMA counter "
          "of known width at 2^width-1 is saturated (its rate goes blind until the subnet "
          "manager clears it), mlx5 Q counters wrap at 32 bits; port_xmit_data and "
          "port_rcv_data count 4-octet words. Counters are endpoint symptoms, not the faulty "
          "link. Jobs come from cgroup-v1 (<ctrl>/slurm/uid_*/job_*), cgroup-v2 "
          "(<scope>/job_*) or cgroup-v2-sluid (<scope>/<SLUID>, Slurm 26.05's default; resolved "
          "to a job only from agreeing slurmstepd titles). A job holding /proc/<pid>/fd links "
          "to uverbsN uses every port of the HCA that class/infiniband_verbs/uverbsN/ibdev "
          "names. attributed_job is set only when there is no evidence gap, exactly one job "
          "user and no non-job user; else suppression says why: evidence_gap (an unreadable "
          "cgroup or /proc/<pid>/fd, a PID in a cgroup but not in /proc, an unreadable ibdev: "
          "it suppresses every port), nonjob_user (a process outside every job holds the HCA), "
          "shared (several jobs; NCCL opens every active HCA, so attribution needs "
          "node-exclusive jobs), unresolved (the only user is a SLUID with no job id). "
          "Attribution is a classification only; nothing is reset or written. CANNOT SEE: "
          "kernel RDMA users (NFS/RDMA, Lustre o2ib, iSER, IPoIB), processes in another PID "
          "namespace or hidden by hidepid (reported as a gap when a job's PID is missing), "
          "queue pairs (no rdma tool is run: DEVX and per-QP ownership are invisible), PFC "
          "pause counters, a neighbour that comes and goes between reads, which cable or link "
          "is faulty, other nodes. Needs root (or CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE) and "
          "the host PID namespace; without them every attribution is suppressed. Tested on "
          "synthetic sysfs/proc/cgroup trees only, never on an HCA.",
      .source = Source::kNodeFiles,
      .argv = {"files", "fabric"},
      .columns = {{"device", "HCA name, e.g. mlx5_0"},
                  {"port", "port number"},
                  {"state", "port state after the colon, e.g. ACTIVE; null when unreadable"},
                  {"up", "true iff the state is ACTIVE"},
                  {"rate", "e.g. 200 Gb/sec (4X HDR); null when unreadable"},
                  {"link_layer", "InfiniBand or Ethernet (RoCE); null when unreadable"},
                  {"counters", "present counters: {value, source, width, saturated, wraps}"},
                  {"absent_counters", "known counters with no readable value"},
                  {"units", "unit note"},
                  {"job_users", "jobs (or sluid:<id>) holding the HCA"},
                  {"nonjob_user_pids", "processes outside every job holding the HCA"},
                  {"attributed_job", "the sole user's job id, or null"},
                  {"suppression", "null, evidence_gap, nonjob_user, shared or unresolved"}},
      .format = Format::kFabric,
  });

  t.push_back(Topic{
      .name = "logs",
      .summary = "Recent lines of a Slurm daemon's log, filtered by an RE2 pattern.",
      .detail =
          "The last 5000 lines of the configured log of slurmctld (default), slurmdbd or "
          "slurmd, keeping the lines where `pattern` matches anywhere (RE2: linear time, no "
          "backreferences or lookaround; case-sensitive unless it starts with (?i)). The newest "
          "matching lines are kept when there are too many. Useful patterns: a job id "
          "(JobId=1008), a node name, \"error|fatal\", \"drain\", \"Kill task failed\", "
          "\"slurmdbd\" (accounting connection). `time` is the bracketed timestamp that starts "
          "a Slurm log line, empty for lines without one.",
      .source = Source::kDaemonLog,
      .argv = {"log"},
      .filters = {Filter{.name = "daemon",
                         .kind = Filter::Kind::kOperand,
                         .pattern = kDaemonPattern,
                         .grammar = kDaemonGrammar,
                         .example = "slurmctld",
                         .description = "whose log to read",
                         .default_value = "slurmctld"},
                  Filter{.name = "pattern",
                         .kind = Filter::Kind::kLocal,
                         .pattern = kLogPatternPattern,
                         .grammar = kLogPatternGrammar,
                         .example = "error|JobId=1008",
                         .description = "keep only lines this RE2 expression matches"}},
      .columns = {{"time", "timestamp of the line, e.g. 2026-11-30T13:14:22.123"},
                  {"message", "the rest of the line"}},
      .format = Format::kLog,
  });
  return t;
}

// Compiled filter grammars, by pattern text (full match).
const RE2& CompiledGrammar(const std::string& pattern) {
  static const std::map<std::string, std::unique_ptr<RE2>> compiled = [] {
    std::map<std::string, std::unique_ptr<RE2>> m;
    for (const Topic& topic : Topics()) {
      for (const Filter& f : topic.filters) {
        if (!m.count(f.pattern)) m.emplace(f.pattern, std::make_unique<RE2>(f.pattern));
      }
    }
    return m;
  }();
  return *compiled.at(pattern);
}

// Never null; an invalid argument with RE2's own words when the pattern does not compile.
base::Result<std::unique_ptr<RE2>> CompileLogPattern(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(4 << 20);
  auto re = std::make_unique<RE2>(pattern, options);
  if (!re->ok()) return base::Status::InvalidArgument(re->error());
  return re;
}

// A value for an error message: printable ASCII kept, the rest escaped, long values cut.
std::string Shown(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < value.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (value.size() > 40) out += "...";
  out += "'";
  return out;
}

std::string FilterNames(const Topic& topic) {
  std::string names;
  for (const Filter& f : topic.filters) names += (names.empty() ? "" : ", ") + f.name;
  return names;
}

// Replaces each byte that is not part of a well-formed UTF-8 sequence with U+FFFD.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      // A run of ASCII, most of any Slurm output, is copied at once.
      size_t end = i + 1;
      while (end < s.size() && static_cast<unsigned char>(s[end]) < 0x80) ++end;
      out.append(s.substr(i, end - i));
      i = end;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2;
      min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      min = 0x10000;
    }
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = len > 0 ? (c & (0x7f >> len)) : 0;
    for (size_t k = 1; ok && k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

// Calls fn(line_number, line) for each line of text, without its '\r'; line numbers count from 1.
// The one line loop: the row parsers stream through it, Lines() collects it.
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(++line_number, line);
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  ForEachLine(text, [&](size_t, std::string_view line) { lines.push_back(line); });
  return lines;
}

std::string_view Trim(std::string_view s) { return base::Trim(s, base::kBlanks); }

bool Blank(std::string_view s) { return Trim(s).empty(); }


// Collects lines that did not parse into one parse_error sentence.
class BadLines {
 public:
  void Add(size_t line_number, std::string_view line, const std::string& why) {
    if (count_++ == 0) {
      first_ = "line " + std::to_string(line_number) + " " + Shown(line) + " " + why;
    }
  }
  std::string Message() const {
    if (count_ == 0) return "";
    return std::to_string(count_) + (count_ == 1 ? " line" : " lines") +
           " did not parse and were skipped; first: " + first_;
  }

 private:
  size_t count_ = 0;
  std::string first_;
};

struct RowsResult {
  std::vector<Json> rows;
  std::string error;
};

// One record's fields by column index; nullopt where scontrol omitted the key.
using Fields = std::vector<std::optional<std::string_view>>;

// Calls fn(fields) for each line of '|' (or ',') separated fields; returns the parse error of the
// lines that did not parse.
template <typename Fn>
std::string ForEachDelimited(const Topic& topic, std::string_view text, char sep, Fn&& fn) {
  BadLines bad;
  const size_t n = topic.columns.size();
  Fields row(n);
  ForEachLine(text, [&](size_t line_number, std::string_view line) {
    if (Blank(line)) return;
    std::vector<std::string_view> fields = SplitFields(line, sep);
    if (fields.size() < n || (sep == ',' && fields.size() != n)) {
      bad.Add(line_number, line,
              "has " + std::to_string(fields.size()) + " fields, expected " + std::to_string(n));
      return;
    }
    for (size_t c = 0; c < n; ++c) {
      std::string_view value = fields[c];
      if (c == n - 1 && fields.size() > n) {
        // The last column is free text (a reason, a TRES list) that may itself hold the
        // separator: it takes the rest of the line.
        value = line.substr(fields[c].data() - line.data());
      }
      row[c] = Trim(value);
    }
    fn(row);
  });
  return bad.Message();
}

// True when `token` starts a new Key=Value pair: a key is a capitalised word that may hold
// ':' and '/' (AllocNode:Sid, CPUs/Task, ReqB:S:C:T). A value token with a lower-case start
// ("x=y" inside a comment) is a continuation of the previous value.
bool StartsPair(std::string_view token, std::string_view* key, std::string_view* value) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  if (token[0] < 'A' || token[0] > 'Z') return false;
  for (size_t i = 1; i < eq; ++i) {
    char c = token[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':' || c == '/';
    if (!ok) return false;
  }
  *key = token.substr(0, eq);
  *value = token.substr(eq + 1);
  return true;
}

// Splits one scontrol record into its pairs: spaces separate pairs only where the next token
// starts a new Key=; otherwise they belong to the value (Reason=(ReqNodeNotAvail, Unava...)).
std::vector<std::pair<std::string, std::string>> KeyValues(std::string_view record) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::string_view token : SplitFields(record, ' ')) {
    std::string_view key, value;
    if (StartsPair(token, &key, &value)) {
      pairs.emplace_back(std::string(key), std::string(value));
    } else if (!pairs.empty()) {
      pairs.back().second += ' ';
      pairs.back().second += token;
    }
  }
  for (auto& [key, value] : pairs) value = std::string(Trim(value));
  return pairs;
}

template <typename Fn>
std::string ForEachKeyValue(const Topic& topic, std::string_view text, Fn&& fn) {
  BadLines bad;
  static const RE2 kNoneInSystem(R"(No \w+ in the system)");
  const size_t n = topic.columns.size();
  Fields row(n);
  // A record starts on a line without leading blanks; indented lines continue it, so the
  // multi-line form of `scontrol show` parses the same as -o.
  auto emit = [&](size_t line_number, const std::string& record) {
    if (record.empty() || RE2::FullMatch(record, kNoneInSystem)) return;
    std::string_view first = SplitFields(record, ' ').front();
    std::string_view key, value;
    if (!StartsPair(first, &key, &value)) {
      bad.Add(line_number, record, "is not Key=Value pairs");
      return;
    }
    std::map<std::string, std::string> found;
    for (auto& [k, v] : KeyValues(record)) found.emplace(k, v);  // the first of a repeated key
    for (size_t c = 0; c < n; ++c) {
      auto it = found.find(topic.columns[c].name);
      row[c] = it == found.end() ? std::nullopt : std::optional<std::string_view>(it->second);
    }
    fn(row);
  };
  std::string record;
  size_t record_line = 0;
  ForEachLine(text, [&](size_t line_number, std::string_view line) {
    if (Blank(line)) return;
    if ((line[0] == ' ' || line[0] == '\t') && !record.empty()) {
      record += ' ';
      record += Trim(line);
    } else {
      emit(record_line, record);
      record = std::string(Trim(line));
      record_line = line_number;
    }
  });
  emit(record_line, record);
  return bad.Message();
}

// The number a field starts with ("4", "1-1" -> 1); 0 when none.
std::uint64_t LeadingNumber(std::string_view s) {
  std::uint64_t n = 0;
  for (size_t i = 0; i < s.size() && i < 18 && s[i] >= '0' && s[i] <= '9'; ++i) {
    n = n * 10 + static_cast<std::uint64_t>(s[i] - '0');
  }
  return n;
}

// Array tasks a squeue job id stands for: 1 for a job or one task (1008, 1008_3), the size of
// the index set of a pending array's record (1008_[5-1000%10] -> 996).
std::uint64_t ArrayTasks(std::string_view jobid) {
  size_t open = jobid.find("_[");
  if (open == std::string_view::npos) return 1;
  std::string_view set = jobid.substr(open + 2);
  set = set.substr(0, set.find_first_of("%]"));
  std::uint64_t tasks = 0;
  for (std::string_view part : SplitFields(set, ',')) {
    size_t dash = part.find('-');
    std::uint64_t lo = LeadingNumber(part);
    std::uint64_t hi = dash == std::string_view::npos ? lo : LeadingNumber(part.substr(dash + 1));
    std::string_view step = part.substr(std::min(part.size(), part.find(':') + 1));
    std::uint64_t by = part.find(':') == std::string_view::npos ? 1 : std::max<std::uint64_t>(1, LeadingNumber(step));
    if (hi >= lo) tasks += (hi - lo) / by + 1;
  }
  return std::max<std::uint64_t>(tasks, 1);
}

// GPUs in a gres string: "gpu:2", "gpu:a100:4(S:0-1)", "gpu:2,shard:8" -> the gpu counts summed.
std::uint64_t GresGpus(std::string_view gres) {
  std::uint64_t gpus = 0;
  size_t depth = 0, start = 0;
  for (size_t i = 0; i <= gres.size(); ++i) {
    char c = i < gres.size() ? gres[i] : ',';
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (c != ',' || depth > 0) continue;
    std::string_view item = gres.substr(start, i - start);
    start = i + 1;
    if (item.substr(0, 4) != "gpu:" && item != "gpu") continue;
    item = item.substr(0, item.find('('));
    size_t colon = item.rfind(':');
    std::string_view count = colon == std::string_view::npos ? "" : item.substr(colon + 1);
    gpus += count.empty() || count[0] < '0' || count[0] > '9' ? 1 : LeadingNumber(count);
  }
  return gpus;
}

// How a Pageable topic's groups are summed: integer columns added up, and for the nodes topic
// the distinct nodes (a node appears once per partition) with their CPUs and GPUs.
struct GroupMeasures {
  std::vector<std::pair<std::string, std::string>> integer_sums;  // (sum name, column)
  std::string array_tasks_column;  // squeue's jobid: "jobs" counts array tasks
  std::string node_column;         // nodes: distinct nodes, their hostlist, CPUs and GPUs
  std::string cpus_column;         // "allocated/idle/other/total": the total
  std::string gres_column;
};

GroupMeasures MeasuresOf(const Topic& topic) {
  if (topic.name == "queue") return {{{"nodes", "nodes"}}, "jobid", "", "", ""};
  if (topic.name == "accounting") return {{{"nnodes", "nnodes"}}, "", "", "", ""};
  if (topic.name == "jobs") return {{{"nodes", "NumNodes"}, {"cpus", "NumCPUs"}}, "", "", "", ""};
  if (topic.name == "partitions") {
    return {{{"nodes", "TotalNodes"}, {"cpus", "TotalCPUs"}}, "", "", "", ""};
  }
  if (topic.name == "reservations") return {{{"nodes", "NodeCnt"}, {"cores", "CoreCnt"}}, "", "", "", ""};
  if (topic.name == "nodes") return {{}, "", "node", "cpus", "gres"};
  return {};
}

size_t ColumnIndex(const Topic& topic, const std::string& name) {
  for (size_t i = 0; i < topic.columns.size(); ++i) {
    if (topic.columns[i].name == name) return i;
  }
  return topic.columns.size();
}

// A value as it is grouped: a queue row's reason is its code without parentheses, and a running
// job's node list groups as None (what squeue's %r prints for it); absent keys as "".
std::string GroupValue(const Topic& topic, const std::string& column,
                       const std::optional<std::string_view>& value) {
  if (!value) return "";
  std::string_view v = *value;
  if (topic.name == "queue" && column == "reason") {
    if (v.size() >= 2 && v.front() == '(' && v.back() == ')') return std::string(v.substr(1, v.size() - 2));
    return "None";
  }
  return std::string(v);
}

// Takes the rows of a Pageable topic one at a time: counts them, keeps the page asked for (from
// offset, within max_rows and max_bytes), and with group_by adds each into its group. Holds the
// rows kept and the groups, never the others.
class RowSink {
 public:
  RowSink(const Topic& topic, const Caps& caps, const ParseOptions& options)
      : topic_(topic), caps_(caps), options_(options), measures_(MeasuresOf(topic)) {
    for (const std::string& g : options.group_by) group_columns_.push_back(ColumnIndex(topic, g));
    for (const auto& [name, column] : measures_.integer_sums) {
      sum_columns_.push_back(ColumnIndex(topic, column));
    }
    tasks_column_ = ColumnIndex(topic, measures_.array_tasks_column);
    node_column_ = ColumnIndex(topic, measures_.node_column);
    cpus_column_ = ColumnIndex(topic, measures_.cpus_column);
    gres_column_ = ColumnIndex(topic, measures_.gres_column);
  }

  void Add(const Fields& row) {
    ++total_;
    if (!group_columns_.empty()) {
      Group(row);
      return;
    }
    if (total_ <= options_.offset || full_) return;
    Json object = Json::object();
    for (size_t c = 0; c < row.size(); ++c) {
      if (row[c]) object[topic_.columns[c].name] = std::string(*row[c]);
    }
    size_t size = object.dump().size() + (kept_.empty() ? 0 : 1);
    if (kept_.size() >= caps_.max_rows || bytes_ + size > caps_.max_bytes) {
      full_ = true;
      return;
    }
    bytes_ += size;
    kept_.push_back(std::move(object));
  }

  void Finish(Parsed* p) {
    p->total_rows = total_;
    p->offset = options_.offset;
    if (group_columns_.empty()) {
      if (options_.offset + kept_.size() < total_) p->truncated = true;
      p->rows = Json(std::move(kept_));
      return;
    }
    std::vector<std::pair<const std::vector<std::string>*, const Acc*>> order;
    for (const auto& [key, acc] : groups_) order.emplace_back(&key, &acc);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return a.second->count > b.second->count;
    });
    Json groups = Json::array();
    size_t bytes = 2;
    for (const auto& [key, acc] : order) {
      if (groups.size() >= caps_.max_rows) break;
      Json g = Json::object();
      for (size_t i = 0; i < key->size(); ++i) g[options_.group_by[i]] = (*key)[i];
      g["count"] = acc->count;
      if (tasks_column_ < topic_.columns.size()) g["jobs"] = acc->tasks;
      for (size_t i = 0; i < measures_.integer_sums.size(); ++i) {
        g[measures_.integer_sums[i].first] = acc->sums[i];
      }
      if (node_column_ < topic_.columns.size()) {
        std::vector<std::string> names(acc->nodes.begin(), acc->nodes.end());
        g["node_count"] = names.size();
        g["cpus"] = acc->cpus;
        g["gpus"] = acc->gpus;
        g["hostlist"] = CompressHostlist(names);
      }
      size_t size = g.dump().size() + 1;
      if (bytes + size > caps_.max_bytes) break;
      bytes += size;
      groups.push_back(std::move(g));
    }
    p->total_groups = groups_.size();
    if (groups.size() < groups_.size()) p->truncated = true;
    p->groups = std::move(groups);
  }

 private:
  struct Acc {
    std::size_t count = 0;
    std::uint64_t tasks = 0;
    std::vector<std::uint64_t> sums;
    std::set<std::string> nodes;
    std::uint64_t cpus = 0, gpus = 0;
  };

  std::optional<std::string_view> At(const Fields& row, size_t c) const {
    return c < row.size() ? row[c] : std::nullopt;
  }

  void Group(const Fields& row) {
    key_.clear();
    for (size_t i = 0; i < group_columns_.size(); ++i) {
      key_.push_back(GroupValue(topic_, options_.group_by[i], At(row, group_columns_[i])));
    }
    auto it = groups_.find(key_);
    if (it == groups_.end()) {
      it = groups_.emplace(key_, Acc{}).first;
      it->second.sums.assign(sum_columns_.size(), 0);
    }
    Acc& acc = it->second;
    ++acc.count;
    if (auto id = At(row, tasks_column_)) acc.tasks += ArrayTasks(*id);
    for (size_t i = 0; i < sum_columns_.size(); ++i) {
      if (auto v = At(row, sum_columns_[i])) acc.sums[i] += LeadingNumber(*v);
    }
    if (auto node = At(row, node_column_)) {
      // A node is counted once per group, however many partitions list it.
      if (acc.nodes.insert(std::string(*node)).second) {
        if (auto cpus = At(row, cpus_column_)) {
          size_t slash = cpus->rfind('/');
          acc.cpus += LeadingNumber(slash == std::string_view::npos ? *cpus : cpus->substr(slash + 1));
        }
        if (auto gres = At(row, gres_column_)) acc.gpus += GresGpus(*gres);
      }
    }
  }

  const Topic& topic_;
  const Caps& caps_;
  const ParseOptions& options_;
  const GroupMeasures measures_;
  std::vector<size_t> group_columns_, sum_columns_;
  size_t tasks_column_, node_column_, cpus_column_, gres_column_;
  std::size_t total_ = 0;
  std::vector<Json> kept_;
  size_t bytes_ = 2;  // the array's brackets
  bool full_ = false;
  std::vector<std::string> key_;
  std::map<std::vector<std::string>, Acc> groups_;
};

// "Server thread count" -> "server_thread_count"; "Total backfilled jobs (since last slurm
// start)" -> "total_backfilled_jobs_since_last_slurm_start".
std::string Slug(std::string_view label) {
  std::string out;
  for (char c : label) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      out += c;
    } else if (c >= 'A' && c <= 'Z') {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

RowsResult ParseDiagnostics(std::string_view text) {
  RowsResult r;
  // Section headings of sdiag (22.05 to 25.11) and the prefix of their figures; std::nullopt:
  // a section whose lines are not "label: number" figures (RPC tables, latency).
  struct Section {
    const char* heading;
    std::optional<std::string> prefix;
  };
  static const std::vector<Section> kSections = {
      {"Main schedule statistics", "main_"},
      {"Main scheduler exit", "main_exit_"},
      {"Backfilling stats", "backfill_"},
      {"Backfill exit", "backfill_exit_"},
      {"Latency for", std::nullopt},
      {"Remote Procedure Call statistics", std::nullopt},
      {"Pending RPC statistics", std::nullopt},
  };
  static const RE2 kFigure(R"(\s*([A-Za-z][^:]*?)\s*:\s*(-?[0-9]+(?:\.[0-9]+)?)\s*)");
  std::optional<std::string> prefix = "";
  std::map<std::string, bool> seen;
  for (std::string_view line : Lines(text)) {
    for (const Section& s : kSections) {
      if (line.substr(0, std::string_view(s.heading).size()) == s.heading) prefix = s.prefix;
    }
    if (!prefix) continue;
    std::string label, number;
    if (!RE2::FullMatch(line, kFigure, &label, &number)) continue;
    std::string figure = *prefix + Slug(label);
    if (seen[figure]) continue;
    seen[figure] = true;
    Json value;
    if (number.find('.') == std::string::npos && number.size() <= 18) {
      value = std::strtoll(number.c_str(), nullptr, 10);
    } else {
      value = std::strtod(number.c_str(), nullptr);
    }
    r.rows.push_back(Json{{"figure", figure}, {"value", value}});
  }
  return r;
}

RowsResult ParseLog(std::string_view text, const RE2* pattern) {
  RowsResult r;
  static const RE2 kStamped(R"(\[([^\]]{1,40})\] ?(.*))");
  for (std::string_view line : Lines(text)) {
    if (Blank(line)) continue;
    if (pattern && !RE2::PartialMatch(line, *pattern)) continue;
    std::string time, message;
    if (!RE2::FullMatch(line, kStamped, &time, &message)) message = std::string(line);
    r.rows.push_back(Json{{"time", time}, {"message", message}});
  }
  return r;
}

// Keeps what fits in max_rows and max_bytes: the first rows, or the last when `newest_last`.
void CapRows(std::vector<Json> rows, const Caps& caps, bool newest_last, Parsed* p) {
  p->total_rows = rows.size();
  if (newest_last) std::reverse(rows.begin(), rows.end());
  std::vector<Json> kept;
  size_t bytes = 2;  // the array's brackets
  for (Json& row : rows) {
    if (kept.size() >= caps.max_rows) break;
    size_t size = row.dump().size() + (kept.empty() ? 0 : 1);
    if (bytes + size > caps.max_bytes) break;
    bytes += size;
    kept.push_back(std::move(row));
  }
  if (newest_last) std::reverse(kept.begin(), kept.end());
  if (kept.size() < p->total_rows) p->truncated = true;
  p->rows = Json(std::move(kept));
}

// Cuts text to max_bytes, at a line break when one is in the second half, and never inside a
// UTF-8 sequence.
void CapText(std::string text, const Caps& caps, Parsed* p) {
  p->total_bytes = text.size();
  if (text.size() > caps.max_bytes) {
    size_t cut = caps.max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    size_t nl = cut == 0 ? std::string::npos : text.rfind('\n', cut - 1);
    if (nl != std::string::npos && nl + 1 > cut / 2) cut = nl + 1;
    text.resize(cut);
    p->truncated = true;
  }
  p->text = std::move(text);
}

}  // namespace

const std::vector<Topic>& Topics() {
  static const std::vector<Topic> topics = BuildTopics();
  return topics;
}

const Topic* FindTopic(std::string_view name) {
  for (const Topic& t : Topics()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

base::Result<std::vector<std::string>> BuildArgv(const Topic& topic, const Filters& filters) {
  for (const auto& given : filters) {
    const std::string& name = given.first;  // clang 14 cannot capture a structured binding
    bool known = std::any_of(topic.filters.begin(), topic.filters.end(),
                             [&](const Filter& f) { return f.name == name; });
    if (known) continue;
    if (topic.filters.empty()) {
      return base::Status::InvalidArgument("topic " + topic.name + " takes no filters (got " +
                                           Shown(name) + ")");
    }
    return base::Status::InvalidArgument("topic " + topic.name + " has no filter " + Shown(name) +
                                         "; it accepts: " + FilterNames(topic));
  }
  std::vector<std::string> argv = topic.argv;
  for (const Filter& f : topic.filters) {
    auto it = filters.find(f.name);
    std::string value = it != filters.end() ? it->second : f.default_value;
    if (it == filters.end() && value.empty()) continue;
    if (!RE2::FullMatch(value, CompiledGrammar(f.pattern))) {
      return base::Status::InvalidArgument("filter " + f.name + " of topic " + topic.name +
                                           " refused " + Shown(value) + ": it must be " +
                                           f.grammar);
    }
    switch (f.kind) {
      case Filter::Kind::kOption:
        argv.push_back(f.flag);
        argv.push_back(value);
        break;
      case Filter::Kind::kOperand:
        argv.push_back(value);
        break;
      case Filter::Kind::kLocal: {
        if (auto re = CompileLogPattern(value); !re.ok()) {
          return base::Status::InvalidArgument(
              "filter " + f.name + " of topic " + topic.name + " refused " + Shown(value) +
              ": it does not compile as RE2 (" + re.status().message() + ")");
        }
        break;
      }
    }
  }
  return argv;
}

std::vector<std::string> DefaultArgv(const Topic& topic) {
  base::Result<std::vector<std::string>> argv = BuildArgv(topic, {});
  return argv.ok() ? std::move(argv).value() : std::vector<std::string>();
}

bool Pageable(const Topic& topic) {
  return topic.format == Format::kDelimited || topic.format == Format::kCsv ||
         topic.format == Format::kKeyValue;
}

base::Status CheckGroupBy(const Topic& topic, const std::vector<std::string>& group_by) {
  std::string columns;
  for (const Column& c : topic.columns) columns += (columns.empty() ? "" : ", ") + c.name;
  if (!Pageable(topic)) {
    return base::Status::InvalidArgument("topic " + topic.name +
                                         " cannot be grouped (group_by is for topics of rows: "
                                         "queue, nodes, accounting, priority, fairshare, jobs, "
                                         "partitions, reservations, gpu)");
  }
  if (group_by.empty() || group_by.size() > 2 ||
      (group_by.size() == 2 && group_by[0] == group_by[1])) {
    return base::Status::InvalidArgument("group_by takes one or two distinct columns of " +
                                         topic.name + ": " + columns);
  }
  for (const std::string& g : group_by) {
    if (ColumnIndex(topic, g) == topic.columns.size()) {
      return base::Status::InvalidArgument("topic " + topic.name + " has no column " + Shown(g) +
                                           " to group by; its columns: " + columns);
    }
  }
  return base::Status();
}

Parsed Parse(const Topic& topic, const std::string& stdout_text, const Caps& caps,
             const Filters& filters, const ParseOptions& options) {
  Parsed p;
  std::string_view whole = stdout_text;
  if (options.output_cut) {
    // The executor kept the first bytes only: the last line is a piece of a row, not a row.
    p.output_cut = true;
    p.output_kept_bytes = stdout_text.size();
    p.output_bytes = options.output_bytes;
    size_t nl = whole.rfind('\n');
    whole = nl == std::string_view::npos ? std::string_view() : whole.substr(0, nl + 1);
  }
  const std::string text = ValidUtf8(whole);
  RowsResult rows;
  bool newest_last = false;
  if (Pageable(topic)) {
    RowSink sink(topic, caps, options);
    auto add = [&sink](const Fields& row) { sink.Add(row); };
    p.parse_error = topic.format == Format::kKeyValue
                        ? ForEachKeyValue(topic, text, add)
                        : ForEachDelimited(topic, text, topic.format == Format::kCsv ? ',' : '|', add);
    sink.Finish(&p);
    if (p.output_cut) p.truncated = true;
    if (p.truncated) {
      p.hint = topic.filters.empty() ? "this topic takes no filters"
                                     : "narrow with filters: " + FilterNames(topic);
    }
    return p;
  }
  switch (topic.format) {
    case Format::kDelimited:
    case Format::kCsv:
    case Format::kKeyValue:
      break;  // Pageable
    case Format::kFabric: {
      Json report = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!report.is_object() || !report.contains("ports") || !report["ports"].is_array()) {
        rows.error = "not a fabric report";
        break;
      }
      for (const Json& port : report["ports"]) rows.rows.push_back(port);
      break;
    }
    case Format::kGpuIdle: {
      Json report = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!report.is_object() || !report.contains("jobs") || !report["jobs"].is_array()) {
        rows.error = "not a gpu_idle report";
        break;
      }
      for (const Json& job : report["jobs"]) rows.rows.push_back(job);
      break;
    }
    case Format::kGpuHealth: {
      // Rows only; the exit code, findings and summary need the whole evidence (tools.cc).
      Evidence e;
      e.outcome = Evidence::Outcome::kOk;
      e.exit_code = 0;
      e.out = text;
      GpuHealthReport report = AssessGpuHealth(e);
      for (const Json& row : report.rows) rows.rows.push_back(row);
      if (!report.evidence) rows.error = report.failure;
      for (const Json& m : report.report["malformed_rows"]) {
        if (rows.error.empty()) rows.error = "malformed row: " + m["why"].get<std::string>();
      }
      break;
    }
    case Format::kDiagnostics:
      rows = ParseDiagnostics(text);
      CapText(text, caps, &p);
      break;
    case Format::kText:
      CapText(text, caps, &p);
      break;
    case Format::kLog: {
      newest_last = true;
      std::unique_ptr<RE2> re;
      auto it = filters.find("pattern");
      if (it != filters.end() && !it->second.empty()) {
        auto compiled = CompileLogPattern(it->second);
        if (!compiled.ok()) {
          p.parse_error = "pattern " + Shown(it->second) + " does not compile as RE2: " +
                          compiled.status().message();
          return p;
        }
        re = std::move(compiled).value();
      }
      rows = ParseLog(text, re.get());
      break;
    }
  }
  p.parse_error = rows.error;
  if (!topic.columns.empty()) CapRows(std::move(rows.rows), caps, newest_last, &p);
  if (p.output_cut) p.truncated = true;
  if (p.truncated) {
    p.hint = topic.filters.empty() ? "this topic takes no filters"
                                   : "narrow with filters: " + FilterNames(topic);
  }
  return p;
}

std::string TruncationNote(const Parsed& parsed) {
  if (!parsed.truncated) return "";
  std::vector<std::string> parts;
  const std::string of = parsed.output_cut ? " of at least " : " of ";
  if (parsed.output_cut) {
    parts.push_back("output cut at " + std::to_string(parsed.output_kept_bytes) + " of " +
                    (parsed.output_bytes ? std::to_string(parsed.output_bytes)
                                         : "an unknown number of") +
                    " bytes by the read's cap: the counts are lower bounds (at least " +
                    std::to_string(parsed.total_rows) + " rows)");
  }
  if (parsed.groups.is_array()) {
    if (parsed.groups.size() < parsed.total_groups) {
      parts.push_back(std::to_string(parsed.groups.size()) + " of " +
                      std::to_string(parsed.total_groups) + " groups shown");
    }
  } else if (parsed.offset + parsed.rows.size() < parsed.total_rows || parsed.offset > 0) {
    if (parsed.offset > 0) {
      parts.push_back("rows " + std::to_string(parsed.offset + 1) + "-" +
                      std::to_string(parsed.offset + parsed.rows.size()) + of +
                      std::to_string(parsed.total_rows) + " shown");
    } else {
      parts.push_back(std::to_string(parsed.rows.size()) + of +
                      std::to_string(parsed.total_rows) + " rows shown");
    }
  }
  if (parsed.text.size() < parsed.total_bytes) {
    parts.push_back(std::to_string(parsed.text.size()) + " of " +
                    std::to_string(parsed.total_bytes) + " bytes shown");
  }
  if (!parsed.hint.empty()) parts.push_back(parsed.hint);
  std::string note = "[truncated: ";
  for (size_t i = 0; i < parts.size(); ++i) note += (i ? "; " : "") + parts[i];
  return note + "]";
}

Json RowSchema(const Topic& topic) {
  if (topic.columns.empty()) return nullptr;
  if (topic.format == Format::kGpuHealth) return GpuHealthRowSchema();
  if (topic.format == Format::kFabric) return FabricReportSchema()["properties"]["ports"]["items"];
  if (topic.format == Format::kGpuIdle) return GpuIdleJobSchema();
  Json properties = Json::object();
  Json required = Json::array();
  for (const Column& c : topic.columns) {
    properties[c.name] = {{"type", "string"}, {"description", c.description}};
    required.push_back(c.name);
  }
  if (topic.format == Format::kDiagnostics) properties["value"]["type"] = "number";
  Json schema = {{"type", "object"}, {"properties", properties}, {"additionalProperties", false}};
  // scontrol omits keys that a Slurm version lacks, so key=value rows require none.
  if (topic.format != Format::kKeyValue) schema["required"] = required;
  return schema;
}

Json GroupSchema(const Topic& topic) {
  if (!Pageable(topic)) return nullptr;
  const GroupMeasures m = MeasuresOf(topic);
  Json properties = {{"count", {{"type", "integer"}, {"description", "rows in the group"}}}};
  for (const Column& c : topic.columns) {
    properties[c.name] = {{"type", "string"}, {"description", "group value: " + c.description}};
  }
  if (!m.array_tasks_column.empty()) {
    properties["jobs"] = {{"type", "integer"},
                          {"description", "jobs the rows stand for: a pending array's row counts "
                                          "each of its tasks"}};
  }
  for (const auto& [name, column] : m.integer_sums) {
    properties[name] = {{"type", "integer"}, {"description", "sum of " + column}};
  }
  if (!m.node_column.empty()) {
    properties["node_count"] = {{"type", "integer"},
                                {"description", "distinct nodes (a node is listed once per "
                                                "partition)"}};
    properties["cpus"] = {{"type", "integer"}, {"description", "CPUs of those nodes"}};
    properties["gpus"] = {{"type", "integer"}, {"description", "GPUs of those nodes (gres gpu)"}};
    properties["hostlist"] = {{"type", "string"},
                              {"description", "those nodes in Slurm's hostlist notation"}};
  }
  return {{"type", "object"}, {"properties", properties}, {"required", {"count"}}};
}

Json DescribeTopic(const Topic& topic) {
  Json filters = Json::array();
  for (const Filter& f : topic.filters) {
    Json j = {{"name", f.name},
              {"kind", f.kind == Filter::Kind::kOption    ? "option"
                       : f.kind == Filter::Kind::kOperand ? "operand"
                                                          : "applied by the server"},
              {"grammar", f.grammar},
              {"example", f.example},
              {"description", f.description}};
    if (!f.flag.empty()) j["flag"] = f.flag;
    if (!f.default_value.empty()) j["default"] = f.default_value;
    filters.push_back(std::move(j));
  }
  Json columns = Json::array();
  for (const Column& c : topic.columns) {
    columns.push_back({{"name", c.name}, {"description", c.description}});
  }
  Json d = {{"name", topic.name},
            {"summary", topic.summary},
            {"detail", topic.detail},
            {"source", topic.source == Source::kCommand     ? "command"
                       : topic.source == Source::kDaemonLog ? "daemon log"
                       : topic.source == Source::kSamples   ? "server samples"
                                                            : "node files"},
            {"argv", topic.argv},
            {"filters", filters},
            {"columns", columns}};
  // Telemetry topics answer with a report beside their rows (slurm_query's `report`).
  if (topic.format == Format::kGpuHealth) d["report_schema"] = GpuHealthReportSchema();
  if (topic.format == Format::kFabric) d["report_schema"] = FabricReportSchema();
  if (topic.format == Format::kGpuIdle) d["report_schema"] = GpuIdleReportSchema();
  // Topics of rows page (slurm_query's cursor) and group (group_by).
  if (Pageable(topic)) d["group_schema"] = GroupSchema(topic);
  return d;
}

}  // namespace slurm_rca::mcp

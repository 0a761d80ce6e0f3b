// gpu_idle: is a Slurm GPU allocation wasted? The idle-allocation judgement of
// shared/reference/telemetry-seeds.md §1 over GPU samples this server took itself, returned as a
// classification only: nothing here drains, cancels or writes anything.
//
// Three parts, all pure but the store's lock:
//   - readers turn one read into an Observation of a node: ParseNvidiaSmiSample (the 7-column
//     device query and the compute-apps query, GpuIdleDeviceArgv / GpuIdleProcessArgv) and
//     ParseDcgmPage (a dcgm-exporter /metrics page, Prometheus text format);
//   - GpuSampleStore keeps a bounded ring of Observations per node, failed reads included;
//   - JudgeGpuIdle(jobs, observations, now, options) gives each running GPU job a verdict.
//
//   GpuSampleStore store(512);
//   store.Add(ParseNvidiaSmiSample("gpu01", now, device_evidence, process_evidence));
//   std::vector<RunningJob> jobs = ParseRunningJobs(squeue_evidence.out, &rejected);
//   Json report = JudgeGpuIdle(jobs, store.Snapshot(), clock(), GpuIdleOptions{});
//   // report.jobs[]: {job_id, status: judged | no_gpus | in_warmup | shared_node | ...,
//   //                 evidence{first, last, observations, largest_gap_seconds, ...},
//   //                 signature: idle | hung | starved | unknown | null (busy), ...}
//
// Rules (reference §1.3-1.7):
//   - A value that is empty, "[...]", N/A, not a number, NaN/Inf or out of range is unknown,
//     never 0. A failed, timed-out or refused read is an Observation with ok = false: it is never
//     a sample, it only leaves a hole. A device row with the wrong column count or a bad index
//     fails the whole read (dropping a row could drop the busy GPU).
//   - Peak, not mean: one observation at or above util_pct in the window clears the job.
//   - Only samples taken at or after start + warmup count; jobs in warmup are not judged.
//   - A hole between observations longer than max_sample_gap, or a newest observation older than
//     it, is a monitoring outage: history before it is not used (the window must be covered again).
//   - Coverage for every node of the job: every sample judgeable (util and memory known, not MIG),
//     at least min_samples observations, the same GPU count in each, the window covered, no more
//     GPUs allocated than seen. A node that hosts more than one GPU job is skipped (no PID -> job
//     mapping). A DCGM sample's hpc_job labels that do not name the job stop the judgement.
//   - idle needs positive evidence (zero PIDs known, power known and low); DCGM has no process
//     data, so DCGM evidence is never idle or hung.
//
// Thread-safety: the functions are pure; GpuSampleStore may be used from several threads.
#ifndef SLURM_RCA_MCP_TELEMETRY_GPU_IDLE_H_
#define SLURM_RCA_MCP_TELEMETRY_GPU_IDLE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/evidence/evidence.h"

namespace slurm_rca::mcp {

// Thresholds and timing (seconds); the seed's defaults.
struct GpuIdleOptions {
  double util_pct = 15;             // peak utilisation at or above this anywhere: busy
  double mem_held_fraction = 0.05;  // mean framebuffer fraction at or above this: memory held
  double idle_power_watts = 60;     // idle needs mean power below this
  double hung_util_pct = 1.0;       // hung: held, PIDs seen, peak below this
  std::int64_t window = 20 * 60;
  std::int64_t warmup = 15 * 60;
  int min_samples = 8;
  std::int64_t max_sample_gap = 3 * 60;
  std::int64_t interval = 2 * 60;  // the sampler's; only checked against the others
  std::int64_t drain_after = 60 * 60;  // the stage the seed would reach (classification only)
};

// OK when the options are coherent, else an invalid argument saying why not (interval <
// max_sample_gap < window, min_samples * interval <= window, util_pct in (0,100],
// mem_held_fraction in [0,1], warmup and idle_power_watts >= 0).
base::Status ValidateGpuIdleOptions(const GpuIdleOptions& o);

// One GPU in one observation.
struct GpuSample {
  int index = -1;
  std::string uuid;
  std::optional<double> util_pct;
  std::optional<double> mem_used_mib;
  std::optional<double> mem_total_mib;
  std::optional<double> power_w;
  std::optional<int> pids;  // compute processes; nullopt when unknown (always for DCGM)
  bool mig = false;
  std::vector<std::string> hpc_jobs;  // DCGM hpc_job labels; empty: none
  std::vector<std::string> unknown;   // "util: [N/A]" ... why a value is unknown
  bool Judgeable() const { return util_pct && mem_used_mib && mem_total_mib && !mig; }
};

// One read of one node's GPUs.
struct Observation {
  std::string node;
  std::int64_t time = 0;  // unix seconds
  std::string source;     // "nvidia-smi" or "dcgm"
  bool ok = false;        // false: the read failed; gpus is empty and never evidence
  std::string failure;    // why, when !ok
  std::string note;       // e.g. "process query failed: PIDs unknown"
  std::vector<GpuSample> gpus;
};

// {"nvidia-smi", "--query-gpu=index,uuid,utilization.gpu,memory.used,memory.total,power.draw,
//  mig.mode.current", "--format=csv,noheader,nounits"}.
std::vector<std::string> GpuIdleDeviceArgv();
// {"nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader,nounits"}.
std::vector<std::string> GpuIdleProcessArgv();

// The device read and the process read of one node at `time`. A failed device read is a failed
// observation; a failed process read leaves every sample's PIDs unknown.
Observation ParseNvidiaSmiSample(const std::string& node, std::int64_t time,
                                 const Evidence& device, const Evidence& processes);

// One dcgm-exporter page scraped at `scrape_time`. max_age > 0: a series timestamp more than
// max_age from the scrape makes that value unknown. Any exposition error, or a `gpu` label that
// is not an integer >= 0, fails the whole page.
Observation ParseDcgmPage(const std::string& node, std::int64_t scrape_time,
                          const std::string& page, std::int64_t max_age = 120);

// A failed read of a node (no evidence).
Observation FailedObservation(const std::string& node, std::int64_t time, std::string source,
                              std::string why);

// Bounded per-node rings of observations. Thread-safe.
class GpuSampleStore {
 public:
  explicit GpuSampleStore(std::size_t per_node = 512) : per_node_(per_node ? per_node : 1) {}
  void Add(Observation o);
  std::map<std::string, std::vector<Observation>> Snapshot() const;

 private:
  const std::size_t per_node_;
  mutable std::mutex mu_;
  std::map<std::string, std::deque<Observation>> nodes_;
};

// A running job as squeue lists it.
struct RunningJob {
  std::string job_id;                // 1008, 1008_3, 1008+1
  std::optional<std::int64_t> start; // unix seconds; nullopt when unparseable
  std::vector<std::string> nodes;    // expanded
  int gpus = 0;                      // from tres-alloc gres/gpu
  std::string name;
};

// The argv of the job read: squeue --noheader --states=RUNNING --array
// --Format=JobID:|,StartTime:|,NodeList:|,tres-alloc:|,Name: (start times in UTC: the
// executor's environment has TZ=UTC).
std::vector<std::string> RunningJobsArgv();
// Parses its output. Rejected lines (bad field count, bad job id, unparseable node list,
// duplicated job ids) are described in *rejected and left out.
std::vector<RunningJob> ParseRunningJobs(const std::string& out, std::vector<std::string>* rejected);
// "gpu[01-02].cluster,rack[1-2]-n1" -> names; nullopt when unparseable or over 100000 names;
// "(null)" and "None assigned" -> empty.
std::optional<std::vector<std::string>> ExpandHostlist(const std::string& list);
// gres/gpu=N wins; else the sum of typed gres/gpu:<type>=N; else 0.
int GpuCountFromTres(const std::string& tres);

// The judgement: {jobs: [...], nodes: [...], thresholds: {...}}, valid against
// GpuIdleReportSchema()["properties"] of the same names. Pure: `now` is the only clock.
nlohmann::json JudgeGpuIdle(const std::vector<RunningJob>& jobs,
                            const std::map<std::string, std::vector<Observation>>& observations,
                            std::int64_t now, const GpuIdleOptions& options = {});

// "2026-11-30T23:15:00Z".
std::string UnixToIso(std::int64_t t);

nlohmann::json GpuIdleReportSchema();
nlohmann::json GpuIdleJobSchema();

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TELEMETRY_GPU_IDLE_H_

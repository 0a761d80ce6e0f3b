#include "scenarios/live/profile.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "scenarios/live/rng.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kExtraAccounts = {"bio", "physics", "chem", "astro", "climate"};
const std::vector<std::string> kUserNames = {"alice", "bob",   "carol", "dave", "erin",
                                             "frank", "grace", "heidi", "ivan", "judy",
                                             "oscar", "peggy", "trent", "wendy"};
const std::vector<std::string> kMaintenance = {"DIMM replacement", "BMC firmware update",
                                               "PSU swap", "fan replacement", "BIOS update"};
const std::vector<std::string> kGpuNames = {"train_resnet", "train_bert", "finetune_llama",
                                            "train_unet",   "train_gnn",  "infer_batch"};
const std::vector<std::string> kBigGpuNames = {"train_llm_2n", "pretrain_vit_2n",
                                               "train_diffusion_2n", "ddp_bench_2n"};
const std::vector<std::string> kLongCpuNames = {"vasp_relax", "gromacs_md", "lammps_run",
                                                "cp2k_opt", "namd_equil"};
const std::vector<std::string> kShortNames = {"align_reads",   "blast_search", "fastqc",
                                              "bcftools_call", "make_plots",   "preprocess",
                                              "compile_mesh",  "sort_bams"};
const std::vector<std::string> kArrayNames = {"sweep_params", "render_frames", "align_batch",
                                              "mc_samples"};
const std::vector<std::string> kFailNames = {"featurize", "convert_hdf5", "qc_check", "parse_logs"};
const std::vector<std::string> kCancelNames = {"test_run", "debug_job", "interactive_wrap"};
const std::vector<std::string> kHeldNames = {"big_sweep", "resubmit_later", "wait_for_data"};
const std::vector<std::string> kBeginNames = {"nightly_backup_check", "weekly_report",
                                              "nightly_align", "monthly_usage"};
const std::vector<std::string> kDependencyNames = {"postprocess", "collect_results",
                                                   "merge_outputs"};

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// --- submitting --------------------------------------------------------------------------------

std::string JobCommand(const BusyJob& j) {
  std::string sleep = j.seconds > 0 ? "sleep " + std::to_string(j.seconds) : "true";
  if (j.exit_code != 0) return sleep + "; exit " + std::to_string(j.exit_code);
  return sleep;
}

}  // namespace

Status CheckOpenToOthers(const std::string& file) {
  for (fs::path p = fs::path(file).parent_path(); !p.empty() && p != p.root_path();
       p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      std::ostringstream mode;
      mode << std::oct << (st.st_mode & 07777);
      return Status::Error(p.string() + " is not searchable by others (mode 0" + mode.str() +
                           "); chmod o+x " + p.string());
    }
  }
  return Status();
}

std::string_view KindName(BusyJobKind kind) {
  switch (kind) {
    case BusyJobKind::kShortCpu:
      return "short-cpu";
    case BusyJobKind::kLongCpu:
      return "long-cpu";
    case BusyJobKind::kGpu:
      return "gpu";
    case BusyJobKind::kArray:
      return "array";
    case BusyJobKind::kDependency:
      return "dependency";
    case BusyJobKind::kHeld:
      return "held";
    case BusyJobKind::kBeginTime:
      return "begin-time";
    case BusyJobKind::kFails:
      return "fails";
    case BusyJobKind::kTimesOut:
      return "times-out";
    case BusyJobKind::kCancelled:
      return "cancelled";
  }
  return "?";
}

const std::vector<BusyJobKind>& AllBusyJobKinds() {
  static const std::vector<BusyJobKind> kinds = {BusyJobKind::kShortCpu,   BusyJobKind::kLongCpu,
                                                 BusyJobKind::kGpu,        BusyJobKind::kArray,
                                                 BusyJobKind::kDependency, BusyJobKind::kHeld,
                                                 BusyJobKind::kBeginTime,  BusyJobKind::kFails,
                                                 BusyJobKind::kTimesOut,   BusyJobKind::kCancelled};
  return kinds;
}

std::string BusyTrace::ToText() const {
  std::ostringstream o;
  o << "seed " << seed << "\n";
  for (const std::string& a : accounts) o << "account " << a << "\n";
  for (const BusyUser& u : users) {
    o << "user " << u.name << " default=" << u.default_account
      << " accounts=" << Join(u.accounts, ",") << "\n";
  }
  o << "drain " << maintenance_node << " reason=" << maintenance_reason << "\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const BusyJob& j = jobs[i];
    o << "job " << i << " kind=" << KindName(j.kind) << " offset=" << j.submit_offset_s
      << " user=" << j.user << " account=" << j.account << " partition=" << j.partition
      << " name=" << j.name << " nodes=" << j.nodes << " gpus=" << j.gpus_per_node
      << " nodelist=" << j.nodelist << " time=" << j.time_limit_min << " seconds=" << j.seconds
      << " exit=" << j.exit_code << " nice=" << j.nice << " after="
      << (j.depends_on < 0 ? "" : j.dependency_type + ":" + std::to_string(j.depends_on))
      << " array=" << j.array << " hold=" << j.hold << " cancel=" << j.cancel
      << " settle=" << j.settle << " shows=" << j.shows << "\n";
  }
  return o.str();
}

namespace {

// What GenerateBusyTrace's steps use to draw a background job: its owner, account, name and nice
// drawn, the rest left to the step.
using DrawJob = std::function<BusyJob(BusyJobKind, const std::vector<std::string>&)>;

// The extra accounts and the users, each with a default account (every extra account has a user).
void AddAccountsAndUsers(Rng& rng, BusyTrace& t) {
  std::vector<std::string> extra = kExtraAccounts;
  rng.Shuffle(extra);
  extra.resize(static_cast<size_t>(rng.Between(2, 3)));
  t.accounts = extra;
  std::vector<std::string> all_accounts = {"research", "ops"};
  all_accounts.insert(all_accounts.end(), extra.begin(), extra.end());

  std::vector<std::string> names = kUserNames;
  rng.Shuffle(names);
  const int user_count = rng.Between(4, 6);
  for (int i = 0; i < user_count; ++i) {
    BusyUser u;
    u.name = "rcau-" + names[static_cast<size_t>(i)];
    // Every extra account has a user of its own; the rest are anywhere.
    u.default_account =
        i < static_cast<int>(extra.size()) ? extra[static_cast<size_t>(i)] : rng.Pick(all_accounts);
    u.accounts = {u.default_account};
    if (rng.Chance(40)) {
      const std::string& second = rng.Pick(all_accounts);
      if (second != u.default_account) u.accounts.push_back(second);
    }
    t.users.push_back(u);
  }
}

// Running for the horizon: a GPU job on node1, and on node3 a CPU job that times out and its
// restart. Submitted first, so that they take their pinned nodes before the history runs.
// Returns the GPU job's index, which a pending job depends on.
int AddRunningJobs(const DrawJob& job, const TraceOptions& options, int horizon_min, BusyTrace& t) {
  BusyJob gpu = job(BusyJobKind::kGpu, kGpuNames);
  gpu.partition = "gpu";
  gpu.nodelist = "node1";
  gpu.gpus_per_node = 1;
  gpu.seconds = options.horizon_s;
  gpu.time_limit_min = horizon_min;
  gpu.submit_offset_s = -600;
  gpu.shows = "RUNNING";
  t.jobs.push_back(gpu);
  const int gpu_index = 0;

  BusyJob timeout = job(BusyJobKind::kTimesOut, kLongCpuNames);
  timeout.nodelist = "node3";
  timeout.seconds = 600;
  timeout.time_limit_min = 1;
  timeout.submit_offset_s = -590;
  timeout.shows = "RUNNING, then TIMEOUT";
  t.jobs.push_back(timeout);
  const int timeout_index = 1;

  BusyJob restart = timeout;
  restart.kind = BusyJobKind::kLongCpu;
  restart.name = timeout.name + "_restart";
  restart.seconds = options.horizon_s;
  restart.time_limit_min = horizon_min;
  restart.submit_offset_s = -580;
  restart.depends_on = timeout_index;
  restart.dependency_type = "afternotok";
  restart.shows = "PENDING Dependency, then RUNNING";
  t.jobs.push_back(restart);
  return gpu_index;
}

// History: finishes before hand-over, in a shuffled order.
void AddHistory(Rng& rng, const DrawJob& job, BusyTrace& t) {
  std::vector<BusyJob> history;
  for (int i = rng.Between(3, 5); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kShortCpu, kShortNames);
    j.seconds = rng.Between(1, 3);
    j.time_limit_min = rng.Between(5, 15);
    j.shows = "COMPLETED";
    history.push_back(j);
  }
  for (int i = rng.Between(1, 2); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kGpu, kGpuNames);
    j.partition = "gpu";
    j.gpus_per_node = 1;
    j.seconds = rng.Between(1, 2);
    j.time_limit_min = rng.Between(10, 30);
    j.shows = "COMPLETED";
    history.push_back(j);
  }
  {
    BusyJob j = job(BusyJobKind::kArray, kArrayNames);
    j.array = "1-" + std::to_string(rng.Between(3, 4));
    j.seconds = rng.Between(1, 2);
    j.time_limit_min = 10;
    j.shows = "COMPLETED";
    history.push_back(j);
  }
  for (int i = rng.Between(1, 2); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kFails, kFailNames);
    j.seconds = rng.Between(0, 2);
    j.exit_code = rng.Between(1, 3);
    j.time_limit_min = 5;
    j.shows = "FAILED";
    history.push_back(j);
  }
  for (int i = rng.Between(1, 2); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kCancelled, kCancelNames);
    j.seconds = 600;
    j.time_limit_min = 30;
    j.cancel = true;
    j.shows = "CANCELLED";
    history.push_back(j);
  }
  rng.Shuffle(history);
  for (size_t i = 0; i < history.size(); ++i) {
    history[i].submit_offset_s = -300 + 10 * static_cast<int>(i);
    history[i].settle = true;
    t.jobs.push_back(history[i]);
  }
}

// Pending at hand-over, for ordinary reasons.
void AddPendingJobs(Rng& rng, const DrawJob& job, const TraceOptions& options, int nice_base,
                    int gpu_index, BusyTrace& t) {
  BusyJob big = job(BusyJobKind::kGpu, kBigGpuNames);
  big.partition = "gpu";
  big.nodes = 2;
  big.gpus_per_node = 2;
  big.seconds = rng.Between(1800, 3600);
  big.time_limit_min = big.seconds / 60 + 30;
  big.nice = nice_base;
  big.shows = "PENDING Resources";
  t.jobs.push_back(big);
  BusyJob behind = job(BusyJobKind::kGpu, kBigGpuNames);
  behind.partition = "gpu";
  behind.nodes = 2;
  behind.gpus_per_node = 2;
  behind.seconds = rng.Between(1800, 3600);
  behind.time_limit_min = behind.seconds / 60 + 30;
  behind.nice = nice_base + 300 + rng.Between(0, 200);
  behind.shows = "PENDING Priority";
  t.jobs.push_back(behind);
  BusyJob after = job(BusyJobKind::kDependency, kDependencyNames);
  after.depends_on = gpu_index;
  after.dependency_type = "afterok";
  after.seconds = rng.Between(60, 300);
  after.time_limit_min = 30;
  after.shows = "PENDING Dependency";
  t.jobs.push_back(after);
  for (int i = rng.Between(1, 2); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kHeld, kHeldNames);
    j.hold = true;
    j.seconds = rng.Between(300, 900);
    j.time_limit_min = 60;
    j.shows = "PENDING JobHeldUser";
    t.jobs.push_back(j);
  }
  for (int i = rng.Between(1, 2); i > 0; --i) {
    BusyJob j = job(BusyJobKind::kBeginTime, kBeginNames);
    j.submit_offset_s = options.horizon_s + 3600 * rng.Between(1, 6);
    j.seconds = rng.Between(60, 600);
    j.time_limit_min = rng.Between(30, 120);
    j.shows = "PENDING BeginTime";
    t.jobs.push_back(j);
  }
}

// The stream: released by Slurm over the first stream_s seconds.
void AddStream(Rng& rng, const DrawJob& job, const TraceOptions& options, BusyTrace& t) {
  for (int at = rng.Between(45, 150); at <= options.stream_s; at += rng.Between(45, 150)) {
    const int roll = rng.Between(1, 100);
    BusyJob j;
    if (roll <= 60) {
      j = job(BusyJobKind::kShortCpu, kShortNames);
      j.seconds = rng.Between(2, 15);
      j.shows = "PENDING BeginTime, then COMPLETED";
    } else if (roll <= 85) {
      j = job(BusyJobKind::kFails, kFailNames);
      j.seconds = rng.Between(1, 5);
      j.exit_code = rng.Between(1, 2);
      j.shows = "PENDING BeginTime, then FAILED";
    } else {
      j = job(BusyJobKind::kArray, kArrayNames);
      j.array = "1-3%1";
      j.seconds = rng.Between(2, 5);
      j.shows = "PENDING BeginTime, then JobArrayTaskLimit and COMPLETED";
    }
    j.submit_offset_s = at;
    j.time_limit_min = rng.Between(5, 10);
    t.jobs.push_back(j);
  }
}

}  // namespace

// The steps draw from one generator, in this order: moving a step or adding a draw changes the
// trace of every seed.
BusyTrace GenerateBusyTrace(std::uint64_t seed, const TraceOptions& options) {
  Rng rng(seed);
  BusyTrace t;
  t.seed = seed;
  AddAccountsAndUsers(rng, t);

  t.maintenance_node = "node4";
  // Two draws, in this order, as statements: the operands of one + chain are not sequenced, and
  // gcc (which recorded the busy bundles) drew the ticket first, clang the reason.
  const int ticket = rng.Between(1000, 9999);
  const std::string& why = rng.Pick(kMaintenance);
  t.maintenance_reason = "maint: " + why + ", ticket OPS-" + std::to_string(ticket);

  const int nice_base = 11000 + rng.Between(0, 300);
  const int horizon_min = options.horizon_s / 60 + 10;
  auto job = [&](BusyJobKind kind, const std::vector<std::string>& pool) {
    BusyJob j;
    j.kind = kind;
    const BusyUser& u = rng.Pick(t.users);
    j.user = u.name;
    j.account = rng.Chance(75) ? u.default_account : rng.Pick(u.accounts);
    j.name = rng.Pick(pool);
    j.nice = nice_base + rng.Between(0, 200);
    return j;
  };

  const int gpu_index = AddRunningJobs(job, options, horizon_min, t);
  AddHistory(rng, job, t);
  AddPendingJobs(rng, job, options, nice_base, gpu_index, t);
  AddStream(rng, job, options, t);
  return t;
}

std::vector<std::string> SbatchArgv(const BusyJob& j, const std::string& group,
                                    const std::string& workdir, const std::string& dependency_id) {
  std::vector<std::string> argv = {"sbatch",
                                   "--parsable",
                                   "--uid=" + j.user,
                                   "--gid=" + group,
                                   "--account=" + j.account,
                                   "--partition=" + j.partition,
                                   "--job-name=" + j.name,
                                   "--chdir=" + workdir,
                                   "--output=/dev/null",
                                   "--nodes=" + std::to_string(j.nodes),
                                   "--time=" + std::to_string(j.time_limit_min),
                                   "--nice=" + std::to_string(j.nice)};
  if (j.gpus_per_node > 0) argv.push_back("--gres=gpu:" + std::to_string(j.gpus_per_node));
  if (!j.nodelist.empty()) argv.push_back("--nodelist=" + j.nodelist);
  if (!j.array.empty()) argv.push_back("--array=" + j.array);
  if (j.hold) argv.push_back("--hold");
  if (j.submit_offset_s > 0) argv.push_back("--begin=now+" + std::to_string(j.submit_offset_s));
  if (j.depends_on >= 0) argv.push_back("--dependency=" + j.dependency_type + ":" + dependency_id);
  argv.insert(argv.end(), {"--wrap", JobCommand(j)});
  return argv;
}

}  // namespace slurm_rca::live

#include "scenarios/live/large_profile.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "scenarios/live/rng.h"

namespace slurm_rca::live {

using base::Status;

namespace {

const std::vector<std::string> kAccounts = {"bio", "physics", "chem", "astro", "climate"};
const std::vector<std::string> kUserNames = {"alice", "bob",   "carol", "dave", "erin",
                                             "frank", "grace", "heidi", "ivan", "judy",
                                             "oscar", "peggy", "trent", "wendy"};
const std::vector<std::string> kHistoryNames = {"qc_chunk", "hash_files", "index_tiles",
                                                "checksum", "param_scan", "mc_sample"};
const std::vector<std::string> kGpuNames = {"train_resnet", "train_bert",  "finetune_llama",
                                            "train_unet",   "infer_batch", "train_gnn"};
const std::vector<std::string> kMpiNames = {"wrf_forecast", "gromacs_md", "lammps_run",
                                            "openfoam_les", "cp2k_md",    "nek5000"};
const std::vector<std::string> kCpuNames = {"align_reads", "blast_search", "bcftools_call",
                                            "vasp_relax",  "preprocess",   "sort_bams",
                                            "make_plots"};
const std::vector<std::string> kArrayNames = {"sweep_params", "render_frames", "align_batch",
                                              "mc_samples",   "bootstrap",     "tile_images"};

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string HostRange(int first, int last) {
  if (first == last) return "node" + std::to_string(first);
  return "node[" + std::to_string(first) + "-" + std::to_string(last) + "]";
}

const char* PhaseName(LargePhase p) {
  switch (p) {
    case LargePhase::kHistory:
      return "history";
    case LargePhase::kRunning:
      return "running";
    case LargePhase::kPending:
      return "pending";
  }
  return "?";
}

// Draws the plan's jobs: each step adds entries, in a fixed order, from one generator.
class Planner {
 public:
  Planner(Rng& rng, LargeTrace& t, int horizon_s) : rng_(rng), t_(t), horizon_s_(horizon_s) {
    for (const BusyUser& u : t.users) {
      if (u.default_account != t.limited_account) free_users_.push_back(&u);
      if (u.default_account == t.limited_account) capped_users_.push_back(&u);
    }
  }

  // x at 1,024 nodes, scaled to the trace's nodes (at least 1).
  int Scaled(int x) const { return std::max(1, (x * t_.nodes + 512) / 1024); }
  int HorizonMin() const { return horizon_s_ / 60 + 10; }

  // A job owned by a user outside the capped account, with one of its accounts.
  LargeJob Job(LargePhase phase, const std::vector<std::string>& names) {
    LargeJob j;
    j.phase = phase;
    const BusyUser& u = *free_users_[static_cast<size_t>(
        rng_.Between(0, static_cast<int>(free_users_.size()) - 1))];
    j.user = u.name;
    j.account = rng_.Chance(75) ? u.default_account : rng_.Pick(u.accounts);
    j.name = rng_.Pick(names);
    return j;
  }
  LargeJob CappedJob(LargePhase phase, const std::vector<std::string>& names) {
    LargeJob j = Job(phase, names);
    const BusyUser& u = *capped_users_[static_cast<size_t>(
        rng_.Between(0, static_cast<int>(capped_users_.size()) - 1))];
    j.user = u.name;
    j.account = t_.limited_account;
    return j;
  }

  // `total` copies of what make() draws, in entries of 1..max_copies copies each.
  void Spread(int total, int max_copies, const std::function<LargeJob()>& make) {
    while (total > 0) {
      LargeJob j = make();
      j.copies = std::min(total, rng_.Between(1, max_copies));
      total -= j.copies;
      t_.jobs.push_back(j);
    }
  }

  // `total` array tasks of what make() draws, in arrays of lo..hi tasks.
  void Arrays(int total, int lo, int hi, const std::function<LargeJob()>& make) {
    while (total > 0) {
      LargeJob j = make();
      j.array = std::min(total, rng_.Between(lo, hi));
      total -= j.array;
      t_.jobs.push_back(j);
    }
  }

  Rng& rng() { return rng_; }
  LargeTrace& trace() { return t_; }

 private:
  Rng& rng_;
  LargeTrace& t_;
  int horizon_s_;
  std::vector<const BusyUser*> free_users_;
  std::vector<const BusyUser*> capped_users_;
};

void AddPartitions(LargeTrace& t) {
  const int n = t.nodes, g = t.gpu_nodes, c = n - g;
  t.partitions = {{"gpu", HostRange(1, g), "2-00:00:00", false},
                  {"cpu", HostRange(g + 1, n), "2-00:00:00", true},
                  {"long", HostRange(g + 1, g + c / 2), "7-00:00:00", false},
                  {"debug", HostRange(n - n / 64 + 1, n), "00:30:00", false}};
}

// Ten users, two in each account; the capped account's users belong to it alone.
void AddAccountsAndUsers(Rng& rng, LargeTrace& t) {
  std::vector<std::string> accounts = kAccounts;
  rng.Shuffle(accounts);
  t.accounts = accounts;
  t.limited_account = accounts.front();
  t.reservation_account = accounts[1];
  std::vector<std::string> names = kUserNames;
  rng.Shuffle(names);
  for (int i = 0; i < 10; ++i) {
    BusyUser u;
    u.name = "rcau-" + names[static_cast<size_t>(i)];
    u.default_account = accounts[static_cast<size_t>(i / 2)];
    u.accounts = {u.default_account};
    if (u.default_account != t.limited_account && rng.Chance(40)) {
      std::string second = rng.Pick(accounts);
      if (second == t.limited_account) second = "research";
      if (second != u.default_account) u.accounts.push_back(second);
    }
    t.users.push_back(u);
  }
}

void AddHistory(Planner& p, int history_tasks) {
  // 50,000 tasks at 1,024 nodes, in 50 arrays of 1,000 (scaled): one in ten exits 1 (FAILED).
  const int size = history_tasks < 0 ? p.Scaled(1000) : std::max(1, history_tasks / 50);
  for (int i = 0; i < 50; ++i) {
    LargeJob j = p.Job(LargePhase::kHistory, kHistoryNames);
    j.array = size;
    j.array_limit = 6;
    j.time_limit_min = 5;
    j.exit_code = p.rng().Chance(10) ? 1 : 0;
    j.shows = j.exit_code ? "FAILED" : "COMPLETED";
    p.trace().jobs.push_back(j);
  }
}

// Fills every CPU of the cluster with jobs that run for the horizon. Returns the index of the
// first MPI job (pending jobs depend on it).
int AddRunning(Planner& p) {
  LargeTrace& t = p.trace();
  Rng& rng = p.rng();
  const int g = t.gpu_nodes, c = t.nodes - g;
  auto running = [&](const std::vector<std::string>& names, const std::string& partition) {
    LargeJob j = p.Job(LargePhase::kRunning, names);
    j.partition = partition;
    j.seconds = p.HorizonMin() * 60 - 600;
    j.time_limit_min = p.HorizonMin();
    j.shows = "RUNNING";
    return j;
  };
  const int gpu_multi = std::max(1, g / 32);
  p.Spread(gpu_multi, 2, [&] {
    LargeJob j = running(kGpuNames, "gpu");
    j.nodes = 4;
    j.exclusive = true;
    j.gpus_per_node = 2;
    return j;
  });
  p.Spread(g - 4 * gpu_multi, 16, [&] {
    LargeJob j = running(kGpuNames, "gpu");
    j.exclusive = true;
    j.gpus_per_node = 2;
    return j;
  });
  const int mpi = c / 16;
  const int first_mpi = static_cast<int>(t.jobs.size());
  p.Spread(mpi, 8, [&] {
    LargeJob j = running(kMpiNames, "cpu");
    j.nodes = 8;
    j.exclusive = true;
    return j;
  });
  // The scavenger user and the capped account, exactly at their limits.
  LargeJob scav = running(kCpuNames, "cpu");
  scav.user = t.scavenger_user;
  for (const BusyUser& u : t.users) {
    if (u.name == scav.user) scav.account = u.default_account;
  }
  scav.qos = "scavenger";
  scav.copies = t.scavenger_max_jobs;
  t.jobs.push_back(scav);
  LargeJob capped = p.CappedJob(LargePhase::kRunning, kCpuNames);
  capped.seconds = scav.seconds;
  capped.time_limit_min = scav.time_limit_min;
  capped.shows = "RUNNING";
  capped.copies = t.assoc_grp_jobs;
  t.jobs.push_back(capped);
  // The rest: one-CPU jobs, a quarter single, three quarters in arrays.
  const int rest = (c - 8 * mpi) * 2 - t.scavenger_max_jobs - t.assoc_grp_jobs;
  const int singles = rest / 4;
  p.Spread(singles, 32, [&] { return running(kCpuNames, "cpu"); });
  p.Arrays(rest - singles, 16, 64, [&] { return running(kArrayNames, "cpu"); });
  (void)rng;
  return first_mpi;
}

void AddPending(Planner& p, int first_mpi, int horizon_s) {
  LargeTrace& t = p.trace();
  Rng& rng = p.rng();
  auto pending = [&](const std::vector<std::string>& names, const std::string& partition,
                     const std::string& shows) {
    LargeJob j = p.Job(LargePhase::kPending, names);
    j.partition = partition;
    j.seconds = rng.Between(300, 3600);
    j.time_limit_min = j.seconds / 60 + 10;
    j.nice = rng.Between(0, 500);
    j.shows = shows;
    return j;
  };
  const std::string ordinary = "PENDING Priority or Resources";
  // 20,000 array tasks at 1,024 nodes, in 40 arrays.
  const int array_size = p.Scaled(500);
  for (int i = 0; i < 40; ++i) {
    LargeJob j = pending(kArrayNames, rng.Chance(70) ? "cpu" : "long", ordinary);
    j.array = array_size;
    t.jobs.push_back(j);
  }
  p.Spread(p.Scaled(600), 25, [&] {
    LargeJob j = pending(kCpuNames, rng.Chance(70) ? "cpu" : "long", ordinary);
    if (rng.Chance(20)) j.qos = "high";
    return j;
  });
  p.Spread(p.Scaled(40), 4, [&] {
    LargeJob j = pending(kMpiNames, "cpu", ordinary);
    j.nodes = 8 * rng.Between(1, 4);
    j.exclusive = true;
    return j;
  });
  p.Spread(p.Scaled(200), 10, [&] {
    LargeJob j = pending(kGpuNames, "gpu", ordinary);
    j.gpus_per_node = rng.Between(1, 2);
    return j;
  });
  p.Spread(p.Scaled(20), 5, [&] {
    LargeJob j = pending(kCpuNames, "debug", ordinary);
    j.seconds = rng.Between(60, 900);
    j.time_limit_min = 20;
    return j;
  });
  LargeJob scav = pending(kCpuNames, "cpu", "PENDING QOSMaxJobsPerUserLimit");
  scav.user = t.scavenger_user;
  for (const BusyUser& u : t.users) {
    if (u.name == scav.user) scav.account = u.default_account;
  }
  scav.qos = "scavenger";
  scav.copies = p.Scaled(40);
  t.jobs.push_back(scav);
  LargeJob capped = p.CappedJob(LargePhase::kPending, kCpuNames);
  capped.seconds = rng.Between(300, 3600);
  capped.time_limit_min = capped.seconds / 60 + 10;
  capped.copies = p.Scaled(40);
  capped.shows = "PENDING AssocGrpJobsLimit";
  t.jobs.push_back(capped);
  LargeJob resv = pending(kMpiNames, "cpu", "PENDING Reservation");
  for (const BusyUser& u : t.users) {
    if (u.default_account == t.reservation_account) resv.user = u.name;
  }
  resv.account = t.reservation_account;
  resv.reservation = t.reservation;
  resv.copies = p.Scaled(10);
  t.jobs.push_back(resv);
  p.Spread(p.Scaled(20), 5, [&] {
    LargeJob j = pending(kCpuNames, "cpu", "PENDING Dependency");
    j.depends_on = first_mpi;
    return j;
  });
  p.Spread(p.Scaled(10), 3, [&] {
    LargeJob j = pending(kArrayNames, "cpu", "PENDING JobHeldUser");
    j.hold = true;
    return j;
  });
  p.Spread(p.Scaled(10), 3, [&] {
    LargeJob j = pending(kCpuNames, "cpu", "PENDING BeginTime");
    j.begin_s = horizon_s + 3600 * rng.Between(1, 12);
    return j;
  });
}

}  // namespace

long LargeTrace::Tasks(LargePhase phase) const {
  long n = 0;
  for (const LargeJob& j : jobs) {
    if (j.phase == phase) n += j.Tasks();
  }
  return n;
}

std::string LargeTrace::ToText() const {
  std::ostringstream o;
  o << "seed " << seed << "\nnodes " << nodes << " gpu_nodes=" << gpu_nodes << "\n";
  for (const LargePartition& p : partitions) {
    o << "partition " << p.name << " nodes=" << p.nodes << " max_time=" << p.max_time
      << " default=" << p.is_default << "\n";
  }
  for (const std::string& a : accounts) o << "account " << a << "\n";
  for (const BusyUser& u : users) {
    o << "user " << u.name << " default=" << u.default_account
      << " accounts=" << Join(u.accounts, ",") << "\n";
  }
  for (const LargeQos& q : qos) o << "qos " << q.name << " " << Join(q.settings, " ") << "\n";
  o << "limit account=" << limited_account << " GrpJobs=" << assoc_grp_jobs << "\n";
  o << "limit qos=scavenger user=" << scavenger_user << " MaxJobsPerUser=" << scavenger_max_jobs
    << "\n";
  o << "reservation " << reservation << " nodes=" << reservation_nodes
    << " account=" << reservation_account << "\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const LargeJob& j = jobs[i];
    o << "job " << i << " phase=" << PhaseName(j.phase) << " copies=" << j.copies
      << " array=" << j.array << "%" << j.array_limit << " user=" << j.user << " account=" << j.account
      << " partition=" << j.partition << " qos=" << j.qos << " name=" << j.name
      << " nodes=" << j.nodes << " exclusive=" << j.exclusive << " gpus=" << j.gpus_per_node
      << " seconds=" << j.seconds << " exit=" << j.exit_code << " time=" << j.time_limit_min
      << " nice=" << j.nice << " hold=" << j.hold << " begin=" << j.begin_s
      << " reservation=" << j.reservation << " after=" << j.depends_on << " shows=" << j.shows
      << "\n";
  }
  return o.str();
}

Status CheckLargeNodes(int nodes) {
  if (nodes < kLargeMinNodes || nodes > kLargeMaxNodes || nodes % 64 != 0) {
    return Status::Error("--nodes " + std::to_string(nodes) +
                         ": the large profile takes a multiple of 64 between " +
                         std::to_string(kLargeMinNodes) + " and " + std::to_string(kLargeMaxNodes));
  }
  return {};
}

// The steps draw from one generator, in this order: moving a step or adding a draw changes the
// trace of every seed.
LargeTrace GenerateLargeTrace(std::uint64_t seed, const LargeOptions& options) {
  Rng rng(seed);
  LargeTrace t;
  t.seed = seed;
  t.nodes = options.nodes;
  t.gpu_nodes = options.nodes / 8;
  AddPartitions(t);
  AddAccountsAndUsers(rng, t);
  Planner p(rng, t, options.horizon_s);
  t.scavenger_max_jobs = p.Scaled(8);
  t.assoc_grp_jobs = p.Scaled(32);
  t.qos = {{"high", {"Priority=1000"}},
           {"scavenger", {"Priority=0", "MaxJobsPerUser=" + std::to_string(t.scavenger_max_jobs)}}};
  for (const BusyUser& u : t.users) {
    if (u.default_account != t.limited_account && t.scavenger_user.empty() && rng.Chance(50)) {
      t.scavenger_user = u.name;
    }
  }
  if (t.scavenger_user.empty()) t.scavenger_user = t.users.back().name;
  t.reservation = "training_" + std::to_string(rng.Between(100, 999));
  const int first_cpu = t.gpu_nodes + 1;
  t.reservation_nodes = HostRange(first_cpu, first_cpu + p.Scaled(8) - 1);
  AddHistory(p, options.history_tasks);
  const int first_mpi = AddRunning(p);
  AddPending(p, first_mpi, options.horizon_s);
  return t;
}

std::string LargeSlurmConf(const LargeTrace& t) {
  std::ostringstream o;
  for (const LargePartition& p : t.partitions) {
    o << "PartitionName=" << p.name << " Nodes=" << p.nodes << " MaxTime=" << p.max_time
      << (p.is_default ? " Default=YES" : "") << " State=UP\n";
  }
  // A site's queue: the defaults (10,000 jobs, arrays of 1,001) are below the profile's.
  o << "MaxJobCount=200000\nMaxArraySize=100001\n";
  // defer: no scheduling attempt per submission (thousands of them); the main scheduler looks
  // at the whole queue of records (arrays are one record until their tasks start), the backfill
  // once a minute.
  o << "SchedulerParameters=defer,default_queue_depth=3000,partition_job_depth=0,"
       "bf_interval=60,bf_max_job_test=3000,bf_continue,max_rpc_cnt=150\n";
  return o.str();
}

std::vector<std::string> LargeSbatchArgv(const LargeJob& j, const std::string& group,
                                         const std::string& workdir,
                                         const std::string& dependency_id) {
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
                                   "--time=" + std::to_string(j.time_limit_min)};
  if (j.nice > 0) argv.push_back("--nice=" + std::to_string(j.nice));
  if (!j.qos.empty()) argv.push_back("--qos=" + j.qos);
  if (j.exclusive) argv.push_back("--exclusive");
  if (j.gpus_per_node > 0) argv.push_back("--gres=gpu:" + std::to_string(j.gpus_per_node));
  if (j.array > 0) {
    argv.push_back("--array=0-" + std::to_string(j.array - 1) +
                   (j.array_limit > 0 ? "%" + std::to_string(j.array_limit) : ""));
  }
  if (j.hold) argv.push_back("--hold");
  if (j.begin_s > 0) argv.push_back("--begin=now+" + std::to_string(j.begin_s));
  if (!j.reservation.empty()) argv.push_back("--reservation=" + j.reservation);
  if (j.depends_on >= 0) argv.push_back("--dependency=afterok:" + dependency_id);
  std::string command = j.seconds > 0 ? "sleep " + std::to_string(j.seconds) : "true";
  if (j.exit_code != 0) command += "; exit " + std::to_string(j.exit_code);
  argv.insert(argv.end(), {"--wrap", command});
  return argv;
}

}  // namespace slurm_rca::live

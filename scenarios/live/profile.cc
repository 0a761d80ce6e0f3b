#include "scenarios/live/profile.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/file.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// splitmix64 (Steele, Lea, Flood 2014): a tiny generator whose output is fixed by its definition,
// so that a seed gives the same trace with every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // An integer in [lo, hi], each equally likely (rejection of the last partial span).
  int Between(int lo, int hi) {
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - (max % span + 1) % span;
    std::uint64_t x = Next();
    while (x > limit) x = Next();
    return lo + static_cast<int>(x % span);
  }

  bool Chance(int percent) { return Between(1, 100) <= percent; }

  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Between(0, static_cast<int>(v.size()) - 1))];
  }

  // Fisher-Yates, with Between().
  template <typename T>
  void Shuffle(std::vector<T>& v) {
    for (int i = static_cast<int>(v.size()) - 1; i > 0; --i) {
      std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(Between(0, i))]);
    }
  }

 private:
  std::uint64_t state_;
};

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


std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool SayNothingNew(const ToolResult& r) {
  for (const std::string* s : {&r.out, &r.err}) {
    if (s->find("Nothing new added") != std::string::npos ||
        s->find("already exists") != std::string::npos) {
      return true;
    }
  }
  return false;
}

// --- the registry of users ---------------------------------------------------------------------
//
// REGISTRY/USER lists the lab directories holding USER, one a line; the file's existence means a
// lab created the user. REGISTRY/.lock (flock) serialises every change, across processes.

class RegistryLock {
 public:
  explicit RegistryLock(const std::string& registry) {
    std::error_code ec;
    fs::create_directories(registry, ec);
    fd_ = ::open((registry + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~RegistryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

bool UserExists(const std::string& user) { return ::getpwnam(user.c_str()) != nullptr; }

bool WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const std::string& l : lines) out << l << "\n";
    if (!out) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

// A holder is live while its lab directory has its lab.conf (a lab removed without Down is not).
bool LiveHolder(const std::string& dir) { return fs::exists(dir + "/lab.conf"); }

// Takes `user` for lab_dir: "held" (created now or by another lab, recorded), "borrowed" (it was
// there before and is not ours: used as it is, never removed), or an error.
Status AcquireUser(const Lab& lab, const std::string& user, std::string* how) {
  const std::string& registry = lab.options().user_registry;
  RegistryLock lock(registry);
  if (!lock.ok()) return Status::Error("cannot lock the user registry " + registry);
  const std::string record = registry + "/" + user;
  const std::string self = lab.options().dir;
  bool recorded_now = false;
  if (fs::exists(record)) {
    std::vector<std::string> holders = Lines(base::ReadFile(record).value_or(""));
    if (std::find(holders.begin(), holders.end(), self) == holders.end()) holders.push_back(self);
    if (!WriteLines(record, holders)) return Status::Error("cannot write " + record);
    *how = "held";
    if (UserExists(user)) return {};
    // Recorded but gone (removed by hand): create it again below.
  } else if (UserExists(user)) {
    *how = "borrowed";
    return {};
  } else if (!WriteLines(record, {self})) {
    return Status::Error("cannot write " + record);
  } else {
    recorded_now = true;
  }
  *how = "held";
  std::string useradd = lab.Program("useradd");
  if (useradd.empty()) return Status::Error("useradd is not installed (Debian package passwd)");
  ToolResult r = RunTool({useradd, "--system", "--no-create-home", "--user-group", "--shell",
                          "/usr/sbin/nologin", user},
                         {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"},
                         std::chrono::seconds(30));
  if (!r.ok() && !UserExists(user)) {
    std::error_code ec;
    if (recorded_now) fs::remove(record, ec);
    *how = "";
    return Status::Error("useradd " + user + ": " + r.Summary());
  }
  return {};
}

Status ReleaseUser(const Lab& lab, const std::string& user, std::ostream& progress) {
  const std::string& registry = lab.options().user_registry;
  RegistryLock lock(registry);
  if (!lock.ok()) return Status::Error("cannot lock the user registry " + registry);
  const std::string record = registry + "/" + user;
  if (!fs::exists(record)) return {};
  std::vector<std::string> remaining;
  for (const std::string& h : Lines(base::ReadFile(record).value_or(""))) {
    if (h != lab.options().dir && LiveHolder(h)) remaining.push_back(h);
  }
  if (!remaining.empty()) {
    if (!WriteLines(record, remaining)) return Status::Error("cannot write " + record);
    return {};
  }
  if (UserExists(user)) {
    std::string userdel = lab.Program("userdel");
    ToolResult r =
        userdel.empty()
            ? ToolResult{}
            : RunTool({userdel, user}, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"},
                      std::chrono::seconds(30));
    if (!r.ok() && UserExists(user)) {
      // Kept in the registry with no holder: the next lab to release it tries again.
      WriteLines(record, {});
      return Status::Error("userdel " + user + ": " +
                           (userdel.empty() ? "not installed" : r.Summary()));
    }
  }
  std::error_code ec;
  fs::remove(record, ec);
  progress << "  removed user " << user << "\n";
  return {};
}

// --- submitting --------------------------------------------------------------------------------

std::string JobCommand(const BusyJob& j) {
  std::string sleep = j.seconds > 0 ? "sleep " + std::to_string(j.seconds) : "true";
  if (j.exit_code != 0) return sleep + "; exit " + std::to_string(j.exit_code);
  return sleep;
}

std::string PrimaryGroup(const std::string& user) {
  const passwd* pw = ::getpwnam(user.c_str());
  if (pw == nullptr) return user;
  const group* gr = ::getgrgid(pw->pw_gid);
  return gr == nullptr ? std::to_string(pw->pw_gid) : std::string(gr->gr_name);
}

// The job ids (array jobs by their array id) slurmctld still has pending, running or completing.
std::optional<std::set<std::string>> ActiveJobs(const Lab& lab) {
  ToolResult r = lab.Client({"squeue", "-h", "-o", "%F %T"}, std::chrono::seconds(10));
  if (!r.ok()) return std::nullopt;
  std::set<std::string> ids;
  std::istringstream in(r.out);
  for (std::string id, state; in >> id >> state;) ids.insert(id);
  return ids;
}

std::string StateOf(const Lab& lab, const std::string& id) {
  ToolResult r = lab.Client({"squeue", "-h", "-j", id, "-o", "%T"}, std::chrono::seconds(10));
  std::string s = r.out.substr(0, r.out.find('\n'));
  return s;
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

BusyTrace GenerateBusyTrace(std::uint64_t seed, const TraceOptions& options) {
  Rng rng(seed);
  BusyTrace t;
  t.seed = seed;

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

  t.maintenance_node = "node4";
  t.maintenance_reason = "maint: " + rng.Pick(kMaintenance) + ", ticket OPS-" +
                         std::to_string(rng.Between(1000, 9999));

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

  // Running for the horizon: a GPU job on node1, and on node3 a CPU job that times out and its
  // restart. Submitted first, so that they take their pinned nodes before the history runs.
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

  // History: finishes before hand-over, in a shuffled order.
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

  // Pending at hand-over, for ordinary reasons.
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

  // The stream: released by Slurm over the first stream_s seconds.
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

Status ApplyBusyProfile(Lab& lab, const BusyTrace& trace, std::ostream& progress) {
  auto start = Clock::now();
  std::vector<std::string> nodes = lab.NodeNames();
  if (nodes.size() < 4) return Status::Error("the busy profile needs at least 4 nodes");
  if (trace.maintenance_node == "node1" ||
      std::find(nodes.begin(), nodes.end(), trace.maintenance_node) == nodes.end()) {
    return Status::Error("the maintenance node " + trace.maintenance_node + " cannot be drained");
  }
  std::error_code ec;
  const std::string workdir = lab.Path("work/users");
  fs::create_directories(workdir, ec);
  fs::permissions(workdir, fs::perms(01777), ec);
  if (ec) return Status::Error("cannot make " + workdir + " writable by everyone: " + ec.message());
  // The users' jobs start in workdir and their clients read etc/slurm.conf and the munge socket
  // in run/: the directories above them must be searchable by others (a lab made by mkdtemp is
  // 0700). Search only, not read.
  for (const char* d : {"", "work", "etc", "run"}) {
    fs::permissions(lab.Path(d), fs::perms::others_exec | fs::perms::group_exec,
                    fs::perm_options::add, ec);
    if (ec) return Status::Error("cannot make " + lab.Path(d) + " searchable: " + ec.message());
  }
  {
    std::ofstream out(lab.Path("busy.trace"), std::ios::trunc);
    out << trace.ToText();
  }

  // The users run the lab's clients: a Slurm release built into a cache under a private home
  // (/root is 0700 on Debian) is not theirs to execute. Said here, by path, rather than as a
  // failed squeue below.
  if (std::string squeue = lab.Program("squeue"); !squeue.empty()) {
    if (Status open = CheckOpenToOthers(squeue); !open.ok()) {
      return Status::Error("the busy profile runs jobs as other users, who cannot reach " + squeue +
                           ": " + open.message() +
                           "; or build the release into a cache they can reach "
                           "(scripts/build-slurm.sh --cache DIR)");
    }
  }
  // Unix users, each recorded in DIR/run/busy.users before it is taken, so that Down releases
  // what an interrupted Up took.
  for (const BusyUser& u : trace.users) {
    std::string how;
    Status s = AcquireUser(lab, u.name, &how);
    if (!how.empty())
      std::ofstream(lab.Path("run/busy.users"), std::ios::app) << how << " " << u.name << "\n";
    if (!s.ok()) return s;
  }
  // What the users' jobs and clients need, checked as one of them: a writable working directory
  // and a controller they can reach (slurm.conf and the munge socket readable by them).
  if (std::string runuser = lab.Program("runuser"); !runuser.empty() && !trace.users.empty()) {
    const std::string& user = trace.users.front().name;
    std::vector<std::string> env = lab.ClientEnv();
    ToolResult w = RunTool({runuser, "-u", user, "--", "/usr/bin/test", "-w", workdir}, env,
                           std::chrono::seconds(10));
    if (!w.ok())
      return Status::Error(user + " cannot write " + workdir + ": their jobs would fail");
    ToolResult q = RunTool({runuser, "-u", user, "--", "/usr/bin/env", env.back(),
                            lab.Program("squeue"), "-h", "-o", "%i"},
                           env, std::chrono::seconds(15));
    if (!q.ok()) {
      return Status::Error(user + " cannot reach the controller (slurm.conf or the munge socket " +
                           "not usable by other users?): " + q.Summary());
    }
  }
  // Accounts and associations.
  for (const std::string& a : trace.accounts) {
    ToolResult r =
        lab.Client({"sacctmgr", "-i", "add", "account", a, "Description=" + a, "Organization=lab"},
                   std::chrono::seconds(30));
    if (!r.ok() && !SayNothingNew(r))
      return Status::Error("sacctmgr add account " + a + ": " + r.Summary());
  }
  for (const BusyUser& u : trace.users) {
    ToolResult r =
        lab.Client({"sacctmgr", "-i", "add", "user", u.name, "Account=" + Join(u.accounts, ","),
                    "DefaultAccount=" + u.default_account},
                   std::chrono::seconds(30));
    if (!r.ok() && !SayNothingNew(r))
      return Status::Error("sacctmgr add user " + u.name + ": " + r.Summary());
  }

  std::map<std::string, std::string> groups;
  for (const BusyUser& u : trace.users) groups[u.name] = PrimaryGroup(u.name);
  std::vector<std::string> ids(trace.jobs.size());
  auto submit = [&](size_t i) -> Status {
    const BusyJob& j = trace.jobs[i];
    std::string dep = j.depends_on >= 0 ? ids[static_cast<size_t>(j.depends_on)] : "";
    if (j.depends_on >= 0 && dep.empty()) {
      return Status::Error("job " + std::to_string(i) + " depends on one not submitted before it");
    }
    ToolResult r =
        lab.Client(SbatchArgv(j, groups[j.user], workdir, dep), std::chrono::seconds(20));
    if (!r.ok()) return Status::Error("sbatch " + j.name + " as " + j.user + ": " + r.Summary());
    std::string id = r.out.substr(0, r.out.find_first_of(";\n"));
    ids[i] = id;
    return {};
  };
  std::vector<size_t> order(trace.jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return trace.jobs[a].submit_offset_s < trace.jobs[b].submit_offset_s;
  });

  // The history: submitted, the cancelled ones cancelled by their users once they run, and
  // waited for until every settling job has ended.
  int history = 0;
  for (size_t i : order) {
    if (trace.jobs[i].submit_offset_s >= 0) break;
    if (Status s = submit(i); !s.ok()) return s;
    ++history;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  std::string scancel = lab.Program("scancel"), runuser = lab.Program("runuser");
  std::vector<bool> cancelled(trace.jobs.size(), false);
  std::string last;
  while (true) {
    bool pending = false;
    auto active = ActiveJobs(lab);
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
      const BusyJob& j = trace.jobs[i];
      if (!j.settle || ids[i].empty()) continue;
      if (j.cancel && !cancelled[i] && StateOf(lab, ids[i]) == "RUNNING") {
        // As the user: accounting says "CANCELLED by <uid>", and the user's client can reach the
        // controller (the munge socket and slurm.conf are readable by others).
        std::vector<std::string> env = lab.ClientEnv();
        ToolResult r = runuser.empty() ? ToolResult{}
                                       : RunTool({runuser, "-u", j.user, "--", "/usr/bin/env",
                                                  env.back(), scancel, ids[i]},
                                                 env, std::chrono::seconds(15));
        if (!r.ok()) {
          progress << "  warning: scancel as " << j.user << " failed (" << r.Summary()
                   << "); cancelled as root\n";
          lab.Client({"scancel", ids[i]});
        }
        cancelled[i] = true;
      }
      if (!active || active->count(ids[i])) {
        pending = true;
        last = j.name + " (" + ids[i] + ")";
      }
    }
    if (!pending) break;
    if (Clock::now() >= deadline) {
      return Status::Error("the busy profile's history did not finish within 120 s: " + last +
                           " is still queued");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // The maintenance drain: the history may have used the node, nothing that outlives the
  // hand-over does (the running jobs are pinned elsewhere, the rest is submitted after this).
  ToolResult drain = lab.Client({"scontrol", "update", "nodename=" + trace.maintenance_node,
                                 "state=drain", "reason=" + trace.maintenance_reason});
  if (!drain.ok()) {
    return Status::Error("cannot drain " + trace.maintenance_node + ": " + drain.Summary());
  }
  int later = 0;
  for (size_t i : order) {
    if (trace.jobs[i].submit_offset_s < 0) continue;
    if (Status s = submit(i); !s.ok()) return s;
    ++later;
  }
  std::chrono::duration<double> took = Clock::now() - start;
  std::ostringstream secs;
  secs.setf(std::ios::fixed);
  secs.precision(2);
  secs << took.count();
  progress << "  busy profile (seed " << trace.seed << "): " << trace.users.size() << " users, "
           << trace.accounts.size() << " more accounts, " << history
           << " jobs before hand-over (running or history), " << later << " pending or scheduled; "
           << trace.maintenance_node << " drained for maintenance +" << secs.str() << " s\n";
  return {};
}

Status ReleaseBusyProfile(const Lab& lab, std::ostream& progress) {
  std::string errors;
  for (const std::string& line : Lines(base::ReadFile(lab.Path("run/busy.users")).value_or(""))) {
    std::istringstream f(line);
    std::string how, user;
    f >> how >> user;
    if (how != "held" || user.empty()) continue;
    if (Status s = ReleaseUser(lab, user, progress); !s.ok()) {
      errors += (errors.empty() ? "" : "; ") + s.message();
    }
  }
  if (!errors.empty()) return Status::Error(errors);
  return {};
}

std::vector<std::string> UserHolders(const std::string& registry, const std::string& user) {
  return Lines(base::ReadFile(registry + "/" + user).value_or(""));
}

}  // namespace slurm_rca::live

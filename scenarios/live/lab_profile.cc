// The busy profile (profile.h) put on a lab and taken off it: Lab::Up applies it, Lab::Down
// releases it. Its functions are declared in lab.h, beside the lab they change, so that the
// profile's trace stays pure and the lab and the profile do not include each other.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/file.h"
#include "scenarios/live/lab.h"
#include "scenarios/live/large_profile.h"
#include "scenarios/live/profile.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

// argv as the users run it: on the login host of a lab of hosts (Lab::OnHost), else as it is.
// OnHost fails only for an unknown host or a relative argv[0]: neither here (runuser is absolute).
std::vector<std::string> OnLogin(const Lab& lab, const std::vector<std::string>& argv) {
  base::Result<std::vector<std::string>> on = lab.OnHost("login", argv);
  return on.ok() ? *on : argv;
}

// ApplyBusyProfile's steps.

// The lab's directories opened to the busy users: workdir writable by all, the directories above
// it and their clients' files searchable. Writes the trace's text to DIR/trace_file.
Status OpenLabToUsers(const Lab& lab, const std::string& trace_file, const std::string& trace_text,
                      const std::string& workdir) {
  std::error_code ec;
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
  // The lab of hosts: each host's slurm.conf, under hosts/HOST/etc.
  for (const HostSpec& h : lab.Hosts()) {
    for (const std::string& d : {std::string("hosts"), "hosts/" + h.name, "hosts/" + h.name + "/etc"}) {
      fs::permissions(lab.Path(d), fs::perms::others_exec | fs::perms::group_exec,
                      fs::perm_options::add, ec);
      if (ec) return Status::Error("cannot make " + lab.Path(d) + " searchable: " + ec.message());
    }
  }
  {
    std::ofstream out(lab.Path(trace_file), std::ios::trunc);
    out << trace_text;
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
  return {};
}

Status TakeUsers(const Lab& lab, const std::vector<BusyUser>& users, const std::string& workdir) {
  // Unix users, each recorded in DIR/run/busy.users before it is taken, so that Down releases
  // what an interrupted Up took.
  for (const BusyUser& u : users) {
    std::string how;
    Status s = AcquireUser(lab, u.name, &how);
    if (!how.empty())
      std::ofstream(lab.Path("run/busy.users"), std::ios::app) << how << " " << u.name << "\n";
    if (!s.ok()) return s;
  }
  // What the users' jobs and clients need, checked as one of them: a writable working directory
  // and a controller they can reach (slurm.conf and the munge socket readable by them).
  if (std::string runuser = lab.Program("runuser"); !runuser.empty() && !users.empty()) {
    const std::string& user = users.front().name;
    std::vector<std::string> env = lab.ClientEnv();
    ToolResult w = RunTool(OnLogin(lab, {runuser, "-u", user, "--", "/usr/bin/test", "-w", workdir}),
                           env, std::chrono::seconds(10));
    if (!w.ok())
      return Status::Error(user + " cannot write " + workdir + ": their jobs would fail");
    ToolResult q = RunTool(OnLogin(lab, {runuser, "-u", user, "--", "/usr/bin/env", env.back(),
                                         lab.Program("squeue"), "-h", "-o", "%i"}),
                           env, std::chrono::seconds(15));
    if (!q.ok()) {
      return Status::Error(user + " cannot reach the controller (slurm.conf or the munge socket " +
                           "not usable by other users?): " + q.Summary());
    }
  }
  return {};
}

Status AddAccounts(const Lab& lab, const std::vector<std::string>& accounts,
                   const std::vector<BusyUser>& users) {
  // Accounts and associations.
  for (const std::string& a : accounts) {
    ToolResult r =
        lab.Client({"sacctmgr", "-i", "add", "account", a, "Description=" + a, "Organization=lab"},
                   std::chrono::seconds(30));
    if (!r.ok() && !SayNothingNew(r))
      return Status::Error("sacctmgr add account " + a + ": " + r.Summary());
  }
  for (const BusyUser& u : users) {
    ToolResult r =
        lab.Client({"sacctmgr", "-i", "add", "user", u.name, "Account=" + Join(u.accounts, ","),
                    "DefaultAccount=" + u.default_account},
                   std::chrono::seconds(30));
    if (!r.ok() && !SayNothingNew(r))
      return Status::Error("sacctmgr add user " + u.name + ": " + r.Summary());
  }
  return {};
}

// Waits up to 120 s until every settling job of the history (ids: the Slurm id of each job
// submitted) has left the queue, cancelling as its user each one meant to be cancelled once it
// runs.
Status WaitForHistory(const Lab& lab, const BusyTrace& trace, const std::vector<std::string>& ids,
                      std::ostream& progress) {
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
                                       : RunTool(OnLogin(lab, {runuser, "-u", j.user, "--",
                                                               "/usr/bin/env", env.back(), scancel,
                                                               ids[i]}),
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
  return {};
}

}  // namespace

Status ApplyBusyProfile(Lab& lab, const BusyTrace& trace, std::ostream& progress) {
  auto start = Clock::now();
  std::vector<std::string> nodes = lab.NodeNames();
  if (nodes.size() < 4) return Status::Error("the busy profile needs at least 4 nodes");
  if (trace.maintenance_node == "node1" ||
      std::find(nodes.begin(), nodes.end(), trace.maintenance_node) == nodes.end()) {
    return Status::Error("the maintenance node " + trace.maintenance_node + " cannot be drained");
  }
  const std::string workdir = lab.Path("work/users");
  if (Status s = OpenLabToUsers(lab, "busy.trace", trace.ToText(), workdir); !s.ok()) return s;
  if (Status s = TakeUsers(lab, trace.users, workdir); !s.ok()) return s;
  if (Status s = AddAccounts(lab, trace.accounts, trace.users); !s.ok()) return s;

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
  if (Status s = WaitForHistory(lab, trace, ids, progress); !s.ok()) return s;
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

namespace {

std::string Fixed2(double v) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(2);
  o << v;
  return o.str();
}

// Polls probe() every second until it is ok or the timeout passes; returns the last status.
template <typename Probe>
Status WaitFor(std::chrono::seconds timeout, Probe probe) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    Status last = probe();
    if (last.ok() || Clock::now() >= deadline) return last;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::string Rate(double count, double seconds) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << count / std::max(seconds, 0.001) << "/s";
  return o.str();
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Lines Slurm printed (one per job or task).
long CountLines(const ToolResult& r) {
  return static_cast<long>(std::count(r.out.begin(), r.out.end(), '\n'));
}

// Runs every copy of the trace's jobs of one phase through sbatch, four at a time (the controller
// answers while the next client starts). ids[i]: the Slurm id of job i's first copy.
Status SubmitPhase(const Lab& lab, const LargeTrace& trace, LargePhase phase,
                   const std::string& workdir, const std::map<std::string, std::string>& groups,
                   std::vector<std::string>& ids, long* submitted) {
  std::vector<std::pair<size_t, int>> work;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    if (trace.jobs[i].phase != phase) continue;
    for (int c = 0; c < trace.jobs[i].copies; ++c) work.emplace_back(i, c);
  }
  std::atomic<size_t> next{0};
  std::atomic<long> done{0};
  std::mutex mu;
  std::string error;
  auto worker = [&] {
    for (size_t w = next++; w < work.size(); w = next++) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!error.empty()) return;
      }
      const auto [i, copy] = work[w];
      const LargeJob& j = trace.jobs[i];
      std::string dep;
      if (j.depends_on >= 0) {
        std::lock_guard<std::mutex> lock(mu);
        dep = ids[static_cast<size_t>(j.depends_on)];
      }
      ToolResult r =
          lab.Client(LargeSbatchArgv(j, groups.at(j.user), workdir, dep), std::chrono::seconds(60));
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        if (error.empty()) error = "sbatch " + j.name + " as " + j.user + ": " + r.Summary();
        return;
      }
      if (copy == 0) ids[i] = r.out.substr(0, r.out.find_first_of(";\n"));
      done += j.Tasks() / j.copies;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  *submitted = done;
  return error.empty() ? Status() : Status::Error(error);
}

// `sdiag`'s "Jobs completed" and "Jobs failed" (since the controller started): the history's
// progress without reading accounting.
long JobsEnded(const Lab& lab) {
  ToolResult r = lab.Client({"sdiag"}, std::chrono::seconds(20));
  long total = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    for (const char* key : {"Jobs completed:", "Jobs failed:"}) {
      if (size_t at = line.find(key); at != std::string::npos) {
        total += std::strtol(line.c_str() + at + std::strlen(key), nullptr, 10);
      }
    }
  }
  return total;
}

}  // namespace

Status ApplyLargeProfile(Lab& lab, const LargeTrace& trace, std::ostream& progress) {
  auto start = Clock::now();
  const std::string workdir = lab.Path("work/users");
  if (Status s = OpenLabToUsers(lab, "large.trace", trace.ToText(), workdir); !s.ok()) return s;
  if (Status s = TakeUsers(lab, trace.users, workdir); !s.ok()) return s;
  // QOS, then the accounts allowed them and the capped account's limit, then the users (whose
  // associations inherit the accounts' QOS).
  std::vector<std::string> qos_names = {"normal"};
  for (const LargeQos& q : trace.qos) {
    std::vector<std::string> argv = {"sacctmgr", "-i", "add", "qos", q.name};
    argv.insert(argv.end(), q.settings.begin(), q.settings.end());
    ToolResult r = lab.Client(argv, std::chrono::seconds(30));
    if (!r.ok() && !SayNothingNew(r)) return Status::Error("sacctmgr add qos: " + r.Summary());
    qos_names.push_back(q.name);
  }
  if (Status s = AddAccounts(lab, trace.accounts, {}); !s.ok()) return s;
  std::vector<std::string> all = trace.accounts;
  all.push_back("research");
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"sacctmgr", "-i", "modify", "account", "where",
                                 "name=" + Join(all, ","), "set", "QOS=" + Join(qos_names, ",")},
        std::vector<std::string>{"sacctmgr", "-i", "modify", "account", "where",
                                 "name=" + trace.limited_account, "set",
                                 "GrpJobs=" + std::to_string(trace.assoc_grp_jobs)}}) {
    ToolResult r = lab.Client(argv, std::chrono::seconds(30));
    if (!r.ok()) return Status::Error("sacctmgr modify account: " + r.Summary());
  }
  if (Status s = AddAccounts(lab, {}, trace.users); !s.ok()) return s;
  ToolResult resv =
      lab.Client({"scontrol", "create", "reservation", "ReservationName=" + trace.reservation,
                  "StartTime=now+24hours", "Duration=240", "Nodes=" + trace.reservation_nodes,
                  "Accounts=" + trace.reservation_account});
  if (!resv.ok()) return Status::Error("scontrol create reservation: " + resv.Summary());
  progress << "  large profile (seed " << trace.seed << "): " << trace.users.size() << " users in "
           << trace.accounts.size() << " accounts, QOS and limits, reservation "
           << trace.reservation << " +" << Fixed2(Seconds(start)) << " s\n" << std::flush;

  std::map<std::string, std::string> groups;
  for (const BusyUser& u : trace.users) groups[u.name] = PrimaryGroup(u.name);
  std::vector<std::string> ids(trace.jobs.size());

  // History: every task runs and ends before anything else is submitted.
  auto phase = Clock::now();
  long submitted = 0;
  const long ended_before = JobsEnded(lab);
  if (Status s = SubmitPhase(lab, trace, LargePhase::kHistory, workdir, groups, ids, &submitted);
      !s.ok()) {
    return s;
  }
  progress << "  history: " << submitted << " tasks submitted +" << Fixed2(Seconds(phase))
           << " s\n" << std::flush;
  const long history = trace.Tasks(LargePhase::kHistory);
  // At 10 tasks a second at worst, and never less than 10 minutes.
  const auto deadline = Clock::now() + std::chrono::seconds(std::max(600L, history / 10));
  auto last_print = Clock::now();
  long released = 0;
  while (true) {
    ToolResult q = lab.Client({"squeue", "-h", "-o", "%i|%r"}, std::chrono::seconds(30));
    const long ended = JobsEnded(lab) - ended_before;
    if (q.ok() && q.out.empty()) break;
    // A task whose launch failed is requeued held, and would never end: at 1,024 nodes munged's
    // socket was once full for a moment ("Munge encode failed ... Resource temporarily
    // unavailable", 1 of 2,000 tasks, 2026-12-07). Released, it runs again; said so below.
    std::vector<std::string> held = {"scontrol", "release"};
    std::istringstream rows(q.ok() ? q.out : std::string());
    for (std::string row; std::getline(rows, row);) {
      size_t bar = row.find('|');
      if (bar != std::string::npos && row.substr(bar + 1) == "launch failed requeued held") {
        held.push_back(row.substr(0, bar));
      }
    }
    if (held.size() > 2 && lab.Client(held, std::chrono::seconds(30)).ok()) {
      released += static_cast<long>(held.size()) - 2;
      progress << "  history: released " << held.size() - 2
               << " task(s) requeued held after a failed launch +" << Fixed2(Seconds(start))
               << " s\n" << std::flush;
    }
    if (Clock::now() >= deadline) {
      return Status::Error("the history did not finish in time: " + std::to_string(ended) + " of " +
                           std::to_string(history) + " tasks ended");
    }
    if (Seconds(last_print) >= 30) {
      progress << "  history: " << ended << "/" << history << " ended, "
               << Rate(static_cast<double>(ended), Seconds(phase)) << " +" << Fixed2(Seconds(start))
               << " s\n" << std::flush;
      last_print = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  // The controller sends finished jobs to slurmdbd through its agent queue: accounting holds the
  // whole history once the queue is empty.
  Status drained = WaitFor(std::chrono::seconds(300), [&]() -> Status {
    ToolResult r = lab.Client({"sdiag"}, std::chrono::seconds(20));
    size_t at = r.out.find("DBD Agent queue size:");
    if (!r.ok() || at == std::string::npos) return Status::Error("sdiag: " + r.Summary());
    long queued = std::strtol(r.out.c_str() + at + 21, nullptr, 10);
    return queued == 0 ? Status() : Status::Error(std::to_string(queued) + " messages queued");
  });
  if (!drained.ok()) {
    return Status::Error("accounting did not catch up with the history: " + drained.message());
  }
  const double history_s = Seconds(phase);
  progress << "  history: " << history << " tasks ended and in accounting in " << Fixed2(history_s)
           << " s (" << Rate(static_cast<double>(history), history_s) << ")"
           << (released > 0 ? ", " + std::to_string(released) + " released after a failed launch"
                            : std::string())
           << "\n" << std::flush;

  // Running: submitted, then waited for until (nearly) all run.
  phase = Clock::now();
  if (Status s = SubmitPhase(lab, trace, LargePhase::kRunning, workdir, groups, ids, &submitted);
      !s.ok()) {
    return s;
  }
  const long want_running = trace.Tasks(LargePhase::kRunning);
  long running = 0;
  Status started = WaitFor(std::chrono::seconds(600), [&]() -> Status {
    running = CountLines(
        lab.Client({"squeue", "-h", "-r", "-t", "R", "-o", "%i"}, std::chrono::seconds(30)));
    return running >= want_running * 95 / 100
               ? Status()
               : Status::Error(std::to_string(running) + " of " + std::to_string(want_running) +
                               " running");
  });
  if (!started.ok()) return Status::Error("the running jobs did not start: " + started.message());
  progress << "  running: " << running << " of " << want_running << " tasks running +"
           << Fixed2(Seconds(phase)) << " s\n" << std::flush;

  // Pending: the queue at hand-over.
  phase = Clock::now();
  if (Status s = SubmitPhase(lab, trace, LargePhase::kPending, workdir, groups, ids, &submitted);
      !s.ok()) {
    return s;
  }
  const double pending_s = Seconds(phase);
  progress << "  pending: " << submitted << " tasks submitted in " << Fixed2(pending_s) << " s ("
           << Rate(static_cast<double>(submitted), pending_s) << ")\n" << std::flush;
  progress << "  large profile applied +" << Fixed2(Seconds(start)) << " s\n" << std::flush;
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

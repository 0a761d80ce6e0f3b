// cluster_bench: how long the live lab takes to come up and go down, and how long each fault
// primitive takes to show its documented effect and to heal, on this machine. Needs root.
//
//   sudo build/bin/cluster_bench [--cycles N] [--faults a,b] [--repeats R] [--port-base P]
//
// Brings a 4-node lab up and down N times (median, min, max of each), then brings one lab up
// for every fault: injects it, polls real Slurm clients every 200 ms (with a bound) until the
// effect shows, heals it and polls until recovery shows. The lab is brought down at the end,
// on errors and on SIGINT/SIGTERM too. A bound that passes is printed as such, never as a time.
#include <sched.h>
#include <signal.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"

namespace {

using namespace slurm_rca::live;
using slurm_rca::base::Status;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

constexpr int kNodes = 4;
constexpr auto kPoll = std::chrono::milliseconds(200);

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// What a failed client said, without its prefixes: "sinfo: error: f: g: Connection refused" gives
// "Connection refused". From the first stderr line holding want, else from the last line.
std::string Gist(const ToolResult& r, const std::string& want = "") {
  if (r.timed_out || r.err.empty()) return r.Summary();
  std::string line;
  std::istringstream lines(r.err);
  for (std::string l; std::getline(lines, l);) {
    if (!l.empty()) line = l;
    if (!want.empty() && l.find(want) != std::string::npos) break;
  }
  size_t colon = line.rfind(": ");
  return colon == std::string::npos ? line : line.substr(colon + 2);
}

std::string Fixed(double v, int digits = 2) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Sleeps d unless a signal asked us to stop; returns false when it did.
bool Nap(std::chrono::milliseconds d = kPoll) {
  if (g_stop) return false;
  std::this_thread::sleep_for(d);
  return !g_stop;
}

struct Stats {
  double median, min, max;
};

Stats Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return {median, v.front(), v.back()};
}

// "0.12 s", or "0.12 s median (min 0.10, max 0.20, 3 runs)".
std::string Describe(const std::vector<double>& v) {
  if (v.size() == 1) return Fixed(v[0]) + " s";
  Stats s = Summarize(v);
  return Fixed(s.median) + " s median (min " + Fixed(s.min) + ", max " + Fixed(s.max) + ", " +
         std::to_string(v.size()) + " runs)";
}

std::string MachineLine() {
  std::string cpu = "unknown CPU";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  cpu_set_t set;
  int nproc = sched_getaffinity(0, sizeof set, &set) == 0
                  ? CPU_COUNT(&set)
                  : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  struct sysinfo si {};
  sysinfo(&si);
  double gib = static_cast<double>(si.totalram) * si.mem_unit / (1024.0 * 1024 * 1024);
  struct utsname u {};
  uname(&u);
  return cpu + ", nproc " + std::to_string(nproc) + ", " + Fixed(gib, 1) + " GiB RAM, " +
         u.sysname + " " + u.release;
}

// Brings the lab down when it goes out of scope, unless Down() was called already.
class LabGuard {
 public:
  explicit LabGuard(Lab* lab) : lab_(lab) {}
  LabGuard(const LabGuard&) = delete;
  LabGuard& operator=(const LabGuard&) = delete;
  ~LabGuard() {
    if (lab_ != nullptr) Down();
  }

  // Stops every daemon and checks that none survived and that the directory is gone.
  Status Down() {
    Lab* lab = lab_;
    lab_ = nullptr;
    std::vector<ProcessId> ids;
    for (const std::string& name : lab->DaemonNames()) {
      if (auto id = lab->DaemonId(name)) ids.push_back(*id);
    }
    std::ostringstream progress;
    Status s = lab->Down(progress);
    if (!s.ok()) return s;
    for (const ProcessId& id : ids) {
      if (IsAlive(id)) return Status::Error("pid " + std::to_string(id.pid) + " survived Down");
    }
    if (!MountsUnder(lab->options().dir).empty() || fs::exists(lab->options().dir)) {
      return Status::Error(lab->options().dir + " or a mount under it is left");
    }
    return {};
  }

 private:
  Lab* lab_;
};

std::optional<std::string> MakeLabDir() {
  char dir[] = "/tmp/rca-bench-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return std::nullopt;
  return std::string(dir);
}

// What the clients see.
class Probe {
 public:
  explicit Probe(const Lab& lab) : lab_(lab) {}

  ToolResult Run(std::vector<std::string> argv, seconds timeout = seconds(15)) const {
    return lab_.Client(std::move(argv), timeout);
  }
  std::string NodeState(const std::string& node) const {
    return FirstLine(Run({"sinfo", "-h", "-n", node, "-o", "%T"}).out);
  }
  std::string NodeReason(const std::string& node) const {
    return FirstLine(Run({"sinfo", "-h", "-n", node, "-o", "%E"}).out);
  }
  std::optional<long> JobInfoRpcs() const {
    ToolResult r = Run({"sdiag"});
    size_t at = r.out.find("REQUEST_JOB_INFO");
    if (!r.ok() || at == std::string::npos) return std::nullopt;
    size_t count = r.out.find("count:", at);
    if (count == std::string::npos) return std::nullopt;
    return std::atol(r.out.c_str() + count + 6);
  }
  // Seconds one squeue takes; a failure counts as its full duration.
  double SqueueSeconds() const { return Run({"squeue", "-h"}).seconds; }
  // All nodes idle and sacct answering: what Lab::WaitReady waits for.
  bool Ready(std::string* note) const {
    ToolResult r = Run({"sinfo", "-h", "-N", "-o", "%N %T"}, seconds(5));
    std::map<std::string, std::string> seen;
    std::istringstream lines(r.out);
    for (std::string node, state; lines >> node >> state;) seen[node] = state;
    int idle = 0;
    for (const auto& [n, s] : seen) idle += s == "idle";
    *note = std::to_string(idle) + " of " + std::to_string(kNodes) + " nodes idle";
    if (!r.ok() || idle != kNodes) return false;
    ToolResult acct = Run({"sacct", "-a", "-X", "-n"}, seconds(5));
    *note += acct.ok() ? ", sacct answers" : ", sacct: " + Gist(acct);
    return acct.ok();
  }

 private:
  const Lab& lab_;
};

// One observable milestone: shown() runs one probe and says whether it shows; it may leave a
// note on what it saw, shown or not.
struct Check {
  std::string label;
  seconds bound;
  std::function<bool(std::string* note)> shown;
};

struct Plan {
  std::string target;  // what the fault is aimed at, for the report
  FaultTarget fault_target;
  std::vector<Check> effects;
  Check recovery;
};

Check NodeStateCheck(const Probe& p, const std::string& node, const std::string& label,
                     seconds bound, std::function<bool(const std::string&)> pred) {
  return {label, bound, [&p, node, pred](std::string* note) {
            std::string state = p.NodeState(node);
            *note = node + " " + (state.empty() ? "(no answer)" : state);
            return pred(state);
          }};
}

Check NodeIdleAgain(const Probe& p, const std::string& node) {
  return NodeStateCheck(p, node, "recovered: " + node + " idle again", seconds(120),
                        [](const std::string& s) { return s == "idle"; });
}

Check SacctAnswers(const Probe& p) {
  return {"recovered: sacct answers", seconds(60), [&p](std::string* note) {
            ToolResult r = p.Run({"sacct", "-a", "-X", "-n"}, seconds(5));
            *note = r.ok() ? "sacct answered in " + Fixed(r.seconds) + " s" : Gist(r);
            return r.ok();
          }};
}

// The client argv fails (not by its own timeout) with `want` in its stderr, within `bound`; each
// try may take `timeout`.
Check FailsWith(const Probe& p, std::vector<std::string> argv, std::string want, seconds bound,
                seconds timeout) {
  std::string label = "effect: " + argv[0] + " fails with '" + want + "'";
  return {label, bound, [&p, argv, want, timeout](std::string* note) {
            ToolResult r = p.Run(argv, timeout);
            *note = argv[0] + " " +
                    (r.ok() ? std::string("answered")
                            : "failed after " + Fixed(r.seconds) + " s: " + Gist(r, want));
            return !r.ok() && !r.timed_out && Contains(r.err, want);
          }};
}

// db-freeze and db-lock: the accounting read hangs while the controller's reads answer.
Check SacctBlocksWhileSinfoAnswers(const Probe& p) {
  return {"effect: sacct blocks while sinfo answers", seconds(30), [&p](std::string* note) {
            ToolResult sacct = p.Run({"sacct", "-a", "-X", "-n"}, seconds(3));
            if (!sacct.timed_out) {
              *note = "sacct did not block: " + (sacct.ok() ? "answered" : Gist(sacct));
              return false;
            }
            ToolResult sinfo = p.Run({"sinfo", "-h"}, seconds(5));
            *note = "sacct still blocked after 3 s; sinfo " +
                    (sinfo.ok() ? "answered in " + Fixed(sinfo.seconds) + " s" : Gist(sinfo));
            return sinfo.ok();
          }};
}

// A submitted job writes nothing: its output goes to /dev/null.
ToolResult Submit(const Probe& p) {
  return p.Run({"sbatch", "--parsable", "-o", "/dev/null", "-e", "/dev/null", "--wrap", "true"});
}

// munge-stop: clients fail to authenticate, and slurmctld's log marks the nodes DOWN (read from
// the offset the log had when the plan was made).
Plan MungeStopPlan(const Lab& lab, const Probe& p) {
  std::string log = lab.Path("log/slurmctld.log");
  std::error_code ec;
  auto offset = fs::file_size(log, ec);
  if (ec) offset = 0;
  return {"munged",
          {},
          {{"effect: sinfo fails with 'authentication'", seconds(30),
            [&p](std::string* note) {
              ToolResult r = p.Run({"sinfo", "-h"}, seconds(10));
              *note = "sinfo " + (r.ok() ? std::string("answered")
                                         : "failed after " + Fixed(r.seconds) +
                                               " s: " + Gist(r, "authentication"));
              return !r.ok() && Contains(r.err, "authentication");
            }},
           {"effect: slurmctld.log: 'not responding, setting DOWN'", seconds(90),
            [log, offset](std::string* note) {
              std::ifstream in(log);
              in.seekg(static_cast<std::streamoff>(offset));
              for (std::string line; std::getline(in, line);) {
                if (Contains(line, "not responding, setting DOWN")) {
                  *note =
                      line.substr(line.find(']') == std::string::npos ? 0 : line.find(']') + 2);
                  return true;
                }
              }
              *note = "not in the log yet";
              return false;
            }}},
          {"recovered: all nodes idle, sacct answers", seconds(120),
           [&p](std::string* note) { return p.Ready(note); }}};
}

// statesave-readonly: sbatch cannot write the job script into the state directory.
Plan StatesaveReadonlyPlan(const Probe& p) {
  return {"bind-ro",
          {.method = "bind-ro"},
          {{"effect: sbatch fails with an I/O error", seconds(30),
            [&p](std::string* note) {
              ToolResult r = Submit(p);
              *note = r.ok() ? "sbatch submitted job " + FirstLine(r.out) : Gist(r, "I/O error");
              return !r.ok() && Contains(r.err, "I/O error writing script/environment to file");
            }}},
          {"recovered: sbatch submits", seconds(60), [&p](std::string* note) {
             ToolResult r = Submit(p);
             *note = r.ok() ? "submitted job " + FirstLine(r.out) : Gist(r);
             return r.ok();
           }}};
}

// rpc-flood: slurmctld's job-info RPCs climb and squeue slows against its quiet latency, measured
// here.
Plan RpcFloodPlan(const Probe& p) {
  std::vector<double> quiet;
  for (int i = 0; i < 5; ++i) quiet.push_back(p.SqueueSeconds());
  double base = Summarize(quiet).median;
  long base_rpcs = p.JobInfoRpcs().value_or(0);
  // Slow means 3x the quiet median and at least 50 ms more; recovered means within 2x or
  // 50 ms of it, so that the noise of a few milliseconds never counts either way.
  double slow = std::max(3 * base, base + 0.05), normal = std::max(2 * base, base + 0.05);
  std::string quiet_note = "quiet median " + Fixed(base, 3) + " s";
  return {"16 workers",
          {.workers = 16, .seconds = 120},
          {{"effect: sdiag REQUEST_JOB_INFO count +100", seconds(30),
            [&p, base_rpcs](std::string* note) {
              auto now = p.JobInfoRpcs();
              if (!now) {
                *note = "sdiag did not answer";
                return false;
              }
              *note = "+" + std::to_string(*now - base_rpcs) + " since inject";
              return *now - base_rpcs >= 100;
            }},
           {"effect: squeue >= 3x its quiet latency", seconds(30),
            [&p, slow, quiet_note](std::string* note) {
              double s = p.SqueueSeconds();
              *note = "squeue took " + Fixed(s, 3) + " s, " + quiet_note;
              return s >= slow;
            }}},
          {"recovered: squeue within 2x its quiet latency", seconds(60),
           [&p, normal, quiet_note](std::string* note) {
             double s = p.SqueueSeconds();
             *note = "squeue took " + Fixed(s, 3) + " s, " + quiet_note;
             return s <= normal;
           }}};
}

// partition-down: sinfo shows the partition down, then up.
Plan PartitionDownPlan(const Probe& p) {
  // The default target: partition gpu, state DOWN (FaultTarget).
  auto avail = [&p](std::string* note, const std::string& want) {
    ToolResult r = p.Run({"sinfo", "-h", "-p", "gpu", "-o", "%a"}, seconds(5));
    std::string a = FirstLine(r.out);
    *note = r.ok() ? "partition gpu " + a : Gist(r);
    return r.ok() && a == want;
  };
  return {"partition gpu, DOWN",
          {},
          {{"effect: sinfo shows partition gpu down", seconds(30),
            [avail](std::string* note) { return avail(note, "down"); }}},
          {"recovered: partition gpu up", seconds(30),
           [avail](std::string* note) { return avail(note, "up"); }}};
}

// reservation: scontrol lists the maintenance reservation active, then not.
Plan ReservationPlan(const Probe& p) {
  // Shown only by an answer that lists it; gone only by an answer that does not (a failed
  // read is neither).
  auto listed = [&p](std::string* note) -> std::optional<bool> {
    ToolResult r = p.Run({"scontrol", "show", "reservation"}, seconds(5));
    if (!r.ok()) {
      *note = Gist(r);
      return std::nullopt;
    }
    bool active = Contains(r.out, "ReservationName=rca_maint") && Contains(r.out, "State=ACTIVE");
    *note = active ? "rca_maint ACTIVE" : "rca_maint not listed as active";
    return active;
  };
  return {"node1",
          {},
          {{"effect: scontrol show reservation lists rca_maint ACTIVE", seconds(30),
            [listed](std::string* note) { return listed(note) == std::optional<bool>(true); }}},
          {"recovered: rca_maint gone", seconds(30),
           [listed](std::string* note) { return listed(note) == std::optional<bool>(false); }}};
}

// assoc-limit and qos-limit: sacctmgr shows the limit set, then unset.
Plan LimitPlan(const Probe& p, const std::string& fault) {
  // The defaults: account research GrpJobs=0; qos normal MaxJobsPerUser=1 (FaultTarget).
  bool assoc = fault == "assoc-limit";
  std::vector<std::string> argv =
      assoc ? std::vector<std::string>{"sacctmgr", "-n", "-P", "show", "assoc",
                                       "account=research", "format=Account,User,GrpJobs"}
            : std::vector<std::string>{"sacctmgr", "-n", "-P", "show", "qos", "normal",
                                       "format=Name,MaxJobsPU"};
  std::string set = assoc ? "research||0" : "normal|1";
  std::string unset = assoc ? "research||" : "normal|";
  auto row = [&p, argv](std::string* note, const std::string& want) {
    ToolResult r = p.Run(argv, seconds(10));
    if (!r.ok()) {
      *note = Gist(r);
      return false;
    }
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line == want) {
        *note = "sacctmgr: " + line;
        return true;
      }
    }
    *note = "sacctmgr: no row '" + want + "'";
    return false;
  };
  return {assoc ? "account research, GrpJobs=0" : "qos normal, MaxJobsPerUser=1",
          {},
          {{std::string("effect: sacctmgr shows ") + (assoc ? "GrpJobs=0" : "MaxJobsPU=1"),
            seconds(30), [row, set](std::string* note) { return row(note, set); }}},
          {"recovered: the limit is unset again", seconds(30),
           [row, unset](std::string* note) { return row(note, unset); }}};
}

// gpu-fake: the health check drains node1 with a "gpu:" reason.
Plan GpuFakePlan(const Probe& p) {
  return {"node1, ecc",
          {.node = "node1", .mode = "ecc"},
          {{"effect: health check drains node1 ('gpu:')", seconds(60),
            [&p](std::string* note) {
              std::string state = p.NodeState("node1"), why = p.NodeReason("node1");
              *note = "node1 " + state + ", reason '" + why + "'";
              return Contains(state, "drain") && why.rfind("gpu:", 0) == 0;
            }}},
          NodeIdleAgain(p, "node1")};
}

// Built just before each injection: baselines (log size, squeue latency) are taken then. The
// faults with more than a line or two of checks have a plan function each.
Plan MakePlan(const Lab& lab, const Probe& p, const std::string& fault) {
  if (fault == "db-freeze") {
    return {"mariadbd",
            {},
            {SacctBlocksWhileSinfoAnswers(p)},
            SacctAnswers(p)};
  }
  if (fault == "dbd-stop" || fault == "dbd-kill" || fault == "net-drop") {
    bool stop = fault != "net-drop";
    std::string want = stop ? "Connection refused" : "Connection timed out";
    return {"slurmdbd",
            {.daemon = "slurmdbd"},
            {FailsWith(p, {"sacct", "-a", "-X", "-n"}, want, seconds(30), seconds(15))},
            SacctAnswers(p)};
  }
  if (fault == "ctld-stop") {
    std::string want = "Unable to contact slurm controller";
    return {"slurmctld",
            {},
            {FailsWith(p, {"squeue", "-h"}, want, seconds(30), seconds(20))},
            {"recovered: all nodes idle, sacct answers", seconds(120),
             [&p](std::string* note) { return p.Ready(note); }}};
  }
  if (fault == "munge-stop") return MungeStopPlan(lab, p);
  if (fault == "slurmd-kill" || fault == "slurmd-pause") {
    std::string node = fault == "slurmd-kill" ? "node4" : "node3";
    return {node,
            {.node = node},
            {NodeStateCheck(p, node, "effect: " + node + " not responding ('*')", seconds(60),
                            [](const std::string& s) { return Contains(s, "*"); }),
             NodeStateCheck(p, node, "effect: " + node + " DOWN", seconds(90),
                            [](const std::string& s) { return s.rfind("down", 0) == 0; })},
            NodeIdleAgain(p, node)};
  }
  if (fault == "statesave-readonly") return StatesaveReadonlyPlan(p);
  if (fault == "rpc-flood") return RpcFloodPlan(p);
  if (fault == "drain") {
    std::string reason = "rca-bench: drained by cluster_bench";
    return {"node2",
            {.node = "node2", .reason = reason},
            {{"effect: node2 drained with the reason", seconds(30),
              [&p, reason](std::string* note) {
                std::string state = p.NodeState("node2"), why = p.NodeReason("node2");
                *note = "node2 " + state + ", reason '" + why + "'";
                return Contains(state, "drain") && why == reason;
              }}},
            NodeIdleAgain(p, "node2")};
  }
  if (fault == "ctld-pause") {
    std::string want = "Socket timed out";
    return {"slurmctld",
            {},
            {FailsWith(p, {"squeue", "-h"}, want, seconds(40), seconds(20))},
            {"recovered: squeue answers", seconds(30), [&p](std::string* note) {
               ToolResult r = p.Run({"squeue", "-h"}, seconds(5));
               *note = r.ok() ? "squeue answered in " + Fixed(r.seconds) + " s" : Gist(r);
               return r.ok();
             }}};
  }
  if (fault == "partition-down") return PartitionDownPlan(p);
  if (fault == "reservation") return ReservationPlan(p);
  if (fault == "assoc-limit" || fault == "qos-limit") return LimitPlan(p, fault);
  if (fault == "db-lock") {
    return {"CLUSTER_job_table",
            {},
            {SacctBlocksWhileSinfoAnswers(p)},
            SacctAnswers(p)};
  }
  if (fault != "gpu-fake") {
    // A fault added to the catalog without a plan here: the caller refuses it by name.
    return {};
  }
  return GpuFakePlan(p);
}

struct Observation {
  std::optional<double> seconds;
  std::string note;
};

struct RunResult {
  std::string error;  // an inject or heal that failed, or an interruption
  double inject_s = 0, heal_s = 0;
  std::vector<Observation> effects;
  Observation recovery;
};

// Polls the effects together. An effect's time is when the first probe that showed it was
// issued: a blocked sacct shows a frozen database from the moment it is sent.
std::vector<Observation> WatchEffects(Clock::time_point t0, const std::vector<Check>& checks) {
  std::vector<Observation> obs(checks.size());
  std::vector<bool> done(checks.size(), false);
  while (std::find(done.begin(), done.end(), false) != done.end()) {
    for (size_t i = 0; i < checks.size(); ++i) {
      if (done[i]) continue;
      double issued = Since(t0);
      if (issued > checks[i].bound.count()) {
        done[i] = true;
        continue;
      }
      if (checks[i].shown(&obs[i].note)) {
        obs[i].seconds = issued;
        done[i] = true;
      }
    }
    if (!Nap()) break;
  }
  return obs;
}

// A recovery's time is when the first probe that showed it answered.
Observation WatchRecovery(Clock::time_point t0, const Check& check) {
  Observation obs;
  while (Since(t0) <= check.bound.count()) {
    if (check.shown(&obs.note)) {
      obs.seconds = Since(t0);
      break;
    }
    if (!Nap()) break;
  }
  return obs;
}

RunResult RunFault(Lab& lab, const Plan& plan, const std::string& fault) {
  RunResult r;
  auto t0 = Clock::now();
  FaultOutcome in = InjectFault(lab, fault, plan.fault_target);
  r.inject_s = Since(t0);
  if (!in.status.ok() || !in.changed) {
    r.error = "inject " + fault + ": " + (in.status.ok() ? in.message : in.status.message());
    HealFault(lab, fault, plan.fault_target);
    return r;
  }
  r.effects = WatchEffects(t0, plan.effects);
  auto t1 = Clock::now();
  FaultOutcome out = HealFault(lab, fault, plan.fault_target);
  r.heal_s = Since(t1);
  if (!out.status.ok()) {
    r.error = "heal " + fault + ": " + out.status.message();
    return r;
  }
  r.recovery = WatchRecovery(t1, plan.recovery);
  if (g_stop) r.error = "interrupted";
  return r;
}

void PrintRow(const std::string& label, const std::string& value) {
  std::printf("  %-64s %s\n", label.c_str(), value.c_str());
}

// One row per check over the runs: the times where it showed, the bound where it did not.
void PrintCheck(const Check& check, const std::vector<Observation>& obs) {
  std::vector<double> times;
  std::string shown_note, missed_note;
  for (const Observation& o : obs) {
    if (o.seconds) {
      times.push_back(*o.seconds);
      if (shown_note.empty()) shown_note = o.note;
    } else if (missed_note.empty()) {
      missed_note = o.note;
    }
  }
  size_t missed = obs.size() - times.size();
  std::string value;
  if (!times.empty()) value = Describe(times) + "  [" + shown_note + "]";
  if (missed > 0) {
    std::string bound = "did not show within " + std::to_string(check.bound.count()) + " s";
    if (obs.size() > 1)
      bound += " in " + std::to_string(missed) + " of " + std::to_string(obs.size()) + " runs";
    if (!missed_note.empty()) bound += " (last seen: " + missed_note + ")";
    value = value.empty() ? bound : value + "; " + bound;
  }
  PrintRow(check.label, value);
}

// The faults to measure, in catalog order when none is named; nullopt when one named is not in
// the catalog (said on stderr).
std::optional<std::vector<std::string>> ChosenFaults(const std::vector<std::string>& faults) {
  std::vector<std::string> chosen;
  for (const FaultInfo& f : FaultCatalog()) {
    if (faults.empty()) chosen.push_back(f.name);
  }
  for (const std::string& name : faults) {
    auto known = std::find_if(FaultCatalog().begin(), FaultCatalog().end(),
                              [&](const FaultInfo& f) { return f.name == name; });
    if (known == FaultCatalog().end()) {
      std::string all;
      for (const FaultInfo& f : FaultCatalog()) all += (all.empty() ? "" : ", ") + f.name;
      std::fprintf(stderr, "cluster_bench: unknown fault '%s' (known: %s)\n", name.c_str(),
                   all.c_str());
      return std::nullopt;
    }
    if (std::find(chosen.begin(), chosen.end(), name) == chosen.end()) chosen.push_back(name);
  }
  return chosen;
}

// What the bring-up and tear-down cycles measured.
struct CycleTimes {
  std::vector<double> ups, downs;
  std::string version;  // what the first lab's sinfo --version said
};

// Brings a lab up and down in a fresh directory each cycle, until `cycles` or an interruption;
// nullopt when one failed (said on stderr).
std::optional<CycleTimes> TimeCycles(LabOptions& options, int cycles) {
  std::vector<double> ups, downs;
  std::string version;
  for (int cycle = 1; cycle <= cycles && !g_stop; ++cycle) {
    std::fprintf(stderr, "cluster_bench: cycle %d of %d\n", cycle, cycles);
    auto dir = MakeLabDir();
    if (!dir) {
      std::perror("cluster_bench: mkdtemp");
      return std::nullopt;
    }
    options.dir = *dir;
    Lab lab(options);
    LabGuard guard(&lab);
    std::ostringstream progress;
    auto start = Clock::now();
    if (Status s = lab.Up(progress); !s.ok()) {
      std::fprintf(stderr, "cluster_bench: bring-up failed: %s\n", s.message().c_str());
      return std::nullopt;
    }
    ups.push_back(Since(start));
    if (version.empty()) version = FirstLine(lab.Client({"sinfo", "--version"}).out);
    start = Clock::now();
    if (Status s = guard.Down(); !s.ok()) {
      std::fprintf(stderr, "cluster_bench: tear-down failed: %s\n", s.message().c_str());
      return std::nullopt;
    }
    downs.push_back(Since(start));
  }
  return CycleTimes{ups, downs, version};
}

void PrintCycles(const CycleTimes& times, int cycles, const std::string& command) {
  const auto& [ups, downs, version] = times;
  std::printf("cluster_bench on %s; %s (sinfo --version)\n", MachineLine().c_str(),
              version.c_str());
  std::printf("command: %s\n\n", command.c_str());
  std::printf("bring-up and tear-down of a %d-node lab, %d cycle%s (seconds)\n", kNodes, cycles,
              cycles == 1 ? "" : "s");
  std::printf("  %-6s %8s %8s %8s\n", "", "median", "min", "max");
  for (auto [name, v] : {std::pair{"up", ups}, std::pair{"down", downs}}) {
    Stats s = Summarize(v);
    std::printf("  %-6s %8.2f %8.2f %8.2f\n", name, s.median, s.min, s.max);
  }
  std::fflush(stdout);
}

// Each step's times over the runs: the inject call, each effect, the heal call, the recovery.
void PrintRuns(const Plan& plan, const std::vector<RunResult>& runs) {
  std::vector<double> injects, heals;
  std::vector<std::vector<Observation>> effects(plan.effects.size());
  std::vector<Observation> recoveries;
  for (const RunResult& r : runs) {
    injects.push_back(r.inject_s);
    heals.push_back(r.heal_s);
    for (size_t i = 0; i < effects.size(); ++i) effects[i].push_back(r.effects[i]);
    recoveries.push_back(r.recovery);
  }
  PrintRow("inject call", Describe(injects));
  for (size_t i = 0; i < effects.size(); ++i) PrintCheck(plan.effects[i], effects[i]);
  PrintRow("heal call", Describe(heals));
  PrintCheck(plan.recovery, recoveries);
}

// Runs one fault `repeats` times, each healed and the lab ready again before the next, and prints
// what it measured. An error (a fault without a plan, a failed heal, a lab not ready) stops the
// bench.
Status MeasureFault(Lab& lab, const Probe& probe, const std::string& fault, int repeats) {
  const FaultInfo& info = *std::find_if(FaultCatalog().begin(), FaultCatalog().end(),
                                        [&](const FaultInfo& f) { return f.name == fault; });
  std::vector<RunResult> runs;
  Plan plan;
  std::string error;
  for (int run = 1; run <= repeats && error.empty() && !g_stop; ++run) {
    std::fprintf(stderr, "cluster_bench: %s, run %d of %d\n", fault.c_str(), run, repeats);
    plan = MakePlan(lab, probe, fault);
    if (plan.target.empty()) {
      error = "cluster_bench has no plan for this fault (what to watch for and how it heals); "
              "not injected, not measured";
      break;
    }
    RunResult r = RunFault(lab, plan, fault);
    error = r.error;
    if (error.empty()) {
      if (!ActiveFaults(lab).empty()) error = "a fault is still recorded after the heal";
      if (Status s = lab.WaitReady(seconds(120)); !s.ok()) {
        error = "the lab is not ready after " + fault + ": " + s.message();
      }
    }
    if (r.error.empty()) runs.push_back(std::move(r));
  }
  std::printf("\n%s (%s): %s\n", fault.c_str(), plan.target.c_str(), info.what.c_str());
  if (!runs.empty()) PrintRuns(plan, runs);
  std::fflush(stdout);
  if (!error.empty()) return Status::Error(error);
  return {};
}

// Every chosen fault in one lab, each left healed and the lab ready before the next, then the
// lab taken down and the report closed; 0 when all were measured and the lab went down, 1
// otherwise.
int MeasureFaults(LabOptions& options, const std::vector<std::string>& chosen, int repeats,
                  Clock::time_point bench_start) {
  auto dir = MakeLabDir();
  if (!dir) {
    std::perror("cluster_bench: mkdtemp");
    return 1;
  }
  options.dir = *dir;
  Lab lab(options);
  LabGuard guard(&lab);
  std::ostringstream progress;
  if (Status s = lab.Up(progress); !s.ok()) {
    std::fprintf(stderr, "cluster_bench: bring-up failed: %s\n", s.message().c_str());
    return 1;
  }
  std::printf(
      "\nfaults, %d run%s each, polled every %d ms. An effect counts from the start of the "
      "inject call\nto the issue of the first command that showed it; a recovery from the "
      "start of the heal\ncall to the answer of the first command that showed it. [what "
      "that command saw]\n",
      repeats, repeats == 1 ? "" : "s", static_cast<int>(kPoll.count()));
  Probe probe(lab);
  int exit_code = 0;
  for (const std::string& fault : chosen) {
    if (g_stop) break;
    if (Status s = MeasureFault(lab, probe, fault, repeats); !s.ok()) {
      std::printf("  error: %s\n", s.message().c_str());
      std::fprintf(stderr, "cluster_bench: %s; stopping\n", s.message().c_str());
      exit_code = 1;
      break;
    }
  }
  if (g_stop && exit_code == 0) {
    std::fprintf(stderr, "cluster_bench: interrupted\n");
    exit_code = 1;
  }
  Status down = guard.Down();
  std::printf("\nlab down: %s\n", down.ok()
                                      ? "every daemon stopped, no mount left, its directory removed"
                                      : down.message().c_str());
  if (!down.ok()) exit_code = 1;
  std::printf(
      "These are measurements of one machine, the one named above, possibly shared with "
      "other work.\nThe node faults' times follow the lab's slurm.conf timers "
      "(SlurmdTimeout=10, HealthCheckInterval=5)\nmore than the hardware. Total: %.0f s.\n",
      Since(bench_start));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  slurm_rca::live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) +
                                   "/scenarios/live/templates");
  auto bench_start = Clock::now();
  CLI::App app{"cluster_bench: live lab bring-up/tear-down and fault inject/heal times"};
  int cycles = 3, repeats = 1, port_base = 15800;  // below the ephemeral range
  std::vector<std::string> faults;
  app.add_option("--cycles", cycles, "Bring-up/tear-down cycles")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--faults", faults, "Faults to measure, comma-separated (default: all)")
      ->delimiter(',');
  app.add_option("--repeats", repeats, "Runs of each fault")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--port-base", port_base, "Ports of the bench's labs (as rca-bench cluster up)")
      ->check(CLI::Range(1024, 65000))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cluster_bench: %s (see cluster_bench --help)\n", e.what());
    return 2;
  }
  std::optional<std::vector<std::string>> chosen = ChosenFaults(faults);
  if (!chosen) return 2;
  if (::geteuid() != 0) {
    std::fprintf(stderr,
                 "cluster_bench: needs root (the lab starts daemons, mounts and nftables rules); "
                 "run it with sudo\n");
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  LabOptions options{.nodes = kNodes, .port_base = port_base};

  // 1. Bring-up and tear-down cycles, each in a fresh directory.
  std::optional<CycleTimes> times = TimeCycles(options, cycles);
  if (!times) return 1;
  if (g_stop) {
    std::fprintf(stderr, "cluster_bench: interrupted; the lab is down\n");
    return 1;
  }
  PrintCycles(*times, cycles, command);

  // 2. Every chosen fault in one lab, each left healed and the lab ready before the next.
  return MeasureFaults(options, *chosen, repeats, bench_start);
}

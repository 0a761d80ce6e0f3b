#include "scenarios/live/runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/topics.h"
#include "scenarios/live/capture.h"
#include "scenarios/measure.h"


namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;
namespace sc = scenarios;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// Waits for any child to end: its pid and exit code (128 + signal when killed); pid <= 0 when
// there is none.
// Ctrl-C or SIGTERM while children run labs: the parent notes it (waitpid returns EINTR), stops
// the children and takes their labs down by PID, so an interrupted record or smoke leaves nothing
// running. Children get the default handlers back: they die, their labs are the parent's to stop.
std::atomic<int> g_interrupted{0};

void OnInterrupt(int sig) { g_interrupted.store(sig); }

class InterruptWatch {
 public:
  InterruptWatch() {
    struct sigaction sa {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid must return
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptWatch() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  static void InChild() {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// Stops each child (SIGTERM, reaped) and takes down the lab in its directory.
void StopChildren(const std::map<pid_t, std::string>& lab_of, std::ostream& progress) {
  for (const auto& [pid, dir] : lab_of) ::kill(pid, SIGTERM);
  for (const auto& [pid, dir] : lab_of) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  for (const auto& [pid, dir] : lab_of) {
    Lab lab(LabOptions{.dir = dir});
    if (lab.exists()) lab.Down(progress);
  }
}

std::pair<pid_t, int> WaitAnyChild() {
  int status = 0;
  pid_t pid = ::waitpid(-1, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status)
                               : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return {pid, code};
}

std::string Fixed(double v, int digits = 1) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

}  // namespace

// The node slurm-mcp is taken to run on: its nvidia-smi and slurmd log are what the gpu and
// logs topics read. A GPU fault's node, else the first GPU node.
std::string HostNode(const sc::Scenario& s) {
  // On the lab of hosts, a network fault on a compute host cK: its first node (lab.h: two nodes
  // a host), whose slurmd log is the one that shows the node side of the fault.
  for (const sc::FaultRef& f : s.faults) {
    if (f.name != "net-cut" && f.name != "net-loss" && f.name != "net-throttle") continue;
    for (const auto& [k, v] : f.target) {
      if (k == "host" && v.size() > 1 && v.size() < 5 && v[0] == 'c' &&
          std::all_of(v.begin() + 1, v.end(), ::isdigit)) {
        return "node" + std::to_string(2 * std::stoi(v.substr(1)) - 1);
      }
    }
  }
  for (const sc::FaultRef& f : s.faults) {
    if (f.name != "gpu-fake") continue;
    for (const auto& [k, v] : f.target) {
      if (k == "node") return v;
    }
    return FaultTarget{}.node;
  }
  return "node1";
}

mcp::LiveOptions LiveOptionsFor(const Lab& lab, const std::string& host, double timeout_s) {
  mcp::LiveOptions live;
  // The node's own bin (its nvidia-smi), then the lab's Slurm clients (a built release's first).
  live.executor.trusted_dirs = {lab.Path("nodes/" + host + "/bin")};
  for (const std::string& d : lab.SlurmDirs()) live.executor.trusted_dirs.push_back(d);
  live.executor.slurm_conf = lab.SlurmConf();
  live.executor.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  live.clusters = {lab.options().cluster};
  live.cache_ttl_seconds = 0;
  live.max_per_minute = 0;
  live.max_concurrent = 8;
  live.log_files = {{"slurmctld", lab.Path("log/slurmctld.log")},
                    {"slurmdbd", lab.Path("log/slurmdbd.log")},
                    {"slurmd", lab.Path("log/slurmd-" + host + ".log")}};
  return live;
}

std::vector<std::string> LiveServeArgs(const Lab& lab, const std::string& host, double timeout_s) {
  mcp::LiveOptions o = LiveOptionsFor(lab, host, timeout_s);
  std::string dirs;
  for (const std::string& d : o.executor.trusted_dirs) dirs += (dirs.empty() ? "" : ":") + d;
  std::vector<std::string> args = {"--slurm-conf", o.executor.slurm_conf.value_or(lab.SlurmConf()),
                                   "--clusters", lab.options().cluster,
                                   "--trusted-dirs", dirs,
                                   "--timeout", std::to_string(timeout_s),
                                   "--cache-ttl", "0",
                                   "--max-per-minute", "0",
                                   "--max-concurrent", "8"};
  for (const auto& [daemon, path] : o.log_files) {
    args.push_back("--log-file");
    args.push_back(daemon + "=" + path);
  }
  return args;
}

namespace {

// A live back-end whose daemon logs start where they stood when it was made, so that what a
// scenario sees in the logs is what happened during it (the smoke shares one lab).
using LogSizes = std::map<std::string, std::uintmax_t>;

LogSizes SizesOf(const mcp::LiveOptions& o) {
  LogSizes sizes;
  for (const auto& [d, path] : o.log_files) {
    std::error_code ec;
    auto size = fs::file_size(path, ec);
    sizes[d] = ec ? 0 : size;
  }
  return sizes;
}

class SinceBackend : public mcp::Backend {
 public:
  SinceBackend(mcp::LiveOptions o, LogSizes start)
      : files_(o.log_files), start_(std::move(start)), live_(std::move(o)) {}
  std::string Label() const override { return "live"; }
  mcp::Evidence Read(const std::vector<std::string>& argv) override { return live_.Read(argv); }
  mcp::Evidence ReadLog(const std::string& daemon, int lines) override {
    mcp::Evidence e = live_.ReadLog(daemon, lines);
    auto f = files_.find(daemon);
    if (!e.ok() || f == files_.end()) return e;
    std::ifstream in(f->second, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(start_[daemon]));
    std::stringstream s;
    s << in.rdbuf();
    e.out = s.str();
    return e;
  }

 private:
  std::map<std::string, std::string> files_;
  LogSizes start_;
  mcp::LiveBackend live_;
};

// --- workload ---------------------------------------------------------------------------------

std::string JobCommand(const sc::Workload& w) {
  std::string n = std::to_string(w.seconds);
  if (w.kind == "true") return "true";
  if (w.kind == "flaky") {
    // Fails one job in twenty, chosen by a hash of the job id: the failures have no cause the
    // cluster can show.
    return "sleep " + n +
           "; h=$(( (SLURM_JOB_ID * 2654435761) % 4294967296 )); "
           "if [ $(( (h / 65536) % 20 )) -eq 0 ]; then echo 'worker: exited unexpectedly' >&2; "
           "exit 1; fi";
  }
  if (w.kind == "sigkill") return "sleep " + n + "; kill -9 $$";
  return "sleep " + n;
}

Status Submit(const Lab& lab, const sc::Workload& w, std::ostream& progress) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "-J", "rca-" + w.name,
                                   "--chdir=" + lab.Path("work"), "-o", "/dev/null",
                                   "-N", std::to_string(w.nodes)};
  if (!w.partition.empty()) argv.insert(argv.end(), {"-p", w.partition});
  if (!w.account.empty()) argv.insert(argv.end(), {"-A", w.account});
  if (!w.nodelist.empty()) argv.insert(argv.end(), {"-w", w.nodelist});
  argv.insert(argv.end(), {"--wrap", JobCommand(w)});
  int ok = 0;
  std::string last_error;
  for (int i = 0; i < w.count; ++i) {
    ToolResult r = lab.Client(argv, std::chrono::seconds(15));
    if (r.ok()) {
      ++ok;
    } else {
      last_error = r.Summary();
    }
  }
  progress << "  workload " << w.name << ": " << ok << " of " << w.count << " submitted"
           << (last_error.empty() ? "" : " (" + last_error + ")") << "\n";
  // A refused submission can be the scenario's evidence (an unwritable state save location):
  // only a workload that submitted nothing at all and was expected to is reported, not fatal.
  return {};
}

// Submits the jobs of negative at_s and gives them 5 s to start.
void SubmitBeforeTheFault(const Lab& lab, const sc::Scenario& s, std::ostream& progress) {
  bool any = false;
  for (const sc::Workload& w : s.workload) {
    if (w.at_s < 0) {
      Submit(lab, w, progress);
      any = true;
    }
  }
  if (any) std::this_thread::sleep_for(std::chrono::seconds(5));
}

void CancelWorkload(const Lab& lab, const sc::Scenario& s) {
  std::set<std::string> names;
  for (const sc::Workload& w : s.workload) names.insert("rca-" + w.name);
  for (const std::string& n : names) lab.Client({"scancel", "-n", n}, std::chrono::seconds(15));
}

// --- snapshots --------------------------------------------------------------------------------

// Reads every planned read (eight at a time) and writes the streams, named by their content.
Json TakeSnapshot(const Lab& lab, const std::string& host, double timeout_s, const fs::path& out,
                  double offset, const std::string& comment) {
  // A fresh back-end each time: the programs (nvidia-smi) are resolved when it is made.
  mcp::LiveBackend backend(LiveOptionsFor(lab, host, timeout_s));
  const std::vector<sc::PlannedRead>& plan = sc::RecorderPlan();
  std::vector<mcp::Evidence> got(plan.size());
  std::atomic<size_t> next{0};
  std::string taken_at = NowIso();
  // On the lab of hosts the reads are made from the login host, as slurm-mcp deployed there
  // makes them: each reader thread moves onto it first (HostNet::EnterThread).
  std::optional<HostNet> net;
  if (lab.options().hosts) {
    if (base::Result<HostNet> loaded = lab.Net(); loaded.ok()) net = *loaded;
  }
  auto worker = [&] {
    Status entered;
    if (lab.options().hosts) {
      entered = net ? net->EnterThread("login") : Status::Error("no host network to read from");
    }
    for (size_t i; (i = next++) < plan.size();) {
      if (!entered.ok()) {
        // A read from the machine's own namespace would reach no host: not made, and said.
        got[i].outcome = mcp::Evidence::Outcome::kUnavailable;
        got[i].argv = plan[i].argv;
        got[i].cause = "not read: the recorder could not move onto the login host (" +
                       entered.message() + ")";
        continue;
      }
      const sc::PlannedRead& p = plan[i];
      got[i] = p.topic->source == mcp::Source::kDaemonLog
                   ? backend.ReadLog(p.argv[1], mcp::kLogTailLines)
                   : backend.Read(p.argv);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();

  const std::string dir = lab.options().dir;
  Json reads = Json::array();
  for (size_t i = 0; i < plan.size(); ++i) {
    const mcp::Evidence& e = got[i];
    auto stream = [&](const std::string& text) {
      std::string body = ReplaceAll(text, dir, kLabPlaceholder);
      std::string name = "reads/" + sc::Sha256Hex(body, 16);
      if (!fs::exists(out / name)) WriteText(out / name, body);
      return name;
    };
    Json r = {{"argv", plan[i].argv},
              {"exit_code", e.ok() ? 0 : e.exit_code},
              {"outcome", mcp::OutcomeName(e.outcome)},
              {"duration_ms", static_cast<long>(e.seconds * 1000)},
              {"timed_out", e.outcome == mcp::Evidence::Outcome::kTimedOut},
              {"stdout_file", stream(e.out)},
              {"stderr_file", stream(e.err)},
              {"cause", e.ok() ? "" : ReplaceAll(e.cause, dir, kLabPlaceholder)},
              {"topic", plan[i].topic->name}};
    if (e.out_truncated) r["stdout_truncated"] = true;
    if (e.outcome == mcp::Evidence::Outcome::kTimedOut) r["exit_code"] = -1;
    reads.push_back(std::move(r));
  }
  return {{"offset_seconds", offset}, {"taken_at", taken_at}, {"comment", comment},
          {"reads", reads}};
}

struct TrialResult {
  Status status;
  std::vector<std::optional<double>> first_seen;  // per hop: first offset its signals held
  std::vector<bool> held_before;                  // per hop: held in the baseline already
  std::string recorded_at;
  std::string slurm_version;
};

// Evaluates each hop on a recorded bundle: the first post-fault snapshot where it holds.
TrialResult Evaluate(const sc::Scenario& s, const std::string& bundle) {
  TrialResult r;
  auto opened = mcp::ReplayBackend::Open(bundle);
  if (!opened.ok()) {
    r.status = Status::Error(opened.status().message());
    return r;
  }
  std::unique_ptr<mcp::ReplayBackend> replay = std::move(opened).value();
  r.recorded_at = replay->recorded_at();
  r.slurm_version = replay->slurm_version();
  for (const sc::Hop& hop : s.causal_chain) {
    std::optional<double> first;
    for (const auto& snap : replay->snapshots()) {
      if (snap.offset_seconds < 0) continue;
      replay->SetOffset(snap.offset_seconds);
      if (sc::HopHolds(*replay, hop, nullptr, replay->slurm_version())) {
        first = snap.offset_seconds;
        break;
      }
    }
    replay->SetOffset(-1);
    r.first_seen.push_back(first);
    r.held_before.push_back(sc::HopHolds(*replay, hop, nullptr, replay->slurm_version()));
  }
  return r;
}

// What happens in a trial, at seconds after the start of its schedule: an injection or a heal
// (order 0, 1), a submission (2) or a snapshot (3), in that order at the same second.
struct Event {
  double at;
  int order;
  std::string what;
  std::function<Status()> run;
};

// A trial's manifest: the lab it ran in and its snapshots (revision 1, without trials).
Json TrialManifest(const sc::Scenario& s, const ScenarioRecordOptions& o,
                   const std::string& version, const std::string& recorded_at,
                   const std::string& host, const Json& snapshots) {
  const std::string lab =
      s.Hosts() ? "A fresh lab of hosts (ctl, db, login, c1: node[1-2], c2: node[3-4]; each a "
                  "network namespace on 198.18.0.0/15 with its own munged; scenarios/live/lab.h), "
                  "background profile busy, seed " + std::to_string(o.seed) +
                  " (scenarios/live/profile.h); the reads made from the login host; "
      : s.lab ? "A fresh lab of the large profile, " + std::to_string(s.lab->nodes) +
                  " nodes, seed " + std::to_string(o.seed) + ", history " +
                  std::to_string(s.lab->history) +
                  " (scenarios/live/large_profile.h); "
            : "A fresh 4-node lab (partitions cpu: node[1-4], gpu: node[1-2]), " +
                  (o.profile == "busy"
                       ? "background profile busy, seed " + std::to_string(o.seed) +
                             " (scenarios/live/profile.h); "
                       : std::string("background profile clean; "));
  Json manifest = {{"format", mcp::kEvidenceBundleFormat},
                   {"slurm_version", version},
                   {"scenario", s.id},
                   {"profile", s.Large() ? s.lab->profile : s.Hosts() ? "busy" : o.profile},
                   {"recorded_at", recorded_at},
                   {"generator", "rca-bench record (scenarios/live/runner.cc)"},
                   {"comment", lab +
                               "slurm-mcp taken to run on " + host +
                               " (its nvidia-smi and slurmd log). Offsets are seconds after "
                               "the fault; -1 is the baseline before it. Lab paths are "
                               "replaced by /LAB."},
                   {"snapshots", snapshots}};
  // The large lab's size is in the comment: the manifest's fields are format 2's.
  if (s.lab || o.profile == "busy") {
    manifest["seed"] = o.seed;
  }
  return manifest;
}

// Plays the events in order, each at its second after t0 (set here; later when one before it ran
// long); an injection or a heal that fails stops them and is returned.
Status PlayEvents(std::vector<Event>& events, Clock::time_point& t0,
                  const std::function<double()>& elapsed, std::ostream& progress) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.order < b.order;
  });
  Status failed;
  t0 = Clock::now();
  for (Event& e : events) {
    double wait = e.at - elapsed();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    double late = elapsed() - e.at;
    Status st = e.run();
    progress << "  +" << Fixed(elapsed()) << " s " << e.what
             << (late > 1 ? " (" + Fixed(late) + " s late)" : "")
             << (st.ok() ? "" : ": " + st.message()) << "\n";
    if (!st.ok() && e.order <= 1) {
      failed = st;
      break;
    }
  }
  return failed;
}

// One trial in a fresh lab; writes the bundle (revision 1, without trials) to `bundle`.
Status RecordTrial(const sc::Scenario& s, const std::string& lab_dir, int port_base,
                   const ScenarioRecordOptions& o, const fs::path& bundle,
                   std::ostream& progress) {
  const double timeout_s = o.read_timeout_seconds;
  // A scenario with `lab:` is recorded on its lab (the large profile); the others on 4 nodes.
  LabOptions lab_options{.dir = lab_dir, .nodes = 4, .port_base = port_base,
                         .slurm_prefix = o.slurm_prefix, .profile = o.profile, .seed = o.seed};
  if (s.Large()) {
    lab_options.profile = s.lab->profile;
    lab_options.nodes = s.lab->nodes;
    lab_options.large_history = s.lab->history;
  } else if (s.Hosts()) {
    lab_options.profile = "busy";
    lab_options.hosts = true;
  }
  Lab lab(lab_options);
  struct Down {
    Lab& lab;
    std::ostream& progress;
    ~Down() { lab.Down(progress); }
  } down{lab, progress};
  if (Status st = lab.Up(progress); !st.ok()) return st;
  std::string host = HostNode(s);
  std::string recorded_at = NowIso();
  std::string version = lab.Client({"sinfo", "--version"}).out;
  if (lab.options().hosts) {
    // The readers move onto the login host (TakeSnapshot): tried once here, so that a trial
    // whose reads could not be made fails before its fault rather than recording no evidence.
    Status entered;
    std::thread probe([&] {
      base::Result<HostNet> net = lab.Net();
      entered = net.ok() ? net->EnterThread("login") : net.status();
    });
    probe.join();
    if (!entered.ok()) return Status::Error("cannot read from the login host: " + entered.message());
  }
  version = version.substr(version.find(' ') + 1);
  version = version.substr(0, version.find('\n'));

  // Work before the fault, then the baseline.
  SubmitBeforeTheFault(lab, s, progress);
  Json snapshots = Json::array();
  snapshots.push_back(TakeSnapshot(lab, host, timeout_s, bundle, -1, "baseline, before the fault"));
  progress << "  baseline snapshot taken\n";

  std::vector<Event> events;
  Clock::time_point t0;
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  for (const sc::FaultRef& f : s.faults) {
    FaultTarget t = TargetOf(f);
    events.push_back({double(f.at_s), 0, "inject " + f.name, [&lab, f, t]() {
                        FaultOutcome o = InjectFault(lab, f.name, t);
                        return o.status;
                      }});
    if (f.heal_at_s) {
      events.push_back({double(*f.heal_at_s), 1, "heal " + f.name, [&lab, f, t]() {
                          return HealFault(lab, f.name, t).status;
                        }});
    }
  }
  for (const sc::Workload& w : s.workload) {
    if (w.at_s >= 0) {
      events.push_back({double(w.at_s), 2, "submit " + w.name,
                        [&lab, w, &progress]() { return Submit(lab, w, progress); }});
    }
  }
  for (int off : SnapshotSchedule(s)) {
    events.push_back({double(off), 3, "snapshot +" + std::to_string(off) + " s",
                      [&, off]() {
                        // The offset is when the snapshot really started (never before its
                        // scheduled time; later when an earlier one ran long).
                        double started = std::floor(elapsed() * 10) / 10;
                        Clock::time_point a = Clock::now();
                        Json snap = TakeSnapshot(lab, host, timeout_s, bundle, started, "");
                        double took = std::chrono::duration<double>(Clock::now() - a).count();
                        snap["comment"] = "scheduled at +" + std::to_string(off) + " s; took " +
                                          Fixed(took) + " s";
                        snapshots.push_back(std::move(snap));
                        return Status();
                      }});
  }
  Status failed = PlayEvents(events, t0, elapsed, progress);
  Status healed = HealScenario(lab, s, progress);
  if (!failed.ok()) return failed;
  if (!healed.ok()) return healed;

  Json manifest = TrialManifest(s, o, version, recorded_at, host, snapshots);
  if (!WriteText(bundle / "manifest.json", manifest.dump(2) + "\n")) {
    return Status::Error("cannot write " + (bundle / "manifest.json").string());
  }
  return {};
}

// Where a recorded bundle goes: FIXTURES/<id> when --fixtures is given, else the bundle set of
// the lab's profile (fixtures/<id> for clean, fixtures/busy/<id> for busy; scenarios/measure.h).
fs::path BundleOut(const sc::Scenario& s, const ScenarioRecordOptions& o) {
  if (!o.fixtures.empty()) return fs::path(o.fixtures) / s.id;
  if (!s.OwnSet().empty()) return sc::BundleDir(s.id, s.OwnSet());
  return sc::BundleDir(s.id, o.profile == "busy" ? sc::kBusySet : sc::kCleanSet);
}

}  // namespace

FaultTarget TargetOf(const sc::FaultRef& ref) {
  FaultTarget t;
  for (const auto& [k, v] : ref.target) {
    if (k == "node") t.node = v;
    if (k == "daemon") t.daemon = v;
    if (k == "reason") t.reason = v;
    if (k == "mode") t.mode = v;
    if (k == "method") t.method = v;
    if (k == "workers") t.workers = std::stoi(v);
    if (k == "seconds") t.seconds = std::stoi(v);
    if (k == "partition") t.partition = v;
    if (k == "state") t.state = v;
    if (k == "account") t.account = v;
    if (k == "qos") t.qos = v;
    if (k == "limit") t.limit = v;
    if (k == "host") t.host = v;
    if (k == "peer") t.peer = v;
    if (k == "direction") t.direction = v;
    if (k == "percent") t.percent = std::stoi(v);
    if (k == "rate") t.rate = v;
    if (k == "name") t.name = v;
  }
  return t;
}

std::string LabMisfit(const LabOptions& have, const sc::Scenario& s) {
  if (!s.lab) return "";
  if (s.Hosts() && have.hosts && have.profile == "busy") return "";
  if (s.Large() && have.profile == s.lab->profile && have.nodes >= s.lab->nodes) return "";
  if (s.Hosts()) {
    return s.id + " needs the busy lab of hosts (cluster up --hosts --profile busy); the lab in " +
           have.dir + " is " + (have.hosts ? "one of hosts" : "one host") + ", profile " +
           have.profile;
  }
  return s.id + " needs the " + s.lab->profile + " lab of " + std::to_string(s.lab->nodes) +
         " nodes; the lab in " + have.dir + " is " + have.profile + " with " +
         std::to_string(have.nodes) + " nodes";
}

Status InjectScenario(Lab& lab, const sc::Scenario& s, std::ostream& progress) {
  if (std::string why = LabMisfit(lab.options(), s); !why.empty()) {
    return Status::InvalidArgument(why);
  }
  if (s.status != "runnable") return Status::Error(s.id + " is blocked: " + s.blocked_reason);
  for (const sc::Workload& w : s.workload) {
    if (w.at_s < 0) Submit(lab, w, progress);
  }
  for (const sc::FaultRef& f : s.faults) {
    FaultOutcome o = InjectFault(lab, f.name, TargetOf(f));
    if (!o.status.ok()) return Status::Error(f.name + ": " + o.status.message());
    progress << "  " << f.name << ": " << o.message << "\n";
    if (f.heal_at_s) {
      progress << "  (the scenario heals " << f.name << " at +" << *f.heal_at_s
               << " s; by hand: rca-bench heal " << s.id << ")\n";
    }
  }
  for (const sc::Workload& w : s.workload) {
    if (w.at_s >= 0) Submit(lab, w, progress);
  }
  return {};
}

Status HealScenario(Lab& lab, const sc::Scenario& s, std::ostream& progress) {
  std::string errors;
  for (auto it = s.faults.rbegin(); it != s.faults.rend(); ++it) {
    FaultOutcome o = HealFault(lab, it->name, TargetOf(*it));
    if (!o.status.ok()) {
      errors += (errors.empty() ? "" : "; ") + it->name + ": " + o.status.message();
    } else if (o.changed) {
      progress << "  healed " << it->name << ": " << o.message << "\n";
    }
  }
  CancelWorkload(lab, s);
  if (!errors.empty()) return Status::Error(s.id + ": " + errors);
  return {};
}

Status HealAll(Lab& lab, const std::vector<sc::Scenario>& suite, std::ostream& progress) {
  std::string errors;
  for (const sc::Scenario& s : suite) {
    if (Status st = HealScenario(lab, s, progress); !st.ok()) {
      errors += (errors.empty() ? "" : "\n") + st.message();
    }
  }
  if (!errors.empty()) return Status::Error(errors);
  return {};
}

std::vector<int> SnapshotSchedule(const sc::Scenario& s) {
  std::set<int> at;
  for (int t : {5, 15, 30, 60, 90, 120, 180, 240, 300, 420, 600}) {
    if (t <= s.observe_s) at.insert(t);
  }
  for (const sc::Hop& h : s.causal_chain) {
    if (h.observable_at_s > 0 && h.observable_at_s <= s.observe_s) at.insert(h.observable_at_s);
  }
  at.insert(s.observe_s);
  return {at.begin(), at.end()};
}

namespace {

// RecordScenario's steps. Trial k (from 0) records in BASE/trial-<k+1>: its lab, its bundle and
// its log.
fs::path TrialDir(const fs::path& base, int k) {
  return base / ("trial-" + std::to_string(k + 1));
}

// Checks that every trial to reuse is there, or clears BASE for new ones.
Status PrepareTrials(const ScenarioRecordOptions& o, const fs::path& base,
                     std::ostream& progress) {
  std::error_code ec;
  if (o.reuse_trials) {
    for (int k = 0; k < o.trials; ++k) {
      if (!fs::exists(TrialDir(base, k) / "bundle" / "manifest.json")) {
        return Status::Error("no recorded trial " + TrialDir(base, k).string() + " to reuse");
      }
    }
  } else {
    // A run that was killed leaves its trials' labs up: take them down before removing them.
    for (int k = 0; k < 10; ++k) {
      Lab old(LabOptions{.dir = (TrialDir(base, k) / "lab").string()});
      if (old.exists()) old.Down(progress);
    }
    fs::remove_all(base, ec);
    fs::create_directories(base, ec);
    if (ec) return Status::Error("cannot create " + base.string() + ": " + ec.message());
  }
  return {};
}

// Forks a child that records trial k in its own lab (its log appended to when `append`, as a
// retry's is) and exits 0 when it recorded; the parent waits for it and, interrupted, stops it
// and takes its lab down. A trial is never run in the parent: a signal there would kill the
// recorder in the middle of a lab's bring-up and leave its daemons running.
pid_t ForkTrial(const sc::Scenario& s, const ScenarioRecordOptions& o, const fs::path& base,
                int k, bool append) {
  pid_t pid = ::fork();
  if (pid == 0) {
    InterruptWatch::InChild();
    std::ofstream log(TrialDir(base, k) / "trial.log", append ? std::ios::app : std::ios::trunc);
    Status st = RecordTrial(s, (TrialDir(base, k) / "lab").string(), o.port_base + 1000 * k, o,
                            TrialDir(base, k) / "bundle", log);
    if (!st.ok()) log << "FAILED: " << st.message() << "\n";
    log.flush();
    ::_exit(st.ok() ? 0 : 1);
  }
  return pid;
}

// Runs the trials, o.jobs at a time, and sets each one's exit status (0: recorded); reused
// trials count as recorded. An interruption stops the running trials and takes their labs down.
Status RunTrials(const sc::Scenario& s, const ScenarioRecordOptions& o, const fs::path& base,
                 std::vector<int>& exit_status, std::ostream& progress) {
  std::error_code ec;
  // Each trial runs in a child process with its own lab, so that trials can overlap.
  std::map<pid_t, int> running;
  int started = 0;
  auto reap_one = [&] {
    auto [pid, code] = WaitAnyChild();
    auto it = running.find(pid);
    if (pid <= 0 || it == running.end()) return;
    exit_status[it->second] = code;
    progress << "  trial " << it->second + 1 << " of " << s.id << ": "
             << (exit_status[it->second] == 0 ? "recorded" : "FAILED") << "\n";
    running.erase(it);
  };
  progress.flush();
  if (o.reuse_trials) {
    started = o.trials;
    std::fill(exit_status.begin(), exit_status.end(), 0);
  }
  InterruptWatch watch;
  while (started < o.trials || !running.empty()) {
    if (int sig = Interrupted()) {
      std::map<pid_t, std::string> labs;
      for (const auto& [pid, k] : running) labs[pid] = (TrialDir(base, k) / "lab").string();
      StopChildren(labs, progress);
      return Status::Error("interrupted (signal " + std::to_string(sig) + "): " +
                           std::to_string(labs.size()) + " trial(s) stopped, their labs down");
    }
    if (started < o.trials && static_cast<int>(running.size()) < std::max(1, o.jobs)) {
      int k = started++;
      fs::create_directories(TrialDir(base, k) / "bundle", ec);
      progress << "  trial " << k + 1 << " of " << s.id << ": lab "
               << (TrialDir(base, k) / "lab").string() << ", port base " << o.port_base + 1000 * k
               << ", log " << (TrialDir(base, k) / "trial.log").string() << "\n";
      progress.flush();
      pid_t pid = ForkTrial(s, o, base, k, /*append=*/false);
      if (pid < 0) return Status::Error("fork failed");
      running[pid] = k;
      continue;
    }
    reap_one();
  }
  return {};
}

// A trial that failed (a daemon that did not come up in time on this busy machine) is run once
// more, alone, in a child like the first time; one that fails again fails the recording with the
// end of its log. An interruption stops it and takes its lab down.
Status RetryFailedTrials(const sc::Scenario& s, const ScenarioRecordOptions& o,
                         const fs::path& base, std::vector<int>& exit_status,
                         std::ostream& progress) {
  std::error_code ec;
  InterruptWatch watch;
  for (int k = 0; k < o.trials; ++k) {
    if (exit_status[k] == 0 || o.reuse_trials || Interrupted()) continue;
    progress << "  trial " << k + 1 << " of " << s.id << " failed; running it once more\n";
    progress.flush();
    fs::remove_all(TrialDir(base, k) / "bundle", ec);
    fs::create_directories(TrialDir(base, k) / "bundle", ec);
    pid_t pid = ForkTrial(s, o, base, k, /*append=*/true);
    if (pid < 0) return Status::Error("fork failed");
    int code = 1;
    for (;;) {
      if (int sig = Interrupted()) {
        StopChildren({{pid, (TrialDir(base, k) / "lab").string()}}, progress);
        return Status::Error("interrupted (signal " + std::to_string(sig) + ") while trial " +
                             std::to_string(k + 1) + " ran once more: stopped, its lab down");
      }
      int status = 0;
      pid_t r = ::waitpid(pid, &status, 0);
      if (r == pid) {
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (r < 0 && errno != EINTR) break;
    }
    exit_status[k] = code == 0 ? 0 : 1;
  }
  for (int k = 0; k < o.trials; ++k) {
    if (exit_status[k] != 0) {
      std::ifstream in(TrialDir(base, k) / "trial.log");
      std::stringstream text;
      text << in.rdbuf();
      std::string t = text.str();
      if (t.size() > 3000) t = t.substr(t.size() - 3000);
      return Status::Error("trial " + std::to_string(k + 1) + " of " + s.id + " failed:\n" + t);
    }
  }
  return {};
}

// Each trial's first-seen offsets and baseline holds, per hop.
Json TrialRuns(const sc::Scenario& s, const std::vector<TrialResult>& results) {
  Json runs = Json::array();
  for (size_t k = 0; k < results.size(); ++k) {
    Json seen = Json::array(), before = Json::array();
    for (size_t h = 0; h < s.causal_chain.size(); ++h) {
      seen.push_back(results[k].first_seen[h] ? Json(*results[k].first_seen[h]) : Json(nullptr));
      before.push_back(static_cast<bool>(results[k].held_before[h]));
    }
    runs.push_back({{"trial", k + 1},
                    {"recorded_at", results[k].recorded_at},
                    {"first_seen_s", seen},
                    {"held_before_fault", before}});
  }
  return runs;
}

// Per hop: in how many trials it was seen, and the min, median and max first-seen offsets.
Json HopSpread(const sc::Scenario& s, const std::vector<TrialResult>& results) {
  Json spread = Json::array();
  for (size_t h = 0; h < s.causal_chain.size(); ++h) {
    std::vector<double> v;
    int missing = 0;
    for (const TrialResult& r : results) {
      if (r.first_seen[h]) {
        v.push_back(*r.first_seen[h]);
      } else {
        ++missing;
      }
    }
    std::sort(v.begin(), v.end());
    Json one = {{"hop", h + 1}, {"seen_in", v.size()}, {"not_seen_in", missing}};
    one["min_s"] = v.empty() ? Json(nullptr) : Json(v.front());
    one["median_s"] = v.empty() ? Json(nullptr) : Json(v[v.size() / 2]);
    one["max_s"] = v.empty() ? Json(nullptr) : Json(v.back());
    spread.push_back(one);
  }
  return spread;
}

// Puts trial 1's bundle, its manifest given the trials' timing, at final_out as one file: the
// pack final_out.evidence.gz (mcp/backend/bundle_pack.h). A bundle there before, pack or
// directory of the older layout, is replaced only once the new pack is in place.
Status KeepFirstTrial(const fs::path& base, const Json& trials, const fs::path& final_out) {
  // Read from the trial's directory, which stays in work_dir for --reuse.
  base::Result<mcp::BundleFiles> files = mcp::ReadBundleDirectory((TrialDir(base, 0) / "bundle").string());
  if (!files.ok()) return Status::Error("cannot read trial 1's bundle: " + files.status().message());
  Json manifest = Json::parse((*files)["manifest.json"], nullptr, false);
  if (manifest.is_discarded()) return Status::Error("trial 1's manifest does not parse");
  manifest["format"] = mcp::kEvidenceBundleFormat2;
  manifest["trials"] = trials;
  (*files)["manifest.json"] = manifest.dump(2) + "\n";
  std::error_code ec;
  fs::create_directories(final_out.parent_path(), ec);
  const std::string pack = final_out.string() + mcp::kBundlePackSuffix;
  if (Status st = mcp::WritePack(*files, pack); !st.ok()) return st;
  // Its own error code: is_directory reports a path that is not there (the usual case) in it.
  std::error_code is_dir_ec;
  if (fs::is_directory(final_out, is_dir_ec)) {
    fs::remove_all(final_out, ec);
    if (ec) {
      return Status::Error("packed " + pack + ", but the old directory stays: " + ec.message());
    }
  }
  return {};
}

}  // namespace

Status RecordScenario(const sc::Scenario& s, const ScenarioRecordOptions& o,
                      std::ostream& progress) {
  if (s.status != "runnable") return Status::Error(s.id + " is blocked: " + s.blocked_reason);
  if (o.trials < 1) return Status::Error("--trials must be at least 1");
  if (s.Large() && o.jobs > 1) {
    // Each trial's lab is up to 1,024 slurmd (8 GiB) and spans more than the 1,000 ports
    // between two trials' port bases.
    return Status::Error(s.id + " is recorded on the large lab: one trial at a time (--jobs 1)");
  }
  fs::path work = o.work_dir.empty() ? fs::path("/tmp") : fs::path(o.work_dir);
  // Short: the labs' Unix socket paths must stay under 108 bytes.
  fs::path base = work / ("rca-rec-" + s.TaskId());
  if (Status st = PrepareTrials(o, base, progress); !st.ok()) return st;
  std::vector<int> exit_status(o.trials, -1);
  if (Status st = RunTrials(s, o, base, exit_status, progress); !st.ok()) return st;
  if (Status st = RetryFailedTrials(s, o, base, exit_status, progress); !st.ok()) return st;

  // Timing over the trials; the bundle keeps the first trial's reads.
  std::vector<TrialResult> results;
  for (int k = 0; k < o.trials; ++k) {
    results.push_back(Evaluate(s, (TrialDir(base, k) / "bundle").string()));
    if (!results.back().status.ok()) return results.back().status;
  }
  Json runs = TrialRuns(s, results);
  Json spread = HopSpread(s, results);
  Json trials = {{"count", o.trials},
                 {"kept", 1},
                 {"note", "first_seen_s: the first snapshot offset (seconds after the fault) at "
                          "which all of a hop's signals held; null: never within the window. "
                          "The offsets are those of the snapshot schedule, so a spread is "
                          "quantised to it."},
                 {"schedule_s", SnapshotSchedule(s)},
                 {"hops", spread},
                 {"runs", runs}};

  fs::path final_out = BundleOut(s, o);
  if (Status st = KeepFirstTrial(base, trials, final_out); !st.ok()) return st;
  for (size_t h = 0; h < s.causal_chain.size(); ++h) {
    progress << "  hop " << h + 1 << " " << s.causal_chain[h].node << ": first seen at "
             << spread[h]["min_s"].dump() << ".." << spread[h]["max_s"].dump() << " s in "
             << spread[h]["seen_in"].get<int>() << " of " << o.trials << " trials\n";
  }
  progress << "recorded " << final_out.string() << mcp::kBundlePackSuffix << " (trials kept in " << base.string()
           << " for --reuse)\n";
  return {};
}

std::vector<size_t> DueHeals(const sc::Scenario& s, int window_s, double elapsed_s,
                             const std::vector<bool>& healed) {
  std::vector<size_t> due;
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const sc::FaultRef& f = s.faults[i];
    // Only faults the smoke injected (at_s inside the window) and not healed yet.
    if (!f.heal_at_s || f.at_s > window_s || (i < healed.size() && healed[i])) continue;
    if (*f.heal_at_s <= elapsed_s) due.push_back(i);
  }
  return due;
}

SmokeResult SmokeScenario(Lab& lab, const sc::Scenario& s, int window_s, std::ostream& progress) {
  SmokeResult r;
  if (s.causal_chain.empty()) {
    r.status = Status::Error(s.id + " has no chain");
    return r;
  }
  HealScenario(lab, s, progress);
  if (Status st = lab.WaitReady(std::chrono::seconds(60)); !st.ok()) {
    r.status = Status::Error("not clean before " + s.id + ": " + st.message());
    return r;
  }
  std::string host = HostNode(s);
  LogSizes start = SizesOf(LiveOptionsFor(lab, host, 20));
  SubmitBeforeTheFault(lab, s, progress);
  const sc::Hop& first = s.causal_chain.front();
  {
    // Evidence that is there before the fault is no evidence of it.
    SinceBackend before(LiveOptionsFor(lab, host, 20), start);
    std::string detail;
    if (sc::HopHolds(before, first, &detail, lab.SlurmVersion())) {
      r.detail = "already held before the fault: " + detail;
      HealScenario(lab, s, progress);
      return r;
    }
  }
  Clock::time_point t0 = Clock::now();
  for (const sc::FaultRef& f : s.faults) {
    if (f.at_s > window_s) continue;
    FaultOutcome o = InjectFault(lab, f.name, TargetOf(f));
    if (!o.status.ok()) {
      r.status = Status::Error(s.id + ": inject " + f.name + ": " + o.status.message());
      HealScenario(lab, s, progress);
      return r;
    }
  }
  for (const sc::Workload& w : s.workload) {
    if (w.at_s >= 0 && w.at_s <= window_s) Submit(lab, w, progress);
  }
  // A fault the scenario heals inside its window (a supervisor restarting a daemon, a node that
  // comes back) is healed at its heal_at_s here too: the first hop may be the trace the heal
  // leaves (S31's restarted controller), and a fault left in place would never show it.
  std::vector<bool> healed_in_window(s.faults.size(), false);
  while (true) {
    double now = std::chrono::duration<double>(Clock::now() - t0).count();
    for (size_t i : DueHeals(s, window_s, now, healed_in_window)) {
      const sc::FaultRef& f = s.faults[i];
      FaultOutcome o = HealFault(lab, f.name, TargetOf(f));
      healed_in_window[i] = true;
      if (!o.status.ok()) {
        r.status = Status::Error(s.id + ": heal " + f.name + " at +" +
                                 std::to_string(*f.heal_at_s) + " s: " + o.status.message());
        HealScenario(lab, s, progress);
        return r;
      }
      progress << "  healed " << f.name << " at +" << *f.heal_at_s << " s (its heal_at_s)\n";
    }
    // The live back-end resolves nvidia-smi when made: a fresh one sees a test double.
    SinceBackend fresh(LiveOptionsFor(lab, host, 20), start);
    std::string detail;
    bool holds = sc::HopHolds(fresh, first, &detail, lab.SlurmVersion());
    double t = std::chrono::duration<double>(Clock::now() - t0).count();
    r.detail = detail;
    if (holds) {
      r.observed = true;
      r.seconds = t;
      break;
    }
    // The scenario's own window when it is longer: its first hop is claimed by then (S37's
    // refused database connections show at 26-46 s), and a pass comes as soon as it shows.
    if (t > std::max(window_s, s.observe_s)) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  Status healed = HealScenario(lab, s, progress);
  if (!healed.ok()) r.status = healed;
  return r;
}

namespace {

// One scenario in a fresh lab: Up, SmokeScenario, Down. Writes its result line (and, when it
// failed, the detail and the lab's progress) to out; returns whether it passed.
bool SmokeInFreshLab(const sc::Scenario& s, const LabOptions& options, int window_s,
                     std::ostream& out) {
  Lab lab(options);
  std::ostringstream detail;
  SmokeResult r;
  if (Status st = lab.Up(detail); !st.ok()) {
    r.status = st;
  } else {
    r = SmokeScenario(lab, s, window_s, detail);
  }
  if (Status st = lab.Down(detail); !st.ok() && r.status.ok()) r.status = st;
  bool ok = r.status.ok() && r.observed;
  std::ostringstream line;
  line << (ok ? "ok    " : "FAIL  ") << std::left << std::setw(44) << s.id << " "
       << (r.observed ? "hop 1 after " + std::to_string(static_cast<int>(r.seconds)) + " s"
                      : "hop 1 not seen in " + std::to_string(std::max(window_s, s.observe_s)) +
                            " s")
       << (r.status.ok() ? "" : "; " + r.status.message()) << "\n";
  if (!ok) line << "      " << r.detail << "\n" << detail.str();
  out << line.str();
  out.flush();
  return ok;
}

}  // namespace

int SmokeSuite(const std::vector<const sc::Scenario*>& scenarios, const SmokeSuiteOptions& o,
               std::ostream& out) {
  auto started = Clock::now();
  int jobs = std::max(1, o.jobs);
  std::error_code ec;
  fs::create_directories(o.lab.dir, ec);
  if (ec) {
    out << "FAIL  cannot create " << o.lab.dir << ": " << ec.message() << "\n";
    return static_cast<int>(scenarios.size());
  }
  auto slot_options = [&](int slot) {
    LabOptions lab = o.lab;
    lab.dir = (fs::path(o.lab.dir) / std::to_string(slot + 1)).string();
    lab.port_base = o.lab.port_base + 1000 * slot;
    return lab;
  };
  int missed = 0;
  if (jobs == 1) {
    for (const sc::Scenario* s : scenarios) missed += !SmokeInFreshLab(*s, slot_options(0), o.window_s, out);
  } else {
    // Each scenario in a child process with the lab of a free slot; its output goes to a file
    // that is printed whole when it ends, so that lines of scenarios running at once never mix.
    std::map<pid_t, std::pair<int, fs::path>> running;  // pid -> slot, log
    std::vector<bool> busy(static_cast<size_t>(jobs), false);
    auto reap_one = [&] {
      auto [pid, code] = WaitAnyChild();
      auto it = running.find(pid);
      if (pid <= 0 || it == running.end()) return;
      bool ok = code == 0;
      std::ifstream in(it->second.second);
      std::stringstream text;
      text << in.rdbuf();
      out << text.str();
      if (text.str().empty()) out << "FAIL  " << it->second.second.stem().string() << " (its child ended with code " << code << " and wrote nothing)\n";
      out.flush();
      missed += !ok;
      busy[static_cast<size_t>(it->second.first)] = false;
      running.erase(it);
    };
    out.flush();
    InterruptWatch watch;
    auto stop_all = [&] {
      std::map<pid_t, std::string> labs;
      for (const auto& [pid, slot_log] : running) labs[pid] = slot_options(slot_log.first).dir;
      StopChildren(labs, out);
      out << "interrupted: " << labs.size() << " scenario(s) stopped, their labs down\n";
      missed += static_cast<int>(labs.size());
      running.clear();
    };
    for (const sc::Scenario* s : scenarios) {
      while (static_cast<int>(running.size()) >= jobs && !Interrupted()) reap_one();
      if (Interrupted()) {
        stop_all();
        break;
      }
      int slot = static_cast<int>(std::find(busy.begin(), busy.end(), false) - busy.begin());
      fs::path log = fs::path(o.lab.dir) / (s->TaskId() + ".log");
      pid_t pid = ::fork();
      if (pid == 0) {
        InterruptWatch::InChild();
        std::ofstream file(log);
        bool ok = SmokeInFreshLab(*s, slot_options(slot), o.window_s, file);
        file.flush();
        ::_exit(ok ? 0 : 1);
      }
      if (pid < 0) {
        out << "FAIL  " << s->id << ": fork failed\n";
        ++missed;
        continue;
      }
      busy[static_cast<size_t>(slot)] = true;
      running[pid] = {slot, log};
    }
    while (!running.empty() && !Interrupted()) reap_one();
    if (!running.empty()) stop_all();
  }
  double took = std::chrono::duration<double>(Clock::now() - started).count();
  out << scenarios.size() - static_cast<size_t>(missed) << " of " << scenarios.size()
      << " scenarios showed their first hop through the live back-end (" << static_cast<int>(took)
      << " s, " << jobs << " at once)\n";
  return missed;
}

int Interrupted() { return g_interrupted.load(); }

}  // namespace slurm_rca::live

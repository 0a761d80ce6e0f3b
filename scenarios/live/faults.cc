#include "scenarios/live/faults.h"

#include <signal.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "base/file.h"

namespace slurm_rca::live {

using base::Status;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"};

FaultOutcome Done(std::string message) { return {Status(), true, std::move(message)}; }
FaultOutcome Nothing(std::string message) { return {Status(), false, std::move(message)}; }
FaultOutcome Failed(std::string message) {
  return {Status::Error(message), false, ""};
}


// DIR/faults/KEY records an injected fault and what healing it needs.
struct Record {
  const Lab& lab;
  std::string key;

  std::string path() const { return lab.Path("faults/" + key); }
  bool exists() const { return fs::exists(path()); }
  std::map<std::string, std::string> Read() const {
    std::map<std::string, std::string> kv;
    std::istringstream in(base::ReadFile(path()).value_or(""));
    std::string line;
    while (std::getline(in, line)) {
      size_t eq = line.find('=');
      if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return kv;
  }
  bool Write(const std::map<std::string, std::string>& kv) const {
    std::error_code ec;
    fs::create_directories(lab.Path("faults"), ec);
    std::ofstream out(path(), std::ios::trunc);
    for (const auto& [k, v] : kv) out << k << "=" << v << "\n";
    return static_cast<bool>(out);
  }
  void Remove() const { fs::remove(path()); }
};

bool ValidNode(const Lab& lab, const std::string& node) {
  auto names = lab.NodeNames();
  return std::find(names.begin(), names.end(), node) != names.end();
}

// "STATE|REASON" of a node, from sinfo.
std::pair<std::string, std::string> NodeState(const Lab& lab, const std::string& node) {
  ToolResult r = lab.Client({"sinfo", "-h", "-n", node, "-o", "%T|%E"}, std::chrono::seconds(15));
  std::string line = r.out.substr(0, r.out.find('\n'));
  size_t bar = line.find('|');
  if (!r.ok() || bar == std::string::npos) return {"", ""};
  std::string reason = line.substr(bar + 1);
  if (reason == "none") reason.clear();
  return {line.substr(0, bar), reason};
}

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

bool IsDrained(const std::string& state) { return state.find("drain") != std::string::npos; }

// After a resume the controller shows the node as not responding ("idle*") until its next
// ping answers, usually within a second. Waits for that (up to 20 s) so that a healed node is
// back in its prior state when heal returns.
void WaitResponding(const Lab& lab, const std::string& node) {
  for (int i = 0; i < 80; ++i) {
    std::string state = NodeState(lab, node).first;
    if (!state.empty() && state.find('*') == std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

FaultOutcome SignalFault(Lab& lab, const std::string& daemon, int sig, bool inject,
                         const std::string& key) {
  Record rec{lab, key};
  auto id = lab.DaemonId(daemon);
  if (!id || !IsAlive(*id)) return Failed(daemon + " is not running: is the lab up?");
  bool stopped = ProcessState(*id).value_or('?') == 'T';
  // A signal is delivered asynchronously: wait until /proc shows the new state.
  auto settle = [&](bool want_stopped) {
    for (int i = 0; i < 100; ++i) {
      if ((ProcessState(*id).value_or('?') == 'T') == want_stopped) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  if (inject) {
    if (stopped) return Nothing(daemon + " is already stopped (SIGSTOP)");
    SignalProcess(*id, sig);
    settle(true);
    rec.Write({{"pid", id->ToString()}});
    return Done("sent SIGSTOP to " + daemon + " (pid " + std::to_string(id->pid) + ")");
  }
  rec.Remove();
  if (!stopped) return Nothing(daemon + " is not stopped");
  SignalProcess(*id, SIGCONT);
  settle(false);
  return Done("sent SIGCONT to " + daemon + " (pid " + std::to_string(id->pid) + ")");
}

// A daemon stopped (SIGTERM and wait, or SIGKILL when kill) on inject and started again on heal.
FaultOutcome StopStartFault(Lab& lab, const std::string& daemon, bool inject,
                            const std::string& key, bool kill) {
  Record rec{lab, key};
  auto id = lab.DaemonId(daemon);
  bool alive = id && IsAlive(*id);
  if (inject) {
    if (!alive) {
      return rec.exists() ? Nothing(daemon + " is already stopped")
                          : Failed(daemon + " is not running: is the lab up?");
    }
    if (kill) {
      SignalProcess(*id, SIGKILL);
      for (int i = 0; i < 100 && IsAlive(*id); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    } else if (Status s = lab.StopDaemon(daemon); !s.ok()) {
      return Failed(s.message());
    }
    rec.Write({{"daemon", daemon}, {"pid", id->ToString()}});
    return Done(std::string(kill ? "sent SIGKILL to " : "stopped ") + daemon + " (" +
                (kill ? "" : "SIGTERM to ") + "pid " + std::to_string(id->pid) + ")");
  }
  if (alive) {
    rec.Remove();
    return Nothing(daemon + " is running");
  }
  std::ostringstream progress;
  if (Status s = lab.StartDaemon(daemon, progress); !s.ok()) return Failed(s.message());
  rec.Remove();
  auto now = lab.DaemonId(daemon);
  return Done("started " + daemon + " again (pid " + std::to_string(now ? now->pid : 0) + ")");
}

FaultOutcome StateSaveReadonly(Lab& lab, const FaultTarget& t, bool inject) {
  Record rec{lab, "statesave-readonly"};
  std::string state = lab.Path("state");
  bool mounted = !MountsUnder(state).empty();
  if (inject) {
    if (rec.exists()) return Nothing("StateSaveLocation is already unwritable");
    if (t.method == "bind-ro") {
      if (::mount(state.c_str(), state.c_str(), nullptr, MS_BIND, nullptr) != 0) {
        return Failed("mount --bind " + state + ": " + std::strerror(errno));
      }
      if (::mount(nullptr, state.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) !=
          0) {
        std::string err = std::strerror(errno);
        ::umount2(state.c_str(), 0);
        return Failed("remount read-only " + state + ": " + err);
      }
    } else if (t.method == "immutable") {
      std::string chattr = lab.Program("chattr");
      if (chattr.empty()) return Failed("chattr is not installed (Debian package e2fsprogs)");
      ToolResult r = RunTool({chattr, "-R", "+i", state}, kEnv, std::chrono::seconds(10));
      if (!r.ok()) return Failed("chattr +i: " + r.Summary() + " (needs ext4 or similar)");
    } else {
      return Failed("unknown --method " + t.method + " (bind-ro or immutable)");
    }
    rec.Write({{"method", t.method}});
    return Done("made " + state + " unwritable (" + t.method + ")");
  }
  if (!rec.exists() && !mounted) return Nothing("StateSaveLocation is writable");
  std::string method = rec.Read()["method"];
  if (method == "immutable") {
    ToolResult r = RunTool({lab.Program("chattr"), "-R", "-i", state}, kEnv,
                           std::chrono::seconds(10));
    if (!r.ok()) return Failed("chattr -i: " + r.Summary());
  }
  for (const std::string& m : MountsUnder(state)) {
    if (::umount2(m.c_str(), 0) != 0) return Failed("umount " + m + ": " + std::strerror(errno));
  }
  rec.Remove();
  return Done("made " + state + " writable again");
}

FaultOutcome RpcFlood(Lab& lab, const FaultTarget& t, bool inject) {
  Record rec{lab, "rpc-flood"};
  std::string ids_path = lab.Path("run/flood.ids");
  std::vector<ProcessId> alive;
  {
    std::ifstream in(ids_path);
    std::string line;
    while (std::getline(in, line)) {
      if (auto id = ProcessId::Parse(line); id && IsAlive(*id)) alive.push_back(*id);
    }
  }
  if (inject) {
    if (!alive.empty()) return Nothing(std::to_string(alive.size()) + " flood workers already run");
    if (t.workers < 1 || t.workers > 256) return Failed("--workers must be between 1 and 256");
    if (t.seconds < 1 || t.seconds > 3600) return Failed("--seconds must be between 1 and 3600");
    std::string squeue = lab.Program("squeue");
    std::string script = "end=$(( $(date +%s) + " + std::to_string(t.seconds) +
                         " )); while [ $(date +%s) -lt $end ]; do " + squeue +
                         " >/dev/null 2>&1; done";
    std::ofstream ids(ids_path, std::ios::trunc);
    for (int w = 0; w < t.workers; ++w) {
      SpawnResult s = SpawnDaemon({"/bin/sh", "-c", script}, lab.ClientEnv(),
                                  lab.Path("log/flood.log"));
      if (!s.id) return Failed(s.error);
      ids << s.id->ToString() << "\n";
    }
    rec.Write({{"workers", std::to_string(t.workers)}, {"seconds", std::to_string(t.seconds)}});
    return Done("started " + std::to_string(t.workers) + " squeue loops (each stops after " +
                std::to_string(t.seconds) + " s); PIDs in " + ids_path);
  }
  for (const ProcessId& id : alive) {
    SignalProcess(id, SIGKILL, /*group=*/true);
    StopProcess(id, std::chrono::seconds(2));
  }
  ReapChildren();
  fs::remove(ids_path);
  rec.Remove();
  if (alive.empty()) return Nothing("no flood workers run");
  return Done("stopped " + std::to_string(alive.size()) + " flood workers by PID");
}

std::string TableName(const Lab& lab, const std::string& daemon) {
  std::size_t h = std::hash<std::string>{}(lab.options().dir);
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08zx", h & 0xffffffff);
  std::string d = daemon;
  std::replace(d.begin(), d.end(), '-', '_');
  return std::string("slurm_rca_") + hex + "_" + d;
}

// Brings a node back after its slurmd was unreachable: the controller set it DOWN ("Not
// responding") and, with ReturnToService=2, returns it only at a later ping (about 20 s);
// resuming it brings it back within a second. A node drained before keeps its drain.
void RecoverNode(const Lab& lab, const std::string& node,
                 const std::map<std::string, std::string>& prior) {
  auto get = [&](const char* k) {
    auto it = prior.find(k);
    return it == prior.end() ? std::string() : it->second;
  };
  for (int i = 0; i < 120; ++i) {
    auto [state, reason] = NodeState(lab, node);
    if (!state.empty() && state.find('*') == std::string::npos) break;
    if (state.rfind("down", 0) == 0 && reason == "Not responding" &&
        get("prior_state").rfind("down", 0) != 0) {
      lab.Client({"scontrol", "update", "nodename=" + node, "state=resume"});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  auto [state, reason] = NodeState(lab, node);
  if (IsDrained(get("prior_state")) && reason != get("prior_reason")) {
    lab.Client({"scontrol", "update", "nodename=" + node, "state=drain",
                "reason=" + get("prior_reason")});
  }
}

FaultOutcome NetDrop(Lab& lab, const FaultTarget& t, bool inject) {
  std::map<std::string, int> ports = {
      {"slurmdbd", lab.DbdPort()}, {"slurmctld", lab.CtldPort()}, {"mariadbd", lab.DbPort()}};
  std::vector<std::string> nodes = lab.NodeNames();
  for (size_t i = 0; i < nodes.size(); ++i) {
    ports["slurmd-" + nodes[i]] = lab.SlurmdPort(static_cast<int>(i) + 1);
  }
  auto port = ports.find(t.daemon);
  if (port == ports.end()) {
    return Failed("--daemon must be slurmdbd, slurmctld, mariadbd or slurmd-NODE (a node of "
                  "this lab)");
  }
  std::string node = t.daemon.rfind("slurmd-", 0) == 0 ? t.daemon.substr(7) : "";
  std::string nft = lab.Program("nft");
  if (nft.empty()) return Failed("nft is not installed (Debian package nftables)");
  std::string table = TableName(lab, t.daemon);
  Record rec{lab, "net-drop-" + t.daemon};
  bool present = RunTool({nft, "list", "table", "inet", table}, kEnv, std::chrono::seconds(5)).ok();
  if (inject) {
    if (present) return Nothing("traffic to " + t.daemon + " is already dropped");
    std::map<std::string, std::string> kv = {{"table", table},
                                             {"port", std::to_string(port->second)}};
    if (!node.empty()) {
      auto [state, reason] = NodeState(lab, node);
      if (state.empty()) return Failed("cannot read the state of " + node);
      kv["prior_state"] = state;
      kv["prior_reason"] = reason;
    }
    std::string rules = "table inet " + table + " {\n  chain out {\n" +
                        "    type filter hook output priority 0; policy accept;\n" +
                        "    oifname \"lo\" tcp dport " + std::to_string(port->second) +
                        " drop\n  }\n}\n";
    ToolResult r = RunTool({nft, "-f", "-"}, kEnv, std::chrono::seconds(10), rules);
    if (!r.ok()) return Failed("nft: " + r.Summary());
    std::ofstream(lab.Path("run/nft.tables"), std::ios::app) << table << "\n";
    rec.Write(kv);
    return Done("dropping TCP to 127.0.0.1:" + std::to_string(port->second) + " (" + t.daemon +
                ") with nftables table inet " + table);
  }
  auto prior = rec.Read();
  if (!present) {
    rec.Remove();
    return Nothing("traffic to " + t.daemon + " is not dropped");
  }
  ToolResult r = RunTool({nft, "delete", "table", "inet", table}, kEnv, std::chrono::seconds(10));
  if (!r.ok()) return Failed("nft delete: " + r.Summary());
  if (!node.empty()) RecoverNode(lab, node, prior);
  rec.Remove();
  return Done("removed nftables table inet " + table +
              (node.empty() ? "" : "; " + node + " responds again"));
}

FaultOutcome Drain(Lab& lab, const FaultTarget& t, bool inject) {
  if (!ValidNode(lab, t.node)) return Failed("no node " + t.node + " in this lab");
  Record rec{lab, "drain-" + t.node};
  if (inject) {
    if (rec.exists()) return Nothing(t.node + " is already drained by this fault");
    auto [state, reason] = NodeState(lab, t.node);
    if (state.empty()) return Failed("cannot read the state of " + t.node);
    ToolResult r = lab.Client({"scontrol", "update", "nodename=" + t.node, "state=drain",
                               "reason=" + t.reason});
    if (!r.ok()) return Failed("scontrol update: " + r.Summary());
    rec.Write({{"prior_state", state}, {"prior_reason", reason}});
    return Done("drained " + t.node + " (reason: " + t.reason + "; was " + state + ")");
  }
  if (!rec.exists()) return Nothing(t.node + " was not drained by this fault");
  auto prior = rec.Read();
  ToolResult r = IsDrained(prior["prior_state"])
                     ? lab.Client({"scontrol", "update", "nodename=" + t.node, "state=drain",
                                   "reason=" + prior["prior_reason"]})
                     : lab.Client({"scontrol", "update", "nodename=" + t.node, "state=resume"});
  if (!r.ok()) return Failed("scontrol update: " + r.Summary());
  WaitResponding(lab, t.node);
  rec.Remove();
  return Done("restored " + t.node + " to " + prior["prior_state"]);
}

FaultOutcome GpuFake(Lab& lab, const FaultTarget& t, bool inject) {
  if (!ValidNode(lab, t.node)) return Failed("no node " + t.node + " in this lab");
  Record rec{lab, "gpu-fake-" + t.node};
  std::string fake = lab.Path("nodes/" + t.node + "/bin/nvidia-smi");
  if (inject) {
    if (rec.exists()) return Nothing("the nvidia-smi test double already sits on " + t.node);
    if (t.mode != "ecc" && t.mode != "driver") return Failed("--mode must be ecc or driver");
    auto [state, reason] = NodeState(lab, t.node);
    if (state.empty()) return Failed("cannot read the state of " + t.node);
    std::string tmpl = lab.options().templates + "/nvidia-smi.in";
    std::optional<std::string> read = base::ReadFile(tmpl);
    if (!read || read->empty()) return Failed("template " + tmpl + " is missing or empty");
    std::string text = *read;
    for (size_t at = text.find("@MODE@"); at != std::string::npos; at = text.find("@MODE@", at)) {
      text.replace(at, 6, t.mode);
    }
    std::error_code ec;
    fs::create_directories(fs::path(fake).parent_path(), ec);
    std::ofstream(fake, std::ios::trunc) << text;
    fs::permissions(fake, fs::perms(0755), ec);
    rec.Write({{"prior_state", state}, {"prior_reason", reason}, {"mode", t.mode}});
    return Done("put the nvidia-smi test double (" + t.mode + ") at " + fake +
                "; the health check drains " + t.node + " within about 5 s");
  }
  if (!rec.exists()) return Nothing("no nvidia-smi test double on " + t.node);
  auto prior = rec.Read();
  fs::remove(fake);
  // A health check already running may still drain the node; let it finish.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto [state, reason] = NodeState(lab, t.node);
  if (IsDrained(state) && reason.rfind("gpu:", 0) == 0) {
    ToolResult r = IsDrained(prior["prior_state"])
                       ? lab.Client({"scontrol", "update", "nodename=" + t.node, "state=drain",
                                     "reason=" + prior["prior_reason"]})
                       : lab.Client({"scontrol", "update", "nodename=" + t.node, "state=resume"});
    if (!r.ok()) return Failed("scontrol update: " + r.Summary());
    WaitResponding(lab, t.node);
  }
  rec.Remove();
  return Done("removed the nvidia-smi test double from " + t.node + "; it is " +
              prior["prior_state"] + " again");
}

// The value of KEY=VALUE in a one-line `scontrol show ... -o` record ("" if absent).
std::string Field(const std::string& record, const std::string& key) {
  std::string want = " " + key + "=";
  size_t at = (" " + record).find(want);
  if (at == std::string::npos) return "";
  size_t end = record.find_first_of(" \n", at + key.size() + 1);
  return record.substr(at + key.size() + 1, end - at - key.size() - 1);
}

FaultOutcome PartitionDown(Lab& lab, const FaultTarget& t, bool inject) {
  Record rec{lab, "partition-down-" + t.partition};
  if (inject) {
    if (rec.exists()) return Nothing("partition " + t.partition + " is already " + t.state);
    if (t.state != "DOWN" && t.state != "DRAIN" && t.state != "INACTIVE") {
      return Failed("--state must be DOWN, DRAIN or INACTIVE");
    }
    ToolResult show = lab.Client({"scontrol", "show", "partition", t.partition, "-o"});
    std::string prior = Field(show.out, "State");
    if (!show.ok() || prior.empty()) {
      return Failed("no partition " + t.partition + " in this lab: " + show.Summary());
    }
    ToolResult r = lab.Client(
        {"scontrol", "update", "partitionname=" + t.partition, "state=" + t.state});
    if (!r.ok()) return Failed("scontrol update: " + r.Summary());
    rec.Write({{"prior_state", prior}, {"state", t.state}});
    return Done("set partition " + t.partition + " " + t.state + " (was " + prior + ")");
  }
  if (!rec.exists()) return Nothing("partition " + t.partition + " was not changed by this fault");
  std::string prior = rec.Read()["prior_state"];
  ToolResult r =
      lab.Client({"scontrol", "update", "partitionname=" + t.partition, "state=" + prior});
  if (!r.ok()) return Failed("scontrol update: " + r.Summary());
  rec.Remove();
  return Done("set partition " + t.partition + " " + prior + " again");
}

constexpr const char* kReservation = "rca_maint";

FaultOutcome Reservation(Lab& lab, const FaultTarget& t, bool inject) {
  Record rec{lab, "reservation"};
  ToolResult show = lab.Client({"scontrol", "show", "reservation", kReservation, "-o"});
  bool present = show.ok() && Contains(show.out, std::string("ReservationName=") + kReservation);
  if (inject) {
    if (present) return Nothing(std::string("reservation ") + kReservation + " already exists");
    ToolResult hosts = lab.Client({"scontrol", "show", "hostnames", t.node});
    std::istringstream names(hosts.out);
    int count = 0;
    for (std::string n; names >> n; ++count) {
      if (!ValidNode(lab, n)) return Failed("no node " + n + " in this lab");
    }
    if (!hosts.ok() || count == 0) return Failed("--node " + t.node + " is not a hostlist");
    ToolResult r = lab.Client({"scontrol", "create", "reservation",
                               std::string("reservationname=") + kReservation, "nodes=" + t.node,
                               "users=root", "flags=maint,ignore_jobs", "starttime=now",
                               "duration=1-0"});
    if (!r.ok()) return Failed("scontrol create reservation: " + r.Summary());
    rec.Write({{"name", kReservation}, {"nodes", t.node}});
    return Done(std::string("created reservation ") + kReservation + " on " + t.node +
                " for root (maint, ignore_jobs, one day from now)");
  }
  rec.Remove();
  if (!present) return Nothing(std::string("no reservation ") + kReservation);
  ToolResult r = lab.Client(
      {"scontrol", "delete", std::string("reservationname=") + kReservation});
  if (!r.ok()) return Failed("scontrol delete reservation: " + r.Summary());
  return Done(std::string("deleted reservation ") + kReservation);
}

// NAME=VALUE with NAME in names (case as given there) and VALUE an integer >= 0.
bool ParseLimit(const std::string& limit, const std::vector<std::string>& names,
                std::string& name, std::string& value) {
  size_t eq = limit.find('=');
  if (eq == std::string::npos) return false;
  name = limit.substr(0, eq);
  value = limit.substr(eq + 1);
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  return !value.empty() && value.size() < 10 &&
         std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A limit on the account's association (assoc-limit) or on a QOS (qos-limit), set with sacctmgr
// and restored to its prior value (-1: unset).
FaultOutcome LimitFault(Lab& lab, const FaultTarget& t, bool inject, bool qos) {
  std::vector<std::string> names =
      qos ? std::vector<std::string>{"MaxJobsPerUser", "MaxSubmitJobsPerUser", "GrpJobs"}
          : std::vector<std::string>{"GrpJobs", "MaxJobs", "GrpSubmitJobs", "MaxSubmitJobs"};
  std::string limit = t.limit.empty() ? (qos ? "MaxJobsPerUser=1" : "GrpJobs=0") : t.limit;
  std::string name, value;
  if (!ParseLimit(limit, names, name, value)) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return Failed("--limit must be NAME=VALUE with NAME one of " + list +
                  " and VALUE an integer >= 0");
  }
  std::string who = qos ? t.qos : t.account;
  Record rec{lab, std::string(qos ? "qos-limit-" : "assoc-limit-") + who + "-" + name};
  std::vector<std::string> where =
      qos ? std::vector<std::string>{"qos", "where", "name=" + who}
          : std::vector<std::string>{"account", "where", "name=" + who,
                                     "cluster=" + lab.options().cluster};
  std::string what = (qos ? "QOS " : "account ") + who;
  auto set = [&](const std::string& v) {
    std::vector<std::string> argv = {"sacctmgr", "-i", "modify"};
    argv.insert(argv.end(), where.begin(), where.end());
    argv.insert(argv.end(), {"set", name + "=" + v});
    return lab.Client(argv, std::chrono::seconds(30));
  };
  if (inject) {
    if (rec.exists()) return Nothing(what + " already has the fault's " + name);
    ToolResult show =
        qos ? lab.Client({"sacctmgr", "-n", "-P", "show", "qos", "where", "name=" + who,
                          "format=name," + name})
            : lab.Client({"sacctmgr", "-n", "-P", "show", "assoc", "where", "account=" + who,
                          "user=", "cluster=" + lab.options().cluster, "format=account," + name});
    std::string line = show.out.substr(0, show.out.find('\n'));
    size_t bar = line.find('|');
    if (!show.ok() || bar == std::string::npos || line.substr(0, bar) != who) {
      return Failed("no " + what + " in this lab's accounting: " + show.Summary());
    }
    std::string prior = line.substr(bar + 1);
    ToolResult r = set(value);
    if (!r.ok()) return Failed("sacctmgr modify: " + r.Summary());
    rec.Write({{"limit", name}, {"value", value}, {"prior", prior}});
    return Done("set " + name + "=" + value + " on " + what + " (was " +
                (prior.empty() ? "unset" : prior) + ")");
  }
  if (!rec.exists()) return Nothing(what + " has no " + name + " set by this fault");
  std::string prior = rec.Read()["prior"];
  ToolResult r = set(prior.empty() ? "-1" : prior);
  if (!r.ok()) return Failed("sacctmgr modify: " + r.Summary());
  rec.Remove();
  return Done("restored " + name + " on " + what + " to " + (prior.empty() ? "unset" : prior));
}

constexpr const char* kDbLockTag = "rca_db_lock_held";

// The MariaDB sessions holding the db-lock (by the tag in their query), never the asking one.
std::vector<std::string> DbLockSessions(const Lab& lab) {
  ToolResult r = RunTool(
      {lab.Program("mariadb"), "--no-defaults", "-S", lab.Path("run/mysqld.sock"), "-uroot", "-N",
       "-e",
       std::string("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%") +
           kDbLockTag + "%' AND ID <> CONNECTION_ID()"},
      kEnv, std::chrono::seconds(10));
  std::vector<std::string> ids;
  std::istringstream in(r.out);
  for (std::string id; in >> id;) ids.push_back(id);
  return ids;
}

FaultOutcome DbLock(Lab& lab, bool inject) {
  Record rec{lab, "db-lock"};
  std::string mariadb = lab.Program("mariadb");
  if (mariadb.empty()) return Failed("mariadb is not installed (Debian package mariadb-client)");
  auto client = ProcessId::Parse(rec.Read()["pid"]);
  bool alive = client && IsAlive(*client);
  std::string table = lab.options().cluster + "_job_table";
  if (inject) {
    if (alive || !DbLockSessions(lab).empty()) {
      return Nothing("a session already holds LOCK TABLES " + table + " WRITE");
    }
    SpawnResult s = SpawnDaemon(
        {mariadb, "--no-defaults", "-S", lab.Path("run/mysqld.sock"), "-uroot", "slurm_acct_db",
         "-e", "LOCK TABLES " + table + " WRITE; SELECT SLEEP(86400) AS " + kDbLockTag},
        kEnv, lab.Path("log/db-lock.log"));
    if (!s.id) return Failed("cannot start the mariadb client: " + s.error);
    rec.Write({{"pid", s.id->ToString()}, {"table", table}});
    // The SELECT runs only once LOCK TABLES has returned: its session in the processlist means
    // the lock is held.
    for (int i = 0; i < 120 && DbLockSessions(lab).empty(); ++i) {
      if (!IsAlive(*s.id)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    if (DbLockSessions(lab).empty()) {
      StopProcess(*s.id, std::chrono::seconds(2));
      rec.Remove();
      return Failed("the lock was not taken within 30 s; see " + lab.Path("log/db-lock.log"));
    }
    return Done("holding LOCK TABLES slurm_acct_db." + table + " WRITE in a mariadb session (pid " +
                std::to_string(s.id->pid) + ")");
  }
  if (alive) StopProcess(*client, std::chrono::seconds(2));
  ReapChildren();
  // Ending the client does not end its session at once (the server notices only when SLEEP
  // returns): kill the session too.
  std::vector<std::string> sessions = DbLockSessions(lab);
  for (const std::string& id : sessions) {
    RunTool({mariadb, "--no-defaults", "-S", lab.Path("run/mysqld.sock"), "-uroot", "-e",
             "KILL " + id},
            kEnv, std::chrono::seconds(10));
  }
  bool released = DbLockSessions(lab).empty();
  rec.Remove();
  if (!released) return Failed("a session with " + std::string(kDbLockTag) + " survived KILL");
  if (!alive && sessions.empty()) return Nothing("no session holds the db-lock");
  return Done("stopped the mariadb client" +
              (alive ? " (pid " + std::to_string(client->pid) + ")" : std::string()) +
              " and killed " + std::to_string(sessions.size()) + " session(s); " + table +
              " is unlocked");
}

}  // namespace

const std::vector<FaultInfo>& FaultCatalog() {
  static const std::vector<FaultInfo> catalog = {
      {"db-freeze", "SIGSTOP of mariadbd",
       "sacct blocks (30 s, then 'Unable to connect to database'); sinfo, squeue, sdiag answer; "
       "the DBD agent queue in sdiag grows as jobs finish",
       "SIGCONT; the queue drains in about a second", ""},
      {"dbd-stop", "SIGTERM of slurmdbd",
       "sacct and sacctmgr fail at once with 'Connection refused'; jobs still run; the DBD agent "
       "queue grows",
       "start slurmdbd again; it re-registers and the queue drains", ""},
      {"munge-stop", "SIGTERM of munged",
       "every client fails after about 2 s with 'Protocol authentication error'; nodes go DOWN "
       "after SlurmdTimeout (10 s)",
       "start munged with the same key; nodes return to service", ""},
      {"slurmd-kill", "SIGKILL of one node's slurmd",
       "the node is not responding (idle*) after about 12 s and DOWN after about 24 s",
       "start that slurmd again; the node is idle within a second of registering", "--node"},
      {"slurmd-pause", "SIGSTOP of one node's slurmd",
       "the node is not responding after about 11 s and DOWN after about 23 s",
       "SIGCONT; a DOWN node returns only at the controller's next poll (up to about 50 s)",
       "--node"},
      {"statesave-readonly", "StateSaveLocation unwritable (read-only bind mount, or chattr +i)",
       "sbatch fails with 'I/O error writing script/environment to file'; srun still works",
       "unmount (or chattr -i); sbatch works again", "--method"},
      {"rpc-flood", "N squeue loops against slurmctld, started and stopped by PID",
       "squeue latency grows with N; sdiag's server thread count rises",
       "SIGKILL of each worker's process group", "--workers --seconds"},
      {"net-drop", "nftables drop of TCP to one daemon's loopback port",
       "slurmdbd: sacct fails in about 2 s ('Connection timed out'); slurmctld: clients fail "
       "after about 29 s; slurmd-NODE: the node is not responding (idle*) after about 14 s and "
       "DOWN ('Not responding') after about 31 s",
       "delete the nftables table; slurmd-NODE: resume the node if it went DOWN (back within "
       "about a second; alone it returns only after about 22 s) and wait until it responds",
       "--daemon"},
      {"drain", "scontrol update state=drain with a reason",
       "sinfo -R shows the reason; jobs that need the node pend with ReqNodeNotAvail",
       "the node's prior state and reason are restored", "--node --reason"},
      {"gpu-fake",
       "a test double of nvidia-smi (ecc: uncorrectable ECC errors; driver: driver gone) in the "
       "node's trusted bin directory",
       "the lab's HealthCheckProgram drains the node with a 'gpu:' reason within about 5 s",
       "remove the double; resume the node if the health check drained it", "--node --mode"},
      {"ctld-pause", "SIGSTOP of slurmctld",
       "squeue, sinfo and scontrol fail after MessageTimeout (10 s) with 'Socket timed out on "
       "send/recv operation'; sacct and sacctmgr answer; nodes stay idle",
       "SIGCONT; clients answer at once and no node is marked DOWN (a 25 s pause)", ""},
      {"partition-down", "scontrol update partitionname=P state=S (DOWN, DRAIN or INACTIVE)",
       "DOWN: jobs submitted to P pend with Reason PartitionDown; DRAIN, INACTIVE: sbatch fails "
       "with 'Required partition not available (inactive or drain)'",
       "the partition's prior State (from scontrol show partition) is restored",
       "--partition --state"},
      {"reservation",
       "scontrol create reservation rca_maint on the nodes, users=root, flags=maint,ignore_jobs, "
       "starttime=now, duration=1-0",
       "scontrol show reservation lists rca_maint (ACTIVE, MAINT,IGNORE_JOBS,SPEC_NODES); sinfo "
       "shows the nodes as maint; a job asking for one of them without --reservation pends "
       "with Reason 'ReqNodeNotAvail, May be reserved for other job'",
       "scontrol delete reservationname=rca_maint", "--node"},
      {"assoc-limit", "sacctmgr modify account A (its account association) set NAME=VALUE",
       "GrpJobs=0: jobs of account A pend with Reason AssocGrpJobsLimit; other accounts run",
       "the prior value is set again (-1 when it was unset)", "--account --limit"},
      {"qos-limit", "sacctmgr modify qos Q set NAME=VALUE (every association has QOS normal)",
       "MaxJobsPerUser=1: a user's second job pends with Reason QOSMaxJobsPerUserLimit",
       "the prior value is set again (-1 when it was unset); pending jobs start at the next "
       "scheduling pass",
       "--qos --limit"},
      {"db-lock",
       "a mariadb client session holding LOCK TABLES CLUSTER_job_table WRITE (tracked by PID)",
       "sacct hangs with no error (over 300 s measured; it has no timeout of its own); sacctmgr "
       "show assoc, sinfo, squeue, srun and sbatch answer; slurmdbd cannot record jobs, so "
       "sdiag's DBD Agent queue size grows (6 after one srun and one sbatch)",
       "stop the client by PID and KILL its session; sacct answers and the queue drains within "
       "a second",
       ""},
      {"ctld-stop", "SIGTERM of slurmctld (it saves its state and exits)",
       "squeue, sinfo, sdiag, sprio, sshare and scontrol retry the connection and fail after "
       "about 9 s with 'Unable to contact slurm controller (connect failure)'; sacct answers",
       "start slurmctld again; it reads its state back from StateSaveLocation", ""},
      {"dbd-kill", "SIGKILL of slurmdbd (no clean shutdown)",
       "sacct fails at once with 'Connection refused'; squeue and sinfo answer",
       "start slurmdbd again; it re-registers", ""},
      {"ctld-kill", "SIGKILL of slurmctld (no clean shutdown: nothing saved since its last periodic save)",
       "squeue, sinfo, sdiag and scontrol fail after about 9 s with 'Unable to contact slurm "
       "controller (connect failure)', as after ctld-stop; sacct answers",
       "start slurmctld again; it reads back the state it last saved", ""},
  };
  return catalog;
}

namespace {

// One fault, in either direction.
FaultOutcome Apply(Lab& lab, const std::string& name, const FaultTarget& t, bool inject) {
  if (!lab.exists()) return Failed("no lab in " + lab.options().dir + ": run cluster up first");
  int sig = inject ? SIGSTOP : SIGCONT;
  if (name == "db-freeze") return SignalFault(lab, "mariadbd", sig, inject, name);
  if (name == "dbd-stop") return StopStartFault(lab, "slurmdbd", inject, name, false);
  if (name == "munge-stop") return StopStartFault(lab, "munged", inject, name, false);
  if (name == "ctld-stop") return StopStartFault(lab, "slurmctld", inject, name, false);
  if (name == "dbd-kill") return StopStartFault(lab, "slurmdbd", inject, name, true);
  if (name == "ctld-kill") return StopStartFault(lab, "slurmctld", inject, name, true);
  if (name == "slurmd-kill") {
    if (!ValidNode(lab, t.node)) return Failed("no node " + t.node + " in this lab");
    return StopStartFault(lab, "slurmd-" + t.node, inject, "slurmd-kill-" + t.node, true);
  }
  if (name == "slurmd-pause") {
    if (!ValidNode(lab, t.node)) return Failed("no node " + t.node + " in this lab");
    return SignalFault(lab, "slurmd-" + t.node, sig, inject, "slurmd-pause-" + t.node);
  }
  if (name == "statesave-readonly") return StateSaveReadonly(lab, t, inject);
  if (name == "rpc-flood") return RpcFlood(lab, t, inject);
  if (name == "net-drop") return NetDrop(lab, t, inject);
  if (name == "drain") return Drain(lab, t, inject);
  if (name == "gpu-fake") return GpuFake(lab, t, inject);
  if (name == "ctld-pause") return SignalFault(lab, "slurmctld", sig, inject, name);
  if (name == "partition-down") return PartitionDown(lab, t, inject);
  if (name == "reservation") return Reservation(lab, t, inject);
  if (name == "assoc-limit") return LimitFault(lab, t, inject, false);
  if (name == "qos-limit") return LimitFault(lab, t, inject, true);
  if (name == "db-lock") return DbLock(lab, inject);
  return Failed("unknown fault '" + name + "' (rca-bench fault list)");
}

}  // namespace

FaultOutcome InjectFault(Lab& lab, const std::string& name, const FaultTarget& t) {
  return Apply(lab, name, t, true);
}

FaultOutcome HealFault(Lab& lab, const std::string& name, const FaultTarget& t) {
  return Apply(lab, name, t, false);
}

std::vector<std::string> ActiveFaults(const Lab& lab) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(lab.Path("faults"), ec)) {
    out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace slurm_rca::live

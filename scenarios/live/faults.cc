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
#include "scenarios/vocabulary.h"

namespace slurm_rca::live {

namespace sc = slurm_rca::scenarios;

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
      // On the lab of hosts the loops run on the login host, as users' clients do.
      base::Result<std::vector<std::string>> argv =
          lab.OnHost("login", {"/bin/sh", "-c", script});
      if (!argv.ok()) return Failed(argv.status().message());
      SpawnResult s = SpawnDaemon(*argv, lab.ClientEnv(), lab.Path("log/flood.log"));
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
  if (lab.options().hosts) {
    return Failed("net-drop drops loopback traffic of the one-host lab; on the lab of hosts use "
                  "net-cut --host HOST --peer PEER");
  }
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

// --- the lab of hosts' network (issue #39) -------------------------------------------------------

// The hosts lab's network, or why there is none.
base::Result<HostNet> HostsNetOf(const Lab& lab, const std::string& fault) {
  if (!lab.options().hosts) {
    return Status::InvalidArgument(fault + " needs the lab of hosts (rca-bench cluster up --hosts)");
  }
  return lab.Net();
}

Status CheckHost(const HostNet& net, const std::string& option, const std::string& host) {
  if (net.AddressOf(host).ok()) return {};
  std::string names;
  for (const HostSpec& h : net.options().hosts) names += (names.empty() ? "" : ", ") + h.name;
  return Status::InvalidArgument("--" + option + " " + host + " is not a host of this lab (" +
                                 names + ")");
}

// The nodes whose slurmd runs on host (a compute host), for restoring their state on heal.
std::vector<std::string> NodesOn(const Lab& lab, const std::string& host) {
  std::vector<std::string> nodes;
  for (const std::string& n : lab.NodeNames()) {
    if (lab.HostOf(n) == host) nodes.push_back(n);
  }
  return nodes;
}

// nft run inside host; the result of `nft ARGS` (input: a ruleset for -f -).
ToolResult NftOn(const Lab& lab, const HostNet& net, const std::string& host,
                 std::vector<std::string> args, const std::string& input = "") {
  std::string nft = lab.Program("nft");
  if (nft.empty()) {
    ToolResult r;
    r.error = "nft is not installed (Debian package nftables)";
    return r;
  }
  args.insert(args.begin(), nft);
  return net.Exec(host, args, std::chrono::seconds(10), input);
}

// A table of rules inside one host (a namespace of its own: no other lab's rules are there).
// Its presence is the fault's state; its record keeps what heal needs (the nodes' prior states).
FaultOutcome HostTableFault(Lab& lab, const HostNet& net, const std::string& host,
                            const std::string& table, const std::string& key,
                            const std::string& rules, const std::vector<std::string>& nodes,
                            bool inject, const std::string& what) {
  Record rec{lab, key};
  const bool present = NftOn(lab, net, host, {"list", "table", "inet", table}).ok();
  if (inject) {
    if (present) return Nothing(what + ": already in place");
    std::map<std::string, std::string> kv = {{"host", host}, {"table", table}};
    for (const std::string& n : nodes) {
      auto [state, reason] = NodeState(lab, n);
      if (state.empty()) return Failed("cannot read the state of " + n);
      kv["prior_state." + n] = state;
      kv["prior_reason." + n] = reason;
    }
    ToolResult r = NftOn(lab, net, host, {"-f", "-"}, rules);
    if (!r.ok()) return Failed("nft on " + host + ": " + r.Summary());
    rec.Write(kv);
    return Done(what + " (nftables table inet " + table + " on " + host + ")");
  }
  auto prior = rec.Read();
  if (!present) {
    rec.Remove();
    return Nothing(what + ": not in place");
  }
  ToolResult r = NftOn(lab, net, host, {"delete", "table", "inet", table});
  if (!r.ok()) return Failed("nft delete on " + host + ": " + r.Summary());
  for (const std::string& n : nodes) {
    RecoverNode(lab, n,
                {{"prior_state", prior["prior_state." + n]}, {"prior_reason", prior["prior_reason." + n]}});
  }
  rec.Remove();
  return Done("removed nftables table inet " + table + " on " + host +
              (nodes.empty() ? "" : "; its nodes respond again"));
}

// net-cut: HOST and PEER cannot talk (both), PEER cannot open a connection to HOST (in), or HOST
// cannot open one to PEER (out), by rules in HOST's namespace. Replies of established
// connections pass a one-way cut, as through a stateful firewall.
FaultOutcome NetCut(Lab& lab, const FaultTarget& t, bool inject) {
  base::Result<HostNet> net = HostsNetOf(lab, "net-cut");
  if (!net.ok()) return Failed(net.status().message());
  for (const auto& [option, host] : {std::pair{"host", t.host}, std::pair{"peer", t.peer}}) {
    if (Status s = CheckHost(*net, option, host); !s.ok()) return Failed(s.message());
  }
  if (t.host == t.peer) return Failed("--host and --peer are the same host");
  if (t.direction != "both" && t.direction != "in" && t.direction != "out") {
    return Failed("--direction must be both, in or out");
  }
  const std::string peer = *net->AddressOf(t.peer);
  std::string in_rule, out_rule;
  if (t.direction == "both" || t.direction == "in") {
    in_rule = "    ip saddr " + peer + (t.direction == "in" ? " ct state new" : "") + " drop\n";
  }
  if (t.direction == "both" || t.direction == "out") {
    out_rule = "    ip daddr " + peer + (t.direction == "out" ? " ct state new" : "") + " drop\n";
  }
  const std::string table = "rca_cut_" + t.peer;
  std::string rules = "table inet " + table + " {\n";
  if (!in_rule.empty()) {
    rules += "  chain in {\n    type filter hook input priority 0; policy accept;\n" + in_rule + "  }\n";
  }
  if (!out_rule.empty()) {
    rules += "  chain out {\n    type filter hook output priority 0; policy accept;\n" + out_rule +
             "  }\n";
  }
  rules += "}\n";
  // The nodes on either end may go DOWN (not responding) while cut: heal brings them back.
  std::vector<std::string> nodes = NodesOn(lab, t.host);
  for (const std::string& n : NodesOn(lab, t.peer)) nodes.push_back(n);
  const std::string what =
      t.direction == "both" ? t.host + " and " + t.peer + " cut from each other"
      : t.direction == "in" ? t.peer + " cannot open connections to " + t.host
                            : t.host + " cannot open connections to " + t.peer;
  return HostTableFault(lab, *net, t.host, table, "net-cut-" + t.host + "-" + t.peer, rules, nodes,
                        inject, what);
}

// net-loss: PERCENT of the packets in and out of HOST's eth0 dropped at random (nftables numgen:
// this kernel has no netem).
FaultOutcome NetLoss(Lab& lab, const FaultTarget& t, bool inject) {
  base::Result<HostNet> net = HostsNetOf(lab, "net-loss");
  if (!net.ok()) return Failed(net.status().message());
  if (Status s = CheckHost(*net, "host", t.host); !s.ok()) return Failed(s.message());
  if (t.percent < 1 || t.percent > 100) return Failed("--percent must be between 1 and 100");
  const std::string p = std::to_string(t.percent);
  const std::string rules =
      "table inet rca_loss {\n"
      "  chain in {\n    type filter hook input priority 0; policy accept;\n"
      "    iifname \"eth0\" numgen random mod 100 < " + p + " drop\n  }\n"
      "  chain out {\n    type filter hook output priority 0; policy accept;\n"
      "    oifname \"eth0\" numgen random mod 100 < " + p + " drop\n  }\n}\n";
  return HostTableFault(lab, *net, t.host, "rca_loss", "net-loss-" + t.host, rules,
                        NodesOn(lab, t.host), inject,
                        p + "% of " + t.host + "'s packets dropped each way");
}

// tc run on a namespace (the host's, or the switch's for the port that sends to the host):
// `tc -n NS` enters it itself.
ToolResult TcIn(const Lab& lab, const std::string& ns, const std::vector<std::string>& args) {
  std::string tc = lab.Program("tc");
  if (tc.empty()) {
    ToolResult r;
    r.error = "tc is not installed (Debian package iproute2)";
    return r;
  }
  std::vector<std::string> argv = {tc, "-n", ns};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunTool(argv, kEnv, std::chrono::seconds(10));
}

// net-throttle: HOST's link limited to RATE each way: a tbf qdisc on its eth0 (what it sends) and
// on its switch port (what it receives).
FaultOutcome NetThrottle(Lab& lab, const FaultTarget& t, bool inject) {
  base::Result<HostNet> net = HostsNetOf(lab, "net-throttle");
  if (!net.ok()) return Failed(net.status().message());
  if (Status s = CheckHost(*net, "host", t.host); !s.ok()) return Failed(s.message());
  if (Status s = sc::CheckFaultOption("rate", t.rate); !s.ok()) return Failed(s.message());
  const std::vector<std::pair<std::string, std::string>> links = {
      {net->Namespace(t.host), "eth0"}, {net->SwitchNamespace(), t.host}};
  Record rec{lab, "net-throttle-" + t.host};
  auto qdisc = [&](const std::pair<std::string, std::string>& l) {
    return TcIn(lab, l.first, {"qdisc", "show", "dev", l.second, "root"});
  };
  bool present = false;
  for (const auto& l : links) present = present || Contains(qdisc(l).out, "qdisc tbf");
  if (inject) {
    if (present) return Nothing(t.host + "'s link is already throttled");
    std::map<std::string, std::string> kv = {{"rate", t.rate}};
    for (const auto& l : links) {
      ToolResult before = qdisc(l);
      if (!before.ok()) return Failed("tc qdisc show on " + l.first + ": " + before.Summary());
      kv["prior." + l.second] = before.out.substr(0, before.out.find('\n'));
    }
    for (const auto& l : links) {
      // burst: at least one MTU at the rate's timer granularity; latency bounds the queue.
      ToolResult r = TcIn(lab, l.first,
                          {"qdisc", "add", "dev", l.second, "root", "tbf", "rate", t.rate,
                           "burst", "4kb", "latency", "400ms"});
      if (!r.ok()) return Failed("tc qdisc add on " + l.first + ": " + r.Summary());
    }
    rec.Write(kv);
    return Done(t.host + "'s link throttled to " + t.rate + " each way (tbf on " + t.host +
                "'s eth0 and its switch port)");
  }
  if (!present) {
    rec.Remove();
    return Nothing(t.host + "'s link is not throttled");
  }
  auto prior = rec.Read();
  for (const auto& l : links) {
    if (!Contains(qdisc(l).out, "qdisc tbf")) continue;
    ToolResult r = TcIn(lab, l.first, {"qdisc", "del", "dev", l.second, "root"});
    if (!r.ok()) return Failed("tc qdisc del on " + l.first + ": " + r.Summary());
    std::string now = qdisc(l).out;
    now = now.substr(0, now.find('\n'));
    if (auto it = prior.find("prior." + l.second); it != prior.end() && it->second != now) {
      return Failed("after heal " + l.second + "'s root qdisc is '" + now + "', before the fault '" +
                    it->second + "'");
    }
  }
  rec.Remove();
  return Done("removed the tbf qdiscs of " + t.host + "'s link; its root qdiscs are as before");
}

// name-gone: NAME no longer resolves on HOST: its line leaves the host's /etc/hosts (the file
// ExecArgv bind-mounts, rewritten in place so that running programs see it too).
FaultOutcome NameGone(Lab& lab, const FaultTarget& t, bool inject) {
  base::Result<HostNet> net = HostsNetOf(lab, "name-gone");
  if (!net.ok()) return Failed(net.status().message());
  if (Status s = CheckHost(*net, "host", t.host); !s.ok()) return Failed(s.message());
  if (Status s = CheckHost(*net, "name", t.name); !s.ok()) return Failed(s.message());
  const std::string hosts =
      std::string(HostNet::kNetnsEtc) + "/" + net->Namespace(t.host) + "/hosts";
  Record rec{lab, "name-gone-" + t.host + "-" + t.name};
  const std::string saved = lab.Path("faults/name-gone-" + t.host + "-" + t.name + ".hosts");
  std::optional<std::string> text = base::ReadFile(hosts);
  if (!text) return Failed("cannot read " + hosts);
  // The lines that name NAME (as a name, not inside another).
  auto names_it = [&](const std::string& line) {
    std::istringstream words(line);
    std::string addr, word;
    words >> addr;
    if (addr.empty() || addr[0] == '#') return false;
    while (words >> word) {
      if (word == t.name) return true;
    }
    return false;
  };
  std::string kept;
  bool named = false;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (names_it(line)) {
      named = true;
    } else {
      kept += line + "\n";
    }
  }
  // In place (truncate and write): the bind mounts see the same file.
  auto write_in_place = [&](const std::string& body) {
    std::ofstream out(hosts, std::ios::out | std::ios::trunc);
    out << body;
    out.close();
    return static_cast<bool>(out);
  };
  if (inject) {
    if (rec.exists() || !named) return Nothing(t.name + " already does not resolve on " + t.host);
    std::error_code ec;
    fs::create_directories(lab.Path("faults"), ec);
    if (!base::WriteFile(saved, *text)) return Failed("cannot save " + hosts + " to " + saved);
    if (!write_in_place(kept)) return Failed("cannot rewrite " + hosts);
    rec.Write({{"hosts", hosts}, {"saved", saved}});
    return Done(t.name + " no longer resolves on " + t.host + " (its line left " + hosts + ")");
  }
  if (!rec.exists()) return Nothing(t.name + " resolves on " + t.host);
  std::optional<std::string> before = base::ReadFile(saved);
  if (!before) return Failed("the saved " + saved + " is gone: cannot restore " + hosts);
  if (!write_in_place(*before)) return Failed("cannot restore " + hosts);
  fs::remove(saved);
  rec.Remove();
  return Done(t.name + " resolves on " + t.host + " again (" + hosts + " restored)");
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
      {"net-cut",
       "the lab of hosts: nftables rules in HOST's namespace cut it from PEER (both: every "
       "packet; in: PEER cannot open connections to HOST; out: HOST cannot open connections to "
       "PEER; replies of established connections pass a one-way cut)",
       "measured on the lab of hosts (hosts_live_test, 22.05): no ping crosses a both-ways cut; "
       "with the login host unable to open connections to ctl (out), squeue there fails after "
       "29 s with 'Unable to contact slurm controller (connect failure)' while every node stays "
       "idle; with ctl unable to open connections to login (in), squeue on login answers; a "
       "compute host cut both ways from ctl: its two nodes not responding at 15-30 s and DOWN "
       "in one log line at 30-45 s (S44's recordings, busy lab)",
       "delete the table; the nodes on either end are resumed if they went DOWN (Not responding) "
       "and waited for until they respond",
       "--host --peer --direction"},
      {"net-loss", "the lab of hosts: nftables drops PERCENT of the packets in and out of HOST's eth0 "
                   "at random (numgen; this kernel has no netem)",
       "measured on the lab of hosts: each way loses PERCENT, so a round trip survives "
       "(1 - PERCENT/100)^2: at 50, 11 of 40 pings came back",
       "delete the table; HOST's nodes are resumed if they went DOWN", "--host --percent"},
      {"net-throttle", "the lab of hosts: a tbf qdisc limits HOST's link to RATE each way (on its "
                       "eth0 and on its switch port)",
       "measured on the lab of hosts: 40 pings of 1,400 bytes took 7.0 s at 64kbit, what the "
       "rate allows (40 x 1,428 bytes x 8 / 64 kbit/s = 7.1 s; unthrottled they take 2.2 s, "
       "ping's own 50 ms pacing); the sender is held back rather than dropped",
       "delete both qdiscs; the root qdiscs are checked to be as before", "--host --rate"},
      {"name-gone", "the lab of hosts: NAME's line leaves HOST's /etc/hosts (rewritten in place)",
       "measured on the lab of hosts: getent hosts NAME fails on HOST and answers elsewhere; with "
       "NAME ctl on the login host, squeue there fails after 10 s with 'Unable to establish "
       "control machine address' while the nodes stay idle",
       "the saved file is written back in place", "--host --name"},
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
  if (name == "net-cut") return NetCut(lab, t, inject);
  if (name == "net-loss") return NetLoss(lab, t, inject);
  if (name == "net-throttle") return NetThrottle(lab, t, inject);
  if (name == "name-gone") return NameGone(lab, t, inject);
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

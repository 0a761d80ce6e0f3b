// A lab of hosts: one network namespace per host joined by veth pairs on a Linux bridge, all of
// it inside namespaces the lab makes (issue #39). The first step of the hosts lab: the network
// only; Slurm's daemons are started in the hosts by the caller (ExecArgv + SpawnDaemon).
//
//   rcah-TAG-sw          the switch: bridge br0, one port per host (named as the host)
//   rcah-TAG-HOST        a host: lo and eth0 (the other end of its switch port), one address
//   /etc/netns/rcah-TAG-HOST/hosts, resolv.conf
//                        what ExecArgv bind-mounts over /etc/hosts and /etc/resolv.conf:
//                        every host of the lab by name, and no name server
//   STATE_DIR/hostnet.state
//                        what Up() created (tag, namespaces, hosts), for Down() or Load() from
//                        another process (`cluster down`)
//
// Addresses: lab TAG (0..511) owns the /24 at 198.18.0.0 + TAG * 256 inside the benchmarking
// range 198.18.0.0/15: tag 168 is 198.18.168.0/24, tag 300 is 198.19.44.0/24. Host i (in the
// order given) is .10+i. TagForPortBase(16800) is 168: labs whose port bases differ by 100 or
// more get distinct tags; two in the same hundred share one, and the second's Up() is refused.
// A host is a network namespace only: its programs share the machine's hostname (UTS), mounts
// (but /etc/hosts and /etc/resolv.conf) and users.
//
// The machine's own (root) namespace gets no interface, address or route: the switch lives in a
// namespace of its own, the veth pairs are created inside the switch namespace with their peer
// put straight into the host's, and no host has a default route. Nothing the lab does reaches
// outside its namespaces.
//
//   HostNet net(HostNetOptions{.tag = 168, .hosts = {{"ctl", "controller"}, {"c1", "compute"}},
//                              .state_dir = "/tmp/slurm-rca-lab"});
//   if (Status s = net.Up(std::cout); !s.ok()) std::cerr << s.message();
//   ToolResult r = net.Exec("c1", {"/usr/bin/ping", "-c1", "-W1", "ctl"});
//   SpawnResult d = SpawnDaemon(*net.ExecArgv("ctl", {"/usr/sbin/slurmctld", "-D"}), env, log);
//   net.Down(std::cout);
//
// Every `ip` command runs through RunTool with an argv (no shell) and is checked; a failure names
// the command and its stderr, and Up() then takes down what it had made (only that: a namespace
// someone else created meanwhile is left alone). Up() refuses a tag outside 0..511, a host name
// that is not [a-z][a-z0-9-]* of at most 15 characters (it is also the switch port's interface
// name) or is sw, lo or br0, more than 240 hosts, and a tag whose namespaces exist without this
// state directory's record of them (another lab, or a lost state file). Up() again with the same
// hosts and state directory finds them up and returns (idempotent); with other hosts it refuses.
// Down() on nothing is fine; Down() kills (by PID) any process still inside one of its
// namespaces and says so, since a process there would keep the namespace alive unseen.
#ifndef SLURM_RCA_SCENARIOS_LIVE_HOSTNET_H_
#define SLURM_RCA_SCENARIOS_LIVE_HOSTNET_H_

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/live/process.h"

namespace slurm_rca::live {

struct HostSpec {
  std::string name;  // [a-z][a-z0-9-]*, at most 15 characters; not sw, lo or br0
  std::string role;  // controller, accounting, login, compute: recorded, not interpreted

  bool operator==(const HostSpec&) const = default;
};

struct HostNetOptions {
  // The lab's tag, 0..511: its namespaces' names (rcah-TAG-...) and its /24 (header comment).
  int tag = 168;
  // The hosts, in address order (host i is .10+i); 1..240 of them.
  std::vector<HostSpec> hosts;
  // Where hostnet.state is kept (the lab's directory); must be set.
  std::string state_dir;
  // Where ip is looked for.
  std::vector<std::string> program_dirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  // The limit of each ip command.
  std::chrono::milliseconds command_timeout = std::chrono::seconds(30);
};

class HostNet {
 public:
  static constexpr const char* kPrefix = "rcah";
  // Where a host's hosts and resolv.conf are kept (iproute2's place for them, which `ip netns
  // exec` also bind-mounts).
  static constexpr const char* kNetnsEtc = "/etc/netns";
  // Where `ip netns add` puts a namespace's handle (iproute2's NETNS_RUN_DIR).
  static constexpr const char* kNetnsRun = "/run/netns";

  explicit HostNet(HostNetOptions options);

  // The HostNet whose Up() wrote STATE_DIR/hostnet.state: for Down(), Exec() and the faults in
  // a process that did not bring it up. An error when there is none or it cannot be read.
  static base::Result<HostNet> Load(const std::string& state_dir);

  // port_base / 100: 16800 -> 168. Up() refuses it when it is over 511 (port base >= 51200).
  static int TagForPortBase(int port_base) { return port_base / 100; }

  // The options are usable: tag in range, host names valid and distinct, state_dir set.
  base::Status Validate() const;

  // Creates the namespaces, the bridge, the veth pairs, the addresses and the hosts files, and
  // records them. Prints each step's time to progress.
  base::Status Up(std::ostream& progress);
  // Kills what is left inside its namespaces (saying so), deletes the namespaces it recorded
  // (their veths go with them) and their /etc/netns directories, then checks `ip netns list`,
  // `ip -o link` and /etc/netns: an error names anything with its prefix and tag still there.
  // With no state file: OK when nothing of its tag exists, else an error naming what does (left
  // untouched: it is not recorded as this lab's).
  base::Status Down(std::ostream& progress);

  // "rcah-168-ctl", "rcah-168-sw"; "rcah-168-" is what every name of the lab starts with.
  std::string Namespace(const std::string& host) const;
  std::string SwitchNamespace() const;
  std::string NamePrefix() const;
  // "198.18.168.0/24"; empty when the tag is out of range.
  std::string Subnet() const;
  // "198.18.168.10"; an error for a host not in the lab.
  base::Result<std::string> AddressOf(const std::string& host) const;
  // The text of a host's /etc/hosts: every host of the lab by name, and (when host is one of
  // them) the machine's hostname for that host's own address.
  std::string HostsFile(const std::string& host = "") const;
  std::string StatePath() const { return options_.state_dir + "/hostnet.state"; }

  // {nsenter --net=/run/netns/rcah-TAG-HOST -- unshare --mount --propagation slave -- sh -c
  // 'mount --bind (the host's hosts and resolv.conf over /etc's) && exec "$0" "$@"', argv...}:
  // argv run inside host, for RunTool or SpawnDaemon. What `ip netns exec` does, except that
  // /sys is left as it is (slurmd needs its cgroup mounts); nothing forks, so the PID a spawn
  // returns is the program's (hostnet_live_test checks it). argv[0] must be absolute. An error
  // for an unknown host.
  base::Result<std::vector<std::string>> ExecArgv(const std::string& host,
                                                  const std::vector<std::string>& argv) const;
  // Runs argv inside host to completion (RunTool); an unknown host or relative argv[0] is a
  // result with error set.
  ToolResult Exec(const std::string& host, const std::vector<std::string>& argv,
                  std::chrono::milliseconds timeout = std::chrono::seconds(10),
                  const std::string& input = "") const;

  // Moves the calling thread onto host: into its network namespace, and into a mount namespace
  // of the thread's own (a slave of the machine's) where the host's hosts and resolv.conf are
  // bind-mounted over /etc's, as ExecArgv does for a program. Every program the thread starts
  // afterwards (a child inherits the namespaces of the thread that made it) runs on host. One
  // way: for a thread made for the purpose (the recorder's readers), never the main thread of a
  // process that still makes or removes namespaces (its /run/netns mounts would stay in its own
  // mount namespace). An error names the step that failed.
  base::Status EnterThread(const std::string& host) const;

  const HostNetOptions& options() const { return options_; }

 private:
  std::string Ip() const;
  // Runs ip with args; an error naming the command and its stderr.
  base::Status RunIp(const std::vector<std::string>& args) const;
  // Namespaces whose names start with NamePrefix(), from `ip netns list`.
  base::Result<std::vector<std::string>> ExistingNamespaces() const;
  // hostnet.state: the tag, the hosts (for Load) and the namespaces Down() deletes.
  base::Status WriteState(const std::vector<std::string>& namespaces) const;
  // Up() found a state file: the same hosts, all there (OK), or a refusal saying what differs.
  base::Status CheckAlreadyUp(std::ostream& progress) const;
  // Makes the namespaces and links; made gets each namespace as it is created.
  base::Status Create(std::ostream& progress, std::vector<std::string>* made) const;
  // Kills the processes inside ns (from `ip netns pids`), saying so.
  base::Status KillInside(const std::string& ns, std::ostream& progress) const;
  // What of this tag is still there: namespaces, root-namespace links, /etc/netns directories.
  std::vector<std::string> Leftovers() const;

  HostNetOptions options_;
};

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_HOSTNET_H_

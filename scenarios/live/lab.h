// The lab: a real Slurm control plane on this machine, from Debian's packages, on loopback.
//
// munged, MariaDB, slurmdbd, slurmctld and N slurmd (several on one host with `slurmd -N`),
// no systemd and no Docker, everything under one directory:
//
//   DIR/lab.conf        what `up` was asked for (nodes, ports, cluster name, profile, seed)
//   DIR/etc/            slurm.conf, slurmdbd.conf, gres.conf, healthcheck.sh (from templates/)
//   DIR/run/            sockets, daemons' pid files, and NAME.id: the PID and kernel start time
//                       of each daemon we started, the only handle we ever signal
//   DIR/log/            every daemon's log
//   DIR/state/          StateSaveLocation      DIR/spool/NODE/   SlurmdSpoolDir
//   DIR/mysql/          MariaDB's datadir      DIR/nodes/NODE/bin/ a node's trusted bin directory
//
//   Lab lab(LabOptions{.dir = "/tmp/slurm-rca-lab", .nodes = 4});
//   if (Status s = lab.Up(std::cout); !s.ok()) std::cerr << s.message();
//   ToolResult r = lab.Client({"sinfo", "-h"});
//   lab.Down(std::cout);
//
// Up() is idempotent (a second call finds the daemons alive and returns); Down() on nothing
// is fine; a port in use or a missing package is an error that says which. With
// LabOptions{.profile = "busy", .seed = N}, Up() applies the busy background of profile.h once
// the lab is ready (DIR/busy.trace keeps the trace), and Down() also cancels its jobs and
// removes the Unix users no other lab still holds. LabOptions{.nodes = 1024, .profile = "large"}
// is a site-sized lab (large_profile.h): up to 1,024 slurmd and tens of thousands of jobs; its
// Down() cancels nothing and stops the job processes by PID, all at once, after the slurmd.
//
// LabOptions{.hosts = true} is the lab of hosts (issue #39): the same daemons, each in the network
// namespace of its host (hostnet.h), with addresses in 198.18.0.0/15 and names the lab resolves
// itself:
//
//   ctl     slurmctld and its munged          login   the clients (Client()), slurm-mcp
//   db      MariaDB, slurmdbd and its munged  c1..cK  two slurmd each (`slurmd -N`), a munged
//
// Every host has its own munged (one shared key; DIR/run/munge-HOST.socket.2) and its own
// DIR/hosts/HOST/etc/ (slurm.conf naming its munged, gres.conf, healthcheck.sh; on db,
// slurmdbd.conf): the controller is SlurmctldHost=localhost(ctl) and accounting
// AccountingStorageHost=db, names each host's /etc/hosts gives, so a name can stop resolving on
// one host. Nothing listens on the machine's own loopback. Down() stops the daemons, then takes
// the host network down (which kills by PID anything still inside a host) and checks that none
// of its namespaces, links or /etc/netns directories is left.
#ifndef SLURM_RCA_SCENARIOS_LIVE_LAB_H_
#define SLURM_RCA_SCENARIOS_LIVE_LAB_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenarios/live/hostnet.h"
#include "scenarios/live/process.h"

namespace slurm_rca::live {

struct LabOptions {
  std::string dir = "/tmp/slurm-rca-lab";
  int nodes = 4;
  // Ports: MariaDB base+6, slurmctld base+17, slurmdbd base+19, slurmd of node i base+200+i.
  int port_base = 16800;
  std::string cluster = "rca";
  // Where the *.in templates are; empty: LabTemplates(), which main sets.
  std::string templates;
  // Where the Debian packages put the daemons and clients.
  std::vector<std::string> program_dirs = {"/usr/sbin", "/usr/bin"};
  // A Slurm release built by scripts/build-slurm.sh (PREFIX/sbin, PREFIX/bin): its daemons and
  // clients run the lab instead of Debian's, every one of them from PREFIX (munged and MariaDB
  // stay Debian's). Empty: Debian's Slurm.
  std::string slurm_prefix;
  // How long Up() waits for each daemon to answer.
  std::chrono::seconds start_timeout{60};
  // The background Up() puts on the lab once it is ready: "clean" (idle nodes, an empty queue),
  // "busy" (other users' jobs, history and a maintenance drain; scenarios/live/profile.h) or
  // "large" (256..1024 nodes, a site's queue and history; scenarios/live/large_profile.h).
  std::string profile = "clean";
  // The busy profile's seed: the same seed, the same users, jobs and timings.
  std::uint64_t seed = 1;
  // The large profile's finished jobs (LargeOptions::history_tasks); < 0: the plan's 50,000 at
  // 1,024 nodes, scaled. Not kept in lab.conf: it matters only while Up() runs.
  int large_history = -1;
  // Where the busy profile records the Unix users it created and the labs holding each, shared
  // by every lab on the machine.
  std::string user_registry = "/var/lib/slurm-rca/users";
  // The lab of hosts (header comment): each host a network namespace. Its tag is
  // HostNet::TagForPortBase(port_base). Clean or busy profile; not large.
  bool hosts = false;
};

// The templates directory of every lab whose LabOptions::templates is empty: main sets it once
// from its base::DataPaths::lab_templates (a test from its source tree). Empty until then, and a
// lab without templates fails Up() saying so.
void SetLabTemplates(const std::string& dir);
const std::string& LabTemplates();

// The profiles LabOptions::profile may name: clean, busy, large.
const std::vector<std::string>& LabProfiles();

// What the lab's processes hold, from /proc: the daemons we started (by their recorded PIDs) and
// the job processes (slurmstepd and what it runs).
struct LabFootprint {
  int daemons = 0;
  long daemon_rss_kib = 0;
  double daemon_cpu_s = 0;  // user + system, since each started
  int slurmds = 0;
  long slurmd_rss_kib = 0;
  long slurmctld_rss_kib = 0;
  int job_processes = 0;
  long job_rss_kib = 0;
  std::string ToText() const;  // "footprint: 1028 daemons 5210 MiB RSS (slurmd 1024 x 5 MiB ..."
};

// One daemon of the lab, as Status() sees it.
struct DaemonStatus {
  std::string name;              // munged, mariadbd, slurmdbd, slurmctld, slurmd-node1, ...
  std::optional<ProcessId> id;   // what we started; nullopt if never started or stopped
  bool alive = false;
  char state = '?';              // from /proc: R, S, T (stopped), ...
  std::string health;            // "ok" or what the probe said
};

class Lab {
 public:
  // Reads DIR/lab.conf when a lab exists there; its settings win over options.
  explicit Lab(LabOptions options);

  base::Status Up(std::ostream& progress);
  base::Status Down(std::ostream& progress);
  std::vector<DaemonStatus> Inspect() const;

  // Runs a Slurm client (by name, e.g. "sinfo") against this lab.
  ToolResult Client(std::vector<std::string> argv,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  // The environment clients get: PATH, LANG and SLURM_CONF.
  std::vector<std::string> ClientEnv() const;

  // Daemon control, for the fault primitives.
  std::vector<std::string> DaemonNames() const;  // in start order
  std::optional<ProcessId> DaemonId(const std::string& name) const;
  base::Status StartDaemon(const std::string& name, std::ostream& progress);
  base::Status StopDaemon(const std::string& name);
  // Waits until the lab is in its profile's resting state and accounting answers. Clean: every
  // node idle. Busy: the maintenance node drained with the profile's reason, every other node
  // responding and not drained or down (idle, mixed, allocated, planned or completing: the
  // background's jobs are left alone).
  base::Status WaitReady(std::chrono::seconds timeout) const;

  // The lab of hosts (LabOptions::hosts): ctl, db, login, c1..cK, in address order; empty for a
  // one-host lab.
  std::vector<HostSpec> Hosts() const;
  // The host a daemon (a DaemonNames() entry) or node ("node3") runs on; "" on a one-host lab.
  std::string HostOf(const std::string& daemon_or_node) const;
  // The hosts lab's network (from the state file Up() wrote); an error on a one-host lab or
  // before Up().
  base::Result<HostNet> Net() const;
  // argv run on host (HostNet::ExecArgv) on the hosts lab; argv itself on a one-host lab (so
  // OnHost("login", argv) is how a client runs on either) or for host "".
  base::Result<std::vector<std::string>> OnHost(const std::string& host,
                                                std::vector<std::string> argv) const;
  // The slurm.conf a host's programs read: DIR/hosts/HOST/etc/slurm.conf; SlurmConf() on a
  // one-host lab.
  std::string ConfOf(const std::string& host) const;
  // The munged socket a host's programs use (DIR/run/munge-HOST.socket.2; on a one-host lab, or
  // for host "", the one munged's DIR/run/munge.socket.2).
  std::string MungeSocket(const std::string& host) const;

  // The lab's RSS and CPU now (LabFootprint).
  LabFootprint MeasureFootprint() const;

  bool exists() const;  // DIR/lab.conf is there
  const LabOptions& options() const { return options_; }
  std::string Path(const std::string& rel) const { return options_.dir + "/" + rel; }
  // The clients' slurm.conf: DIR/etc/slurm.conf, or on the hosts lab the login host's.
  std::string SlurmConf() const;
  int DbPort() const { return options_.port_base + 6; }
  int CtldPort() const { return options_.port_base + 17; }
  int DbdPort() const { return options_.port_base + 19; }
  int SlurmdPort(int node) const { return options_.port_base + 200 + node; }
  std::vector<std::string> NodeNames() const;
  std::vector<std::string> GpuNodeNames() const;
  std::string Program(const std::string& name) const;  // absolute path, or ""
  // The directories Slurm's clients come from: PREFIX/bin, PREFIX/sbin first when the lab runs a
  // built release, then program_dirs.
  std::vector<std::string> SlurmDirs() const;
  // The release the lab's clients report, "25.11.4" (`sinfo --version` prints "slurm 25.11.4",
  // Debian's "slurm-wlm 22.05.8"); "" when it cannot be run or says something else.
  std::string SlurmVersion() const;

 private:
  base::Status CheckPackages() const;
  base::Status WriteConfig() const;
  base::Status CheckPortFree(int port, const std::string& who) const;
  base::Status Probe(const std::string& name) const;
  // WaitReady for a clean (every node idle) or a busy lab.
  base::Status WaitSettled(std::chrono::seconds timeout, bool busy) const;
  base::Status Provision(std::ostream& progress) const;
  // The large profile's slurmd, in waves, without a probe each.
  base::Status StartNodes(std::ostream& progress);
  // A daemon's argv: HostlessArgv run on its host (OnHost); empty for an unknown daemon.
  std::vector<std::string> DaemonArgv(const std::string& name) const;
  std::vector<std::string> HostlessArgv(const std::string& name) const;
  // What a daemon is started with: ClientEnv() with SLURM_CONF its host's slurm.conf.
  std::vector<std::string> DaemonEnv(const std::string& name) const;
  // WriteConfig's etc files for one host (hosts lab) or the lab (host ""), into etc_dir.
  base::Status WriteEtc(const std::string& host, const std::string& etc_dir) const;
  void CleanUpFaultState(std::ostream& progress) const;

  LabOptions options_;
};

// The warning Lab::Up prints when a lab's ports (port_base+6 .. port_base+200+nodes) overlap the
// kernel's ephemeral range [lo, hi] (/proc/sys/net/ipv4/ip_local_port_range), where any client
// socket may take one; empty when they do not.
std::string EphemeralPortWarning(int port_base, int nodes, int lo, int hi);

// The large profile (large_profile.h) put on a lab, in lab_profile.cc: users, accounts, QOS and
// limits (the busy profile's machinery), the reservation, then the trace's history (waited for
// until it has left the queue), its running jobs (waited for until they run) and its pending
// jobs. Prints each phase's time and rate. Not idempotent: for a lab Up() just started.
struct LargeTrace;
base::Status ApplyLargeProfile(Lab& lab, const LargeTrace& trace, std::ostream& progress);

// The busy profile (profile.h) put on a lab and taken off it, in lab_profile.cc: declared here,
// beside the lab they change, so that the profile's trace needs no lab.
struct BusyTrace;

// Makes the lab look like the trace: users (useradd when missing, recorded in the registry),
// accounts and associations (sacctmgr), the running jobs and the history (waited for, up to
// 120 s), the maintenance drain, then the pending and future jobs. Writes the trace to
// DIR/busy.trace and the users this lab holds to DIR/run/busy.users. Not idempotent: for a lab
// Up() just started.
base::Status ApplyBusyProfile(Lab& lab, const BusyTrace& trace, std::ostream& progress);

// Releases the users this lab holds (DIR/run/busy.users): each is removed (userdel) when no other
// live lab holds it. For Lab::Down, once no job process is left.
base::Status ReleaseBusyProfile(const Lab& lab, std::ostream& progress);

// The registry's record of a user the busy profile created: the lab directories that hold it.
// Empty when it holds none or was never created by a lab. `registry` is LabOptions::user_registry.
std::vector<std::string> UserHolders(const std::string& registry, const std::string& user);

// Mount points at or below dir, deepest first (from /proc/self/mountinfo).
std::vector<std::string> MountsUnder(const std::string& dir);

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_LAB_H_

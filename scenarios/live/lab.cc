#include "scenarios/live/lab.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/file.h"
#include "scenarios/live/large_profile.h"
#include "scenarios/live/profile.h"

namespace slurm_rca::live {

using base::Status;

namespace {

// The kernel's ephemeral port range (where client sockets get their local port), or nullopt when
// it cannot be read. A lab whose ports fall inside it can lose one to any outgoing connection.
std::optional<std::pair<int, int>> EphemeralRange() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int lo = 0, hi = 0;
  if (!(in >> lo >> hi) || lo <= 0 || hi < lo) return std::nullopt;
  return std::make_pair(lo, hi);
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string Fixed(double v, int digits = 2) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}


bool WriteFile(const std::string& path, const std::string& text, fs::perms perms) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return false;
  out << text;
  out.close();
  std::error_code ec;
  fs::permissions(path, perms, ec);
  return !ec && out;
}

std::string Substitute(std::string text, const std::map<std::string, std::string>& vars) {
  for (const auto& [key, value] : vars) {
    std::string token = "@" + key + "@";
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at)) {
      text.replace(at, token.size(), value);
      at += value.size();
    }
  }
  return text;
}

// "node[1-2]" for 1..2, "node1" for 1..1.
std::string HostRange(int first, int last) {
  if (first == last) return "node" + std::to_string(first);
  return "node[" + std::to_string(first) + "-" + std::to_string(last) + "]";
}

std::string PortRange(int first, int last) {
  if (first == last) return std::to_string(first);
  return std::to_string(first) + "-" + std::to_string(last);
}

// Polls until probe() is ok or the timeout passes; returns the last status.
template <typename Probe>
Status WaitFor(std::chrono::milliseconds timeout, Probe probe) {
  auto deadline = Clock::now() + timeout;
  Status last;
  while (true) {
    last = probe();
    if (last.ok() || Clock::now() >= deadline) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Processes whose session is sid (daemons we started lead their own sessions; what they fork,
// such as slurmstepd, stays in it unless it calls setsid itself).
std::vector<pid_t> SessionsMembers(const std::set<pid_t>& sids) {
  std::vector<pid_t> pids;
  if (sids.empty()) return pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::string stat = base::ReadFile("/proc/" + name + "/stat").value_or("");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state, ppid, pgrp, session;
    rest >> state >> ppid >> pgrp >> session;
    pid_t sid = 0;
    if (std::from_chars(session.data(), session.data() + session.size(), sid).ec != std::errc() ||
        !sids.count(sid)) {
      continue;
    }
    pids.push_back(std::stoi(name));
  }
  return pids;
}

std::vector<pid_t> SessionMembers(pid_t sid) { return SessionsMembers({sid}); }

// This process and its ancestors (the shell that ran `rca-bench cluster down` may export the
// lab's SLURM_CONF itself).
std::vector<pid_t> SelfAndAncestors() {
  std::vector<pid_t> chain;
  for (pid_t p = ::getpid(); p > 1;) {
    chain.push_back(p);
    std::string stat = base::ReadFile("/proc/" + std::to_string(p) + "/stat").value_or("");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) break;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    pid_t parent = 0;
    rest >> state >> parent;
    p = parent;
  }
  return chain;
}

// The lab's job processes: slurmstepd and what it runs. They detach from the daemons' sessions,
// so they are found by what they carry: this lab's SLURM_CONF in their environment, and either a
// job id (job processes, srun) or the slurmstepd binary as their executable.
std::vector<pid_t> JobProcesses(const std::string& slurm_conf, const std::string& slurmstepd) {
  std::vector<pid_t> exclude = SelfAndAncestors();
  std::string want = "SLURM_CONF=" + slurm_conf;
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    pid_t pid = std::stoi(name);
    if (std::find(exclude.begin(), exclude.end(), pid) != exclude.end()) continue;
    std::string env = base::ReadFile("/proc/" + name + "/environ").value_or("");
    bool ours = false, job = false;
    for (size_t at = 0; at < env.size();) {
      size_t end = env.find('\0', at);
      std::string_view var(env.data() + at, (end == std::string::npos ? env.size() : end) - at);
      ours = ours || var == want;
      job = job || var.substr(0, 13) == "SLURM_JOB_ID=";
      at = end == std::string::npos ? env.size() : end + 1;
    }
    if (!ours) continue;
    std::error_code link_ec;
    bool stepd = !slurmstepd.empty() &&
                 fs::read_symlink(entry.path() / "exe", link_ec).string() == slurmstepd;
    if (job || stepd) pids.push_back(pid);
  }
  return pids;
}

const std::vector<std::string> kBaseEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C",
                                           "LC_ALL=C", "TZ=UTC"};

}  // namespace

std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string id, parent, devno, root, point;
    f >> id >> parent >> devno >> root >> point;
    if (point == dir || point.rfind(dir + "/", 0) == 0) mounts.push_back(point);
  }
  std::sort(mounts.begin(), mounts.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return mounts;
}

namespace {
std::string& LabTemplatesRef() {
  static std::string dir;
  return dir;
}
}  // namespace

void SetLabTemplates(const std::string& dir) { LabTemplatesRef() = dir; }
const std::string& LabTemplates() { return LabTemplatesRef(); }

Lab::Lab(LabOptions options) : options_(std::move(options)) {
  if (options_.templates.empty()) options_.templates = LabTemplates();
  while (options_.dir.size() > 1 && options_.dir.back() == '/') options_.dir.pop_back();
  std::ifstream in(Path("lab.conf"));
  std::string key;
  while (in >> key) {
    if (key == "nodes") in >> options_.nodes;
    if (key == "port_base") in >> options_.port_base;
    if (key == "cluster") in >> options_.cluster;
    if (key == "profile") in >> options_.profile;
    if (key == "seed") in >> options_.seed;
    if (key == "slurm_prefix") in >> options_.slurm_prefix;
    if (key == "hosts") in >> options_.hosts;
  }
  while (options_.slurm_prefix.size() > 1 && options_.slurm_prefix.back() == '/') {
    options_.slurm_prefix.pop_back();
  }
}

std::vector<std::string> Lab::SlurmDirs() const {
  std::vector<std::string> dirs;
  if (!options_.slurm_prefix.empty()) {
    dirs = {options_.slurm_prefix + "/bin", options_.slurm_prefix + "/sbin"};
  }
  dirs.insert(dirs.end(), options_.program_dirs.begin(), options_.program_dirs.end());
  return dirs;
}

std::string Lab::SlurmVersion() const {
  ToolResult r = Client({"sinfo", "--version"}, std::chrono::seconds(5));
  std::istringstream words(r.out);
  std::string word, version;
  words >> word >> version;
  return r.ok() && word.rfind("slurm", 0) == 0 ? version : "";
}

const std::vector<std::string>& LabProfiles() {
  static const std::vector<std::string> profiles = {"clean", "busy", "large"};
  return profiles;
}

bool Lab::exists() const { return fs::exists(Path("lab.conf")); }

std::vector<std::string> Lab::NodeNames() const {
  std::vector<std::string> names;
  for (int i = 1; i <= options_.nodes; ++i) names.push_back("node" + std::to_string(i));
  return names;
}

std::vector<std::string> Lab::GpuNodeNames() const {
  std::vector<std::string> names = NodeNames();
  // The large profile: one node in eight (large_profile.h); every other lab: node1 and node2.
  size_t gpus = options_.profile == "large" ? names.size() / 8 : 2;
  names.resize(std::min<size_t>(names.size(), gpus));
  return names;
}

std::string Lab::Program(const std::string& name) const {
  return FindProgram(name, SlurmDirs());
}

std::vector<std::string> Lab::ClientEnv() const {
  std::vector<std::string> env = kBaseEnv;
  if (!options_.slurm_prefix.empty()) {
    // Batch jobs inherit it: their srun and scontrol are the release's too.
    env[0] = "PATH=" + options_.slurm_prefix + "/bin:" + options_.slurm_prefix + "/sbin:" +
             env[0].substr(5);
  }
  env.push_back("SLURM_CONF=" + SlurmConf());
  return env;
}

std::string Lab::SlurmConf() const {
  return options_.hosts ? ConfOf("login") : Path("etc/slurm.conf");
}

namespace {
// The hosts lab's compute hosts each run this many slurmd.
constexpr int kNodesPerComputeHost = 2;
}  // namespace

std::vector<HostSpec> Lab::Hosts() const {
  if (!options_.hosts) return {};
  std::vector<HostSpec> hosts = {{"ctl", "controller"}, {"db", "accounting"}, {"login", "login"}};
  const int computes = (options_.nodes + kNodesPerComputeHost - 1) / kNodesPerComputeHost;
  for (int i = 1; i <= computes; ++i) hosts.push_back({"c" + std::to_string(i), "compute"});
  return hosts;
}

std::string Lab::HostOf(const std::string& name) const {
  if (!options_.hosts) return "";
  if (name == "munged" || name == "slurmctld") return "ctl";
  if (name == "mariadbd" || name == "slurmdbd") return "db";
  if (name.rfind("munged-", 0) == 0) return name.substr(7);
  std::string node = name.rfind("slurmd-", 0) == 0 ? name.substr(7) : name;
  if (node.rfind("node", 0) == 0 && node.size() > 4 &&
      std::all_of(node.begin() + 4, node.end(), ::isdigit)) {
    const int i = std::stoi(node.substr(4));
    if (i >= 1 && i <= options_.nodes) {
      return "c" + std::to_string((i - 1) / kNodesPerComputeHost + 1);
    }
  }
  return "";
}

base::Result<HostNet> Lab::Net() const {
  if (!options_.hosts) return Status::InvalidArgument("not a lab of hosts (cluster up --hosts)");
  return HostNet::Load(options_.dir);
}

base::Result<std::vector<std::string>> Lab::OnHost(const std::string& host,
                                                   std::vector<std::string> argv) const {
  if (!options_.hosts || host.empty()) return argv;
  // The network is rebuilt from the options, not the state file: argv is needed before Up()
  // wrote it (and HostNet::ExecArgv reads nothing from the system).
  HostNet net(HostNetOptions{.tag = HostNet::TagForPortBase(options_.port_base),
                             .hosts = Hosts(),
                             .state_dir = options_.dir});
  return net.ExecArgv(host, argv);
}

std::string Lab::ConfOf(const std::string& host) const {
  if (!options_.hosts || host.empty()) return Path("etc/slurm.conf");
  return Path("hosts/" + host + "/etc/slurm.conf");
}

std::string Lab::MungeSocket(const std::string& host) const {
  if (!options_.hosts || host.empty()) return Path("run/munge.socket.2");
  return Path("run/munge-" + host + ".socket.2");
}

std::vector<std::string> Lab::DaemonEnv(const std::string& name) const {
  std::vector<std::string> env = ClientEnv();
  if (options_.hosts) env.back() = "SLURM_CONF=" + ConfOf(HostOf(name));
  return env;
}

ToolResult Lab::Client(std::vector<std::string> argv, std::chrono::milliseconds timeout) const {
  std::string path = Program(argv[0]);
  if (path.empty()) {
    ToolResult r;
    r.error = argv[0] + " is not installed";
    return r;
  }
  argv[0] = path;
  // On the hosts lab, clients run on the login host.
  base::Result<std::vector<std::string>> on = OnHost("login", argv);
  if (!on.ok()) {
    ToolResult r;
    r.error = on.status().message();
    return r;
  }
  // Batch jobs write slurm-N.out into the submitter's directory: keep those inside the lab.
  std::string work = Path("work");
  return RunTool(*on, ClientEnv(), timeout, "", fs::is_directory(work) ? work : "");
}

std::vector<std::string> Lab::DaemonNames() const {
  std::vector<std::string> names = {"munged"};
  // The hosts lab: every host's munged (ctl's is "munged"), first.
  for (const HostSpec& h : Hosts()) {
    if (h.name != "ctl") names.push_back("munged-" + h.name);
  }
  names.insert(names.end(), {"mariadbd", "slurmdbd", "slurmctld"});
  for (const std::string& n : NodeNames()) names.push_back("slurmd-" + n);
  return names;
}

std::optional<ProcessId> Lab::DaemonId(const std::string& name) const {
  std::string text = base::ReadFile(Path("run/" + name + ".id")).value_or("");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return ProcessId::Parse(text);
}

Status Lab::CheckPackages() const {
  const std::vector<std::pair<std::string, std::string>> needed = {
      {"munged", "munge"},          {"mungekey", "munge"},       {"munge", "munge"},
      {"unmunge", "munge"},         {"mariadbd", "mariadb-server"},
      {"mariadb-install-db", "mariadb-server"}, {"mariadb", "mariadb-client"},
      {"mariadb-admin", "mariadb-client"},      {"slurmdbd", "slurmdbd"},
      {"slurmctld", "slurmctld"},   {"slurmd", "slurmd"},        {"sinfo", "slurm-client"},
      {"sacctmgr", "slurm-client"}, {"scontrol", "slurm-client"}};
  if (const std::string& prefix = options_.slurm_prefix; !prefix.empty()) {
    // A built release runs whole or not at all: a daemon or client of Debian's in its place
    // would mix releases without a word.
    if (prefix.find_first_of(" \t\n") != std::string::npos || prefix.front() != '/') {
      return Status::Error("--slurm " + prefix + ": an absolute path without spaces, please");
    }
    std::string lacking;
    for (const char* program : {"slurmctld", "slurmd", "slurmdbd", "slurmstepd", "sinfo", "squeue",
                                "sacct", "sacctmgr", "scontrol", "sbatch", "scancel", "sdiag"}) {
      if (Program(program).rfind(prefix + "/", 0) != 0) lacking += std::string(" ") + program;
    }
    if (!lacking.empty()) {
      return Status::Error("--slurm " + prefix + " lacks" + lacking +
                           " (build it with scripts/build-slurm.sh TARBALL)");
    }
  }
  std::vector<std::string> missing;
  for (const auto& [program, package] : needed) {
    if (Program(program).empty() &&
        std::find(missing.begin(), missing.end(), package) == missing.end()) {
      missing.push_back(package);
    }
  }
  if (missing.empty()) return {};
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  return Status::Error("missing Debian packages:" + list +
                       " (run `make deps` as root, or apt-get install" + list + ")");
}

Status Lab::CheckPortFree(int port, const std::string& who) const {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error("cannot create a socket to test port " + std::to_string(port));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  if (free) return {};
  return Status::Error("port " + std::to_string(port) + " (" + who +
                       ") is in use on 127.0.0.1; another cluster may be running: stop it, or "
                       "choose other ports with --port-base");
}

namespace {

// slurm.conf's NODES: n nodes with 2 CPUs each, the first `gpus` of them with two GPUs each, and
// the partitions cpu (every node) and gpu, or `partitions` when it is not empty.
std::string NodesConf(const Lab& lab, int n, int gpus, const std::string& partitions) {
  std::string nodes;
  if (lab.options().hosts) {
    // One line per node: its address is its host's name (NodeAddr), which every host's
    // /etc/hosts resolves.
    for (int i = 1; i <= n; ++i) {
      const std::string name = "node" + std::to_string(i);
      nodes += "NodeName=" + name + " NodeHostname=localhost NodeAddr=" + lab.HostOf(name) +
               " Port=" + std::to_string(lab.SlurmdPort(i)) + " CPUs=2 RealMemory=1000" +
               (i <= gpus ? " Gres=gpu:2" : "") + " State=UNKNOWN\n";
    }
  } else {
    nodes = "NodeName=" + HostRange(1, gpus) + " NodeHostname=localhost NodeAddr=127.0.0.1 Port=" +
            PortRange(lab.SlurmdPort(1), lab.SlurmdPort(gpus)) +
            " CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN\n";
    if (n > gpus) {
      nodes += "NodeName=" + HostRange(gpus + 1, n) +
               " NodeHostname=localhost NodeAddr=127.0.0.1 Port=" +
               PortRange(lab.SlurmdPort(gpus + 1), lab.SlurmdPort(n)) +
               " CPUs=2 RealMemory=1000 State=UNKNOWN\n";
    }
  }
  if (!partitions.empty()) return nodes + partitions;
  nodes += "PartitionName=cpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  nodes += "PartitionName=gpu Nodes=" + HostRange(1, gpus) + " MaxTime=INFINITE State=UP";
  return nodes;
}

// The large profile's GPU nodes each get the nvidia-smi test double (templates/nvidia-smi.in) in
// its healthy mode in their trusted bin directory, where `fault inject gpu-fake` puts a faulty one.
Status InstallGpuDoubles(const Lab& lab) {
  std::string tmpl = lab.options().templates + "/nvidia-smi.in";
  std::optional<std::string> text = base::ReadFile(tmpl);
  if (!text || text->empty()) return Status::Error("template " + tmpl + " is missing or empty");
  std::string ok = Substitute(*text, {{"MODE", "ok"}});
  for (const std::string& node : lab.GpuNodeNames()) {
    std::string bin = lab.Path("nodes/" + node + "/bin/nvidia-smi");
    if (!WriteFile(bin, ok, fs::perms(0755))) return Status::Error("cannot write " + bin);
  }
  return {};
}

Status WriteGresConf(const Lab& lab, const std::string& etc_dir) {
  std::error_code ec;
  // slurmd counts a GPU only for a character device named in File=. The lab has no GPU: each
  // "GPU" is a device node aliasing /dev/null (1,3), made under the node's own directory.
  std::string gres = "# gres.conf of the slurm-rca lab. The GPU files are character devices\n"
                     "# aliasing /dev/null (1,3): the lab has no GPU.\n";
  for (const std::string& node : lab.GpuNodeNames()) {
    std::string dev = lab.Path("nodes/" + node + "/dev");
    fs::create_directories(dev, ec);
    for (const char* f : {"/nvidia0", "/nvidia1"}) {
      std::string path = dev + f;
      if (!fs::exists(path) && ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
        return Status::Error("cannot create the device node " + path + ": " +
                             std::strerror(errno) + " (the lab needs root)");
      }
    }
    gres += "NodeName=" + node + " Name=gpu File=" + dev + "/nvidia[0-1]\n";
  }
  if (!WriteFile(etc_dir + "/gres.conf", gres, fs::perms(0644))) {
    return Status::Error("cannot write " + etc_dir + "/gres.conf");
  }
  return {};
}

}  // namespace

Status Lab::WriteConfig() const {
  std::error_code ec;
  for (const char* d : {"etc", "run", "log", "state", "spool", "munge", "mysql/tmp", "nodes",
                        "work"}) {
    fs::create_directories(Path(d), ec);
    if (ec) return Status::Error("cannot create " + Path(d) + ": " + ec.message());
  }
  fs::permissions(Path("munge"), fs::perms::owner_all, ec);
  fs::permissions(Path("run"), fs::perms(0755), ec);
  for (const std::string& n : NodeNames()) {
    fs::create_directories(Path("nodes/" + n + "/bin"), ec);
    // 22.05's slurmd makes its SlurmdSpoolDir; 25.11's opens its domain socket there first and
    // logs "Domain socket directory ...: No such file or directory" when it is missing.
    fs::create_directories(Path("spool/" + n), ec);
  }
  for (const HostSpec& h : Hosts()) {
    fs::create_directories(Path("hosts/" + h.name + "/etc"), ec);
    if (ec) return Status::Error("cannot create " + Path("hosts/" + h.name + "/etc"));
  }
  if (options_.hosts) {
    for (const HostSpec& h : Hosts()) {
      if (Status s = WriteEtc(h.name, Path("hosts/" + h.name + "/etc")); !s.ok()) return s;
    }
  } else if (Status s = WriteEtc("", Path("etc")); !s.ok()) {
    return s;
  }
  if (options_.profile == "large") {
    if (Status s = InstallGpuDoubles(*this); !s.ok()) return s;
  }

  std::string conf = "nodes " + std::to_string(options_.nodes) + "\nport_base " +
                     std::to_string(options_.port_base) + "\ncluster " + options_.cluster +
                     "\nprofile " + options_.profile + "\nseed " +
                     std::to_string(options_.seed) + "\n";
  if (!options_.slurm_prefix.empty()) conf += "slurm_prefix " + options_.slurm_prefix + "\n";
  if (options_.hosts) conf += "hosts 1\n";
  if (!WriteFile(Path("lab.conf"), conf, fs::perms(0644))) {
    return Status::Error("cannot write " + Path("lab.conf"));
  }
  return {};
}

Status Lab::WriteEtc(const std::string& host, const std::string& etc_dir) const {
  int n = options_.nodes;
  int gpus = static_cast<int>(GpuNodeNames().size());
  const bool large = options_.profile == "large";
  // The large profile's partitions and scale settings (MaxJobCount, MaxArraySize, the
  // scheduler's): slurm.conf ends with them.
  std::string scale =
      large
          ? LargeSlurmConf(GenerateLargeTrace(options_.seed, LargeOptions{.nodes = options_.nodes}))
          : "";
  std::string nodes = NodesConf(*this, n, gpus, scale.substr(0, scale.find("MaxJobCount")));
  scale = large ? "\n" + scale.substr(scale.find("MaxJobCount")) : "";
  // Faults show within seconds on a small lab. A thousand slurmd on two cores answer a ping in
  // more than 10 s, and a health check every 5 s on each of them would be 200 runs a second: the
  // large lab waits longer, keeps finished jobs a minute, and runs no health check.
  const std::string health_check =
      large ? "# No health check: 1,024 slurmd running it every few seconds would take the CPUs.\n"
            : "# Drains a node whose GPU query fails or reports uncorrectable ECC errors.\n"
              "HealthCheckProgram=" +
                  etc_dir +
                  "/healthcheck.sh\n"
                  "HealthCheckInterval=5\nHealthCheckNodeState=ANY\n";
  std::map<std::string, std::string> vars = {
      {"DIR", options_.dir},
      {"CLUSTER", options_.cluster},
      {"CTLD_PORT", std::to_string(CtldPort())},
      {"DBD_PORT", std::to_string(DbdPort())},
      {"DB_PORT", std::to_string(DbPort())},
      {"NODES", nodes},
      {"SCALE", scale},
      {"SLURMD_TIMEOUT", large ? "300" : "10"},
      {"MESSAGE_TIMEOUT", large ? "30" : "10"},
      {"MIN_JOB_AGE", large ? "60" : "300"},
      {"HEALTH_CHECK", health_check},
      // A thousand slurmstepd each walking /proc every 30 s to account their job (with
      // proctrack/linuxproc) kept the 1,024-node lab's load at 270-340 on two cores.
      {"JOB_ACCT_GATHER",
       large ? "# No job accounting gather: 1,068 slurmstepd walking /proc took the CPUs.\n"
               "JobAcctGatherType=jobacct_gather/none"
             : "JobAcctGatherType=jobacct_gather/linux"},
      {"SLURM_CONF", etc_dir + "/slurm.conf"},
      {"MUNGE_SOCKET", MungeSocket(host)},
      {"CTLD_HOST", options_.hosts ? "localhost(ctl)" : "localhost"},
      {"DBD_HOST", options_.hosts ? "db" : "localhost"},
      // Each host's slurm.conf names its own munged's socket, so the files differ, as they do
      // not on a real site: the controller would log every node's registration as "a different
      // slurm.conf than the slurmctld".
      {"DEBUG_FLAGS", options_.hosts ? "# Each host's copy names its own munged socket.\n"
                                       "DebugFlags=NO_CONF_HASH\n"
                                     : ""},
      // The health check's sinfo and scontrol: the lab's release (a 22.05 client cannot talk to
      // a 25.11 controller).
      {"SLURM_PATH", options_.slurm_prefix.empty() ? "/usr/bin:/bin"
                                                   : options_.slurm_prefix + "/bin:/usr/bin:/bin"}};
  struct Out {
    const char* tmpl;
    const char* path;
    fs::perms perms;
  };
  for (const Out& o : {Out{"slurm.conf.in", "slurm.conf", fs::perms(0644)},
                       Out{"slurmdbd.conf.in", "slurmdbd.conf", fs::perms(0600)},
                       Out{"healthcheck.sh.in", "healthcheck.sh", fs::perms(0755)}}) {
    // slurmdbd.conf (with the database's password) only where slurmdbd runs.
    if (std::string(o.tmpl) == "slurmdbd.conf.in" && !host.empty() && host != "db") continue;
    if (options_.templates.empty()) {
      return Status::Error("no templates directory: LabOptions::templates is empty and main "
                           "did not SetLabTemplates");
    }
    std::string tmpl = options_.templates + "/" + o.tmpl;
    std::optional<std::string> text = base::ReadFile(tmpl);
    if (!text) return Status::Error("template " + tmpl + " is missing or unreadable");
    const std::string path = etc_dir + "/" + o.path;
    if (!WriteFile(path, Substitute(*text, vars), o.perms)) {
      return Status::Error("cannot write " + path);
    }
  }
  return WriteGresConf(*this, etc_dir);
}

std::vector<std::string> Lab::DaemonArgv(const std::string& name) const {
  std::vector<std::string> argv = HostlessArgv(name);
  if (argv.empty() || !options_.hosts) return argv;
  base::Result<std::vector<std::string>> on = OnHost(HostOf(name), argv);
  return on.ok() ? *on : std::vector<std::string>{};
}

std::vector<std::string> Lab::HostlessArgv(const std::string& name) const {
  if (name == "munged" || name.rfind("munged-", 0) == 0) {
    // "munged" is the one-host lab's and the hosts lab's controller's; "munged-HOST" another
    // host's, with a socket, pid file, log and seed file of its own (one key).
    std::vector<std::string> argv = {Program("munged"),
                                     "--foreground",
                                     "--force",
                                     "--key-file=" + Path("munge/munge.key"),
                                     "--socket=" + MungeSocket(HostOf(name)),
                                     "--pid-file=" + Path("run/" + name + ".pid"),
                                     "--log-file=" + Path("log/" + name + ".log"),
                                     "--seed-file=" + Path("munge/" + name + ".seed")};
    // A thousand slurmd and their jobs authenticate at once (munge's own advice is 10 threads).
    if (options_.profile == "large") argv.push_back("--num-threads=10");
    return argv;
  }
  if (name == "mariadbd") {
    return {Program("mariadbd"), "--no-defaults", "--user=root", "--datadir=" + Path("mysql/data"),
            "--tmpdir=" + Path("mysql/tmp"), "--socket=" + Path("run/mysqld.sock"),
            "--port=" + std::to_string(DbPort()), "--bind-address=127.0.0.1",
            "--pid-file=" + Path("run/mariadbd.pid"), "--log-error=" + Path("log/mariadbd.err"),
            "--innodb-buffer-pool-size=128M", "--innodb-log-file-size=64M",
            "--innodb-lock-wait-timeout=900"};
  }
  if (name == "slurmdbd") return {Program("slurmdbd"), "-D"};
  if (name == "slurmctld") return {Program("slurmctld"), "-D", "-f", ConfOf(HostOf(name))};
  if (name.rfind("slurmd-", 0) == 0) {
    return {Program("slurmd"), "-D", "-N", name.substr(7), "-f", ConfOf(HostOf(name))};
  }
  return {};
}

Status Lab::Probe(const std::string& name) const {
  auto fail = [&](const ToolResult& r) { return Status::Error(r.Summary()); };
  if (name == "munged" || name.rfind("munged-", 0) == 0) {
    std::string sock = MungeSocket(HostOf(name));
    ToolResult cred = RunTool({Program("munge"), "-n", "-S", sock}, kBaseEnv, std::chrono::seconds(5));
    if (!cred.ok()) return fail(cred);
    ToolResult back = RunTool({Program("unmunge"), "-S", sock}, kBaseEnv, std::chrono::seconds(5), cred.out);
    return back.ok() ? Status() : fail(back);
  }
  if (name == "mariadbd") {
    ToolResult r = RunTool({Program("mariadb-admin"), "--no-defaults", "-S", Path("run/mysqld.sock"),
                            "-uroot", "ping"},
                           kBaseEnv, std::chrono::seconds(5));
    return r.ok() ? Status() : fail(r);
  }
  if (name == "slurmdbd") {
    ToolResult r = Client({"sacctmgr", "-n", "-P", "show", "cluster", "format=cluster"},
                          std::chrono::seconds(5));
    return r.ok() ? Status() : fail(r);
  }
  if (name == "slurmctld") {
    ToolResult r = Client({"scontrol", "ping"}, std::chrono::seconds(5));
    if (!r.ok()) return fail(r);
    if (r.out.find("is UP") != std::string::npos) return Status();
    return Status::Error(r.out.empty() ? "scontrol ping printed nothing" : r.out);
  }
  if (name.rfind("slurmd-", 0) == 0) {
    ToolResult r = Client({"sinfo", "-h", "-n", name.substr(7), "-o", "%T"}, std::chrono::seconds(5));
    if (!r.ok()) return fail(r);
    std::string state = r.out.substr(0, r.out.find('\n'));
    if (state.empty()) return Status::Error("not in sinfo");
    if (state.find('*') != std::string::npos || state == "down" || state == "unknown") {
      return Status::Error(state);
    }
    return {};
  }
  return Status::Error("unknown daemon " + name);
}

Status Lab::Provision(std::ostream& progress) const {
  // Database and user for slurmdbd.
  ToolResult db = RunTool(
      {Program("mariadb"), "--no-defaults", "-S", Path("run/mysqld.sock"), "-uroot", "-e",
       "CREATE DATABASE IF NOT EXISTS slurm_acct_db; "
       "CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw'; "
       "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw'; "
       "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; "
       "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"},
      kBaseEnv, std::chrono::seconds(30));
  if (!db.ok()) return Status::Error("cannot create the accounting database: " + db.Summary());
  return {};
}

Status Lab::StartNodes(std::ostream& progress) {
  // In waves of 64, each waited for until the controller counts most of it idle: a thousand slurmd
  // started at once on two cores register late, and late nodes are set DOWN.
  auto start = Clock::now();
  const std::vector<std::string> nodes = NodeNames();
  const size_t wave = 64;
  for (size_t first = 0; first < nodes.size(); first += wave) {
    const size_t last = std::min(nodes.size(), first + wave);
    for (size_t i = first; i < last; ++i) {
      const std::string name = "slurmd-" + nodes[i];
      if (auto id = DaemonId(name); id && IsAlive(*id)) continue;
      const int port = SlurmdPort(static_cast<int>(i) + 1);
      if (Status s = CheckPortFree(port, "slurmd of " + nodes[i]); !s.ok()) return s;
      SpawnResult spawned =
          SpawnDaemon(DaemonArgv(name), DaemonEnv(name), Path("log/" + name + ".stdout"));
      if (!spawned.id) return Status::Error(name + ": " + spawned.error);
      if (!WriteFile(Path("run/" + name + ".id"), spawned.id->ToString() + "\n", fs::perms(0644))) {
        return Status::Error("cannot record the PID of " + name);
      }
    }
    const int want = static_cast<int>(last * 9 / 10);
    int idle = 0;
    Status ready = WaitFor(std::chrono::seconds(120), [&]() -> Status {
      // A node in several partitions is listed once for each.
      ToolResult r =
          Client({"sinfo", "-h", "-N", "-t", "idle", "-o", "%N"}, std::chrono::seconds(10));
      std::istringstream names(r.out);
      std::set<std::string> unique;
      for (std::string node; names >> node;) unique.insert(node);
      idle = static_cast<int>(unique.size());
      return idle >= want ? Status() : Status::Error(std::to_string(idle) + " idle");
    });
    if (!ready.ok()) {
      return Status::Error("slurmd " + nodes[first] + ".." + nodes[last - 1] +
                           " did not register within 120 s: " + ready.message() + " of " +
                           std::to_string(last));
    }
    progress << "  slurmd " << last << "/" << nodes.size() << " started, " << idle << " idle +"
             << Fixed(Since(start)) << " s\n" << std::flush;
  }
  return {};
}

Status Lab::StartDaemon(const std::string& name, std::ostream& progress) {
  auto start = Clock::now();
  if (auto id = DaemonId(name); id && IsAlive(*id)) return {};
  if ((name == "munged" || name.rfind("munged-", 0) == 0) &&
      !fs::exists(Path("munge/munge.key"))) {
    ToolResult key = RunTool({Program("mungekey"), "--create", "--keyfile=" + Path("munge/munge.key")},
                             kBaseEnv, std::chrono::seconds(10));
    if (!key.ok()) return Status::Error("mungekey: " + key.Summary());
  }
  if (name == "mariadbd" && !fs::exists(Path("mysql/data/mysql"))) {
    std::error_code tmp_ec;
    fs::create_directories(Path("mysql/tmp"), tmp_ec);
    ToolResult init = RunTool({Program("mariadb-install-db"), "--no-defaults",
                               "--datadir=" + Path("mysql/data"), "--user=root",
                               "--auth-root-authentication-method=normal", "--skip-test-db",
                               // Its own temporary directory: labs set up at once in /tmp
                               // removed each other's temporary tables.
                               "--tmpdir=" + Path("mysql/tmp")},
                              kBaseEnv, std::chrono::seconds(120));
    if (!init.ok()) return Status::Error("mariadb-install-db: " + init.Summary());
  }
  std::map<std::string, std::pair<int, std::string>> ports = {
      {"mariadbd", {DbPort(), "MariaDB"}},
      {"slurmdbd", {DbdPort(), "slurmdbd"}},
      {"slurmctld", {CtldPort(), "slurmctld"}}};
  if (name.rfind("slurmd-node", 0) == 0) {
    int i = std::stoi(name.substr(11));
    ports[name] = {SlurmdPort(i), "slurmd of node" + std::to_string(i)};
  }
  // On the hosts lab the ports are the hosts' own, not the machine's.
  if (auto p = ports.find(name); p != ports.end() && !options_.hosts) {
    if (Status s = CheckPortFree(p->second.first, p->second.second); !s.ok()) return s;
  }
  std::vector<std::string> env = DaemonEnv(name);
  auto spawn_and_wait = [&](std::vector<std::string> argv, std::optional<ProcessId>& id) {
    SpawnResult spawned = SpawnDaemon(argv, env, Path("log/" + name + ".stdout"));
    if (!spawned.id) return Status::Error(spawned.error);
    id = spawned.id;
    if (!WriteFile(Path("run/" + name + ".id"), spawned.id->ToString() + "\n", fs::perms(0644))) {
      return Status::Error("cannot record the PID of " + name);
    }
    return WaitFor(options_.start_timeout, [&] {
      if (!IsAlive(*spawned.id)) {
        return Status::Error("exited; see " + Path("log/" + name + ".stdout") + " and its log");
      }
      return Probe(name);
    });
  };
  std::optional<ProcessId> started;
  Status ready = spawn_and_wait(DaemonArgv(name), started);
  // Slurm 25.11's slurmctld refuses to start again when its state directory has a clustername
  // file but no association usage (fatal "No Assoc usage file"): a controller killed before its
  // first periodic state save (300 s) left nothing to recover. An operator starts it with -i
  // (ignore state errors); nothing is lost that was ever saved. 22.05 starts without it.
  if (!ready.ok() && name == "slurmctld" && started && !IsAlive(*started)) {
    std::string out = base::ReadFile(Path("log/slurmctld.stdout")).value_or("");
    if (out.find("fatal: No Assoc usage file") != std::string::npos) {
      progress << "  slurmctld: no association usage was ever saved (killed before its first "
                  "state save); started again with -i, as an operator would\n";
      std::vector<std::string> argv = DaemonArgv(name);
      argv.push_back("-i");
      ready = spawn_and_wait(argv, started);
    }
  }
  if (!ready.ok()) return Status::Error(name + " did not come up: " + ready.message());
  const std::optional<ProcessId>& spawned_id = started;
  if (name == "mariadbd") {
    if (Status s = Provision(progress); !s.ok()) return s;
  }
  progress << "  " << name << " up (pid " << spawned_id->pid << ") +" << Fixed(Since(start))
           << " s\n";
  return {};
}

Status Lab::StopDaemon(const std::string& name) {
  auto id = DaemonId(name);
  if (!id) return {};
  pid_t sid = id->pid;
  bool stopped = StopProcess(*id, std::chrono::seconds(15));
  // What the daemon forked and left in its session (slurmstepd of a running job, say).
  if (stopped) {
    for (pid_t member : SessionMembers(sid)) {
      if (auto m = IdentifyProcess(member)) StopProcess(*m, std::chrono::seconds(5));
    }
  }
  if (!stopped) return Status::Error(name + " (pid " + std::to_string(id->pid) + ") did not stop");
  fs::remove(Path("run/" + name + ".id"));
  return {};
}

Status Lab::WaitReady(std::chrono::seconds timeout) const {
  return WaitSettled(timeout, options_.profile != "clean");
}

Status Lab::WaitSettled(std::chrono::seconds timeout, bool busy) const {
  // A busy lab rests with its maintenance node drained and its background jobs running.
  std::string maint_node, maint_reason;
  if (busy && options_.profile == "busy") {
    BusyTrace trace = GenerateBusyTrace(options_.seed, TraceOptions{.nodes = options_.nodes});
    maint_node = trace.maintenance_node;
    maint_reason = trace.maintenance_reason;
  }
  auto busy_state_ok = [](const std::string& state) {
    static const std::set<std::string> ok = {"idle", "mixed", "allocated", "planned",
                                             "completing"};
    std::istringstream parts(state);
    for (std::string p; std::getline(parts, p, '+');) {
      if (!ok.count(p)) return false;
    }
    return !state.empty();
  };
  return WaitFor(timeout, [&]() -> Status {
    ToolResult r = Client({"sinfo", "-h", "-N", "-o", "%N|%T|%E"}, std::chrono::seconds(5));
    if (!r.ok()) return Status::Error("sinfo: " + r.Summary());
    std::map<std::string, std::pair<std::string, std::string>> seen;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      size_t a = line.find('|'), b = line.find('|', a == std::string::npos ? a : a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      seen[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
    }
    int ready = 0;
    std::string wrong;
    for (const auto& [node, st] : seen) {
      const auto& [state, reason] = st;
      bool ok = !busy ? state == "idle"
                : node == maint_node
                    ? state.find("drain") != std::string::npos &&
                          state.find('*') == std::string::npos && reason == maint_reason
                    : busy_state_ok(state);
      ready += ok;
      if (!ok && wrong.empty()) {
        wrong = node + " is " + state + (reason == "none" ? "" : " (" + reason + ")");
      }
    }
    if (ready != options_.nodes || static_cast<int>(seen.size()) != options_.nodes) {
      return Status::Error(std::to_string(ready) + " of " + std::to_string(options_.nodes) +
                           (busy ? " nodes in the busy profile's state" : " nodes idle") +
                           (wrong.empty() ? "" : "; " + wrong));
    }
    // A large lab's accounting holds tens of thousands of jobs: ask for one.
    ToolResult acct = options_.profile == "large"
                          ? Client({"sacct", "-n", "-X", "-a", "-j", "1"}, std::chrono::seconds(10))
                          : Client({"sacct", "-n", "-X", "-a"}, std::chrono::seconds(5));
    if (!acct.ok()) return Status::Error("accounting does not answer: " + acct.Summary());
    return {};
  });
}

namespace {

// VmRSS (KiB) and utime+stime (clock ticks) of a process, from /proc; nullopt once it is gone.
std::optional<std::pair<long, long>> RssAndCpu(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::string status = base::ReadFile(dir + "/status").value_or("");
  std::string stat = base::ReadFile(dir + "/stat").value_or("");
  size_t at = status.find("VmRSS:"), close = stat.rfind(')');
  if (at == std::string::npos || close == std::string::npos) return std::nullopt;
  long rss = std::strtol(status.c_str() + at + 6, nullptr, 10);
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return std::make_pair(rss, utime + stime);
}

}  // namespace

std::string LabFootprint::ToText() const {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(0);
  o << "footprint: " << daemons << " daemons " << daemon_rss_kib / 1024.0 << " MiB RSS (slurmd "
    << slurmds << " x " << (slurmds ? slurmd_rss_kib / 1024.0 / slurmds : 0.0)
    << " MiB = " << slurmd_rss_kib / 1024.0 << " MiB; slurmctld " << slurmctld_rss_kib / 1024.0
    << " MiB), their CPU " << daemon_cpu_s << " s; " << job_processes << " job processes "
    << job_rss_kib / 1024.0 << " MiB RSS";
  return o.str();
}

LabFootprint Lab::MeasureFootprint() const {
  LabFootprint f;
  const long ticks = ::sysconf(_SC_CLK_TCK);
  for (const std::string& name : DaemonNames()) {
    auto id = DaemonId(name);
    if (!id || !IsAlive(*id)) continue;
    auto m = RssAndCpu(id->pid);
    if (!m) continue;
    ++f.daemons;
    f.daemon_rss_kib += m->first;
    f.daemon_cpu_s += static_cast<double>(m->second) / static_cast<double>(ticks);
    if (name.rfind("slurmd-", 0) == 0) {
      ++f.slurmds;
      f.slurmd_rss_kib += m->first;
    }
    if (name == "slurmctld") f.slurmctld_rss_kib = m->first;
  }
  std::string stepd = Program("slurmstepd");
  std::error_code ec;
  if (!stepd.empty()) stepd = fs::canonical(stepd, ec).string();
  for (pid_t pid : JobProcesses(SlurmConf(), stepd)) {
    if (auto m = RssAndCpu(pid)) {
      ++f.job_processes;
      f.job_rss_kib += m->first;
    }
  }
  return f;
}

std::string EphemeralPortWarning(int port_base, int nodes, int lo, int hi) {
  const int first = port_base + 6, last = port_base + 200 + nodes;
  if (first > hi || last < lo) return "";
  std::ostringstream w;
  w << "warning: ports " << first << ".." << last << " overlap the ephemeral range " << lo << "-"
    << hi << " (/proc/sys/net/ipv4/ip_local_port_range): a client socket may take one; choose a "
    << "--port-base at most " << lo - 201 - nodes << " or above " << hi - 6 << "\n";
  return w.str();
}

Status Lab::Up(std::ostream& progress) {
  auto start = Clock::now();
  const bool large = options_.profile == "large";
  if (large) {
    if (Status s = CheckLargeNodes(options_.nodes); !s.ok()) return s;
  } else if (options_.nodes < 1 || options_.nodes > 64) {
    return Status::Error("--nodes must be between 1 and 64 (256 to 1024 with --profile large)");
  }
  if (options_.dir.empty() || options_.dir.front() != '/') {
    return Status::Error("--dir must be an absolute path");
  }
  if (options_.dir.size() > 60) {
    return Status::Error("--dir is too long for the daemons' Unix sockets (60 characters at most)");
  }
  const auto& profiles = LabProfiles();
  if (std::find(profiles.begin(), profiles.end(), options_.profile) == profiles.end()) {
    return Status::Error("unknown profile '" + options_.profile + "' (clean, busy or large)");
  }
  if (options_.hosts && large) {
    return Status::Error("the lab of hosts runs the clean or busy profile, not large");
  }
  if (options_.profile == "busy" && options_.nodes < 4) {
    return Status::Error("the busy profile needs at least 4 nodes (it drains node4 and pins "
                         "jobs to node1 and node3)");
  }
  if (Status s = CheckPackages(); !s.ok()) return s;
  bool all_alive = exists();
  for (const std::string& name : DaemonNames()) {
    auto id = DaemonId(name);
    all_alive = all_alive && id && IsAlive(*id);
  }
  if (all_alive) {
    progress << "slurm-rca lab already up in " << options_.dir << "\n";
    return WaitReady(std::chrono::seconds(5));
  }
  progress << "starting the slurm-rca lab in " << options_.dir << " (" << options_.nodes
           << " nodes, cluster " << options_.cluster << ", profile " << options_.profile
           << (options_.profile != "clean" ? ", seed " + std::to_string(options_.seed) : "")
           << ")\n";
  // The hosts lab's ports are its hosts' own: no client socket of the machine can take one.
  if (auto eph = EphemeralRange(); eph && !options_.hosts) {
    progress << EphemeralPortWarning(options_.port_base, options_.nodes, eph->first, eph->second);
  }
  if (Status s = WriteConfig(); !s.ok()) return s;
  if (options_.hosts) {
    HostNet net(HostNetOptions{.tag = HostNet::TagForPortBase(options_.port_base),
                               .hosts = Hosts(),
                               .state_dir = options_.dir});
    if (Status s = net.Up(progress); !s.ok()) return Status::Error("the hosts' network: " + s.message());
  }
  for (const std::string& name : DaemonNames()) {
    if (name != "mariadbd" && name != "slurmdbd" && name.rfind("munged", 0) != 0) continue;
    if (Status s = StartDaemon(name, progress); !s.ok()) return s;
  }
  // Accounts, users and associations, before the controller starts: with
  // AccountingStorageEnforce=associations nobody can submit without them.
  const std::vector<std::vector<std::string>> provision = {
      {"sacctmgr", "-i", "add", "cluster", options_.cluster},
      {"sacctmgr", "-i", "add", "account", "research", "Description=research",
       "Organization=lab"},
      {"sacctmgr", "-i", "add", "account", "ops", "Description=operations", "Organization=lab"},
      {"sacctmgr", "-i", "add", "user", "root", "Account=research,ops", "DefaultAccount=research"},
      {"sacctmgr", "-i", "add", "user", "nobody", "Account=ops", "DefaultAccount=ops"}};
  for (const auto& argv : provision) {
    ToolResult r = Client(argv, std::chrono::seconds(30));
    // "Nothing new added" (exit 1) when it exists already.
    bool exists_already = r.out.find("Nothing new added") != std::string::npos ||
                          r.err.find("Nothing new added") != std::string::npos ||
                          r.out.find("already exists") != std::string::npos;
    if (!r.ok() && !exists_already) {
      return Status::Error(argv[2] + " " + argv[3] + " " + argv[4] + " failed: " + r.Summary());
    }
  }
  if (large) {
    if (Status s = StartDaemon("slurmctld", progress); !s.ok()) return s;
    if (Status s = StartNodes(progress); !s.ok()) return s;
  } else {
    for (const std::string& name : DaemonNames()) {
      if (name.rfind("munged", 0) == 0 || name == "mariadbd" || name == "slurmdbd") continue;
      if (Status s = StartDaemon(name, progress); !s.ok()) return s;
    }
  }
  // Ready as a clean lab first: the busy profile is put on a lab whose nodes are all idle.
  const std::string& profile = options_.profile;
  const auto settle =
      large ? std::max<std::chrono::seconds>(options_.start_timeout, std::chrono::seconds(300))
            : options_.start_timeout;
  if (Status s = WaitSettled(settle, /*busy=*/false); !s.ok()) {
    return Status::Error("the lab did not become ready: " + s.message());
  }
  if (profile == "busy") {
    BusyTrace trace = GenerateBusyTrace(options_.seed, TraceOptions{.nodes = options_.nodes});
    if (Status s = ApplyBusyProfile(*this, trace, progress); !s.ok()) {
      return Status::Error("the busy profile failed: " + s.message());
    }
    if (Status s = WaitReady(std::chrono::seconds(30)); !s.ok()) {
      return Status::Error("the busy lab did not settle: " + s.message());
    }
  }
  if (large) {
    LargeTrace trace = GenerateLargeTrace(
        options_.seed,
        LargeOptions{.nodes = options_.nodes, .history_tasks = options_.large_history});
    if (Status s = ApplyLargeProfile(*this, trace, progress); !s.ok()) {
      return Status::Error("the large profile failed: " + s.message());
    }
    if (Status s = WaitReady(std::chrono::seconds(60)); !s.ok()) {
      return Status::Error("the large lab did not settle: " + s.message());
    }
    progress << "  " << MeasureFootprint().ToText() << "\n";
  }
  progress << "lab up in " << Fixed(Since(start)) << " s: " << options_.nodes
           << (profile == "busy" ? " nodes (busy profile, seed " + std::to_string(options_.seed) +
                                       ": background jobs, " + "a node drained for maintenance)"
               : large ? " nodes (large profile, seed " + std::to_string(options_.seed) +
                             ": a site's queue and history)"
                       : " nodes idle")
           << ", accounting answers; Slurm " << SlurmVersion()
           << (options_.slurm_prefix.empty() ? " (Debian's)" : " from " + options_.slurm_prefix)
           << "\npoint Slurm commands at it with:\n  export SLURM_CONF=" << SlurmConf() << "\n";
  return {};
}

void Lab::CleanUpFaultState(std::ostream& progress) const {
  // RPC flood workers, by the PIDs recorded when they were started.
  std::ifstream pids(Path("run/flood.ids"));
  std::string line;
  while (std::getline(pids, line)) {
    if (auto id = ProcessId::Parse(line); id && IsAlive(*id)) {
      SignalProcess(*id, SIGKILL, /*group=*/true);
      StopProcess(*id, std::chrono::seconds(2));
    }
  }
  fs::remove(Path("run/flood.ids"));
  // The mariadb client holding the db-lock, by the PID in its record (pid=PID@START).
  std::ifstream lock(Path("faults/db-lock"));
  while (std::getline(lock, line)) {
    if (line.rfind("pid=", 0) != 0) continue;
    if (auto id = ProcessId::Parse(line.substr(4)); id && IsAlive(*id)) {
      StopProcess(*id, std::chrono::seconds(2));
      progress << "  stopped the db-lock client (pid " << id->pid << ")\n";
    }
  }
  // nftables tables named after this lab.
  std::string table_list = Path("run/nft.tables");
  std::ifstream tables(table_list);
  std::string nft = Program("nft");
  while (std::getline(tables, line)) {
    if (!line.empty() && !nft.empty()) {
      RunTool({nft, "delete", "table", "inet", line}, kBaseEnv, std::chrono::seconds(5));
    }
  }
  fs::remove(table_list);
  // Immutable flags and mounts on StateSaveLocation.
  if (fs::exists(Path("faults/statesave-readonly"))) {
    std::string chattr = Program("chattr");
    if (!chattr.empty()) {
      RunTool({chattr, "-R", "-i", Path("state")}, kBaseEnv, std::chrono::seconds(10));
    }
  }
  for (const std::string& m : MountsUnder(options_.dir)) {
    if (::umount2(m.c_str(), MNT_DETACH) == 0) progress << "  unmounted " << m << "\n";
  }
}

Status Lab::Down(std::ostream& progress) {
  if (!exists()) {
    progress << "no slurm-rca lab in " << options_.dir << ": nothing to stop\n";
    return {};
  }
  auto start = Clock::now();
  progress << "stopping the slurm-rca lab in " << options_.dir << "\n";
  CleanUpFaultState(progress);
  // Cancel the jobs while the controller can still end them cleanly. Not on a large lab: there
  // the controller took 94 s to end 556 jobs on 256 nodes (and most of 484 s on 1,024), while
  // the job processes it would have ended are stopped below, all at once, by PID.
  const bool large = options_.profile == "large";
  ToolResult jobs;
  if (!large) jobs = Client({"squeue", "-h", "-o", "%A"}, std::chrono::seconds(10));
  if (jobs.ok() && !jobs.out.empty()) {
    std::vector<std::string> cancel = {"scancel"};
    std::istringstream ids(jobs.out);
    for (std::string id; ids >> id;) cancel.push_back(id);
    Client(cancel, std::chrono::seconds(10));
    WaitFor(std::chrono::seconds(10), [&] {
      ToolResult q = Client({"squeue", "-h", "-o", "%A"}, std::chrono::seconds(5));
      return q.ok() && q.out.empty() ? Status() : Status::Error("jobs still queued");
    });
    progress << "  cancelled " << cancel.size() - 1 << " jobs +" << Fixed(Since(start)) << " s\n";
  }
  std::vector<std::string> failures;
  // Every slurmd at once (SIGTERM to all, one grace, SIGKILL to the rest), then what they left in
  // their sessions, found in one pass over /proc: one StopDaemon each, with its own pass, took
  // 167 s for 1,024 slurmd beside 3,204 job processes. Then the rest in reverse start order.
  std::vector<ProcessId> slurmds;
  std::vector<std::string> slurmd_names;
  for (const std::string& n : NodeNames()) {
    if (auto id = DaemonId("slurmd-" + n)) {
      slurmds.push_back(*id);
      slurmd_names.push_back("slurmd-" + n);
    }
  }
  std::vector<ProcessId> alive = StopProcesses(slurmds, std::chrono::seconds(15));
  std::set<pid_t> stopped_sessions;
  for (size_t i = 0; i < slurmds.size(); ++i) {
    const bool still = std::any_of(alive.begin(), alive.end(), [&](const ProcessId& a) {
      return a.pid == slurmds[i].pid;
    });
    if (still) {
      failures.push_back(slurmd_names[i] + " (pid " + std::to_string(slurmds[i].pid) +
                         ") did not stop");
    } else {
      stopped_sessions.insert(slurmds[i].pid);
      fs::remove(Path("run/" + slurmd_names[i] + ".id"));
    }
  }
  std::vector<ProcessId> members;
  for (pid_t member : SessionsMembers(stopped_sessions)) {
    if (auto m = IdentifyProcess(member)) members.push_back(*m);
  }
  StopProcesses(members, std::chrono::seconds(5));
  progress << "  slurmd stopped +" << Fixed(Since(start)) << " s\n";
  // The rest in reverse start order: slurmctld, slurmdbd, mariadbd, then every munged.
  std::vector<std::string> rest;
  for (const std::string& name : DaemonNames()) {
    if (name.rfind("slurmd-", 0) != 0) rest.insert(rest.begin(), name);
  }
  for (const std::string& name : rest) {
    auto t = Clock::now();
    if (Status s = StopDaemon(name); !s.ok()) {
      failures.push_back(s.message());
    } else {
      progress << "  " << name << " stopped +" << Fixed(Since(t)) << " s\n";
    }
  }
  // Job processes that outlived their slurmd (a job the controller could not cancel).
  std::string stepd_path = Program("slurmstepd");
  std::error_code canon_ec;
  if (!stepd_path.empty()) stepd_path = fs::canonical(stepd_path, canon_ec).string();
  // All at once: a large lab can leave a thousand, and one grace each took 20 minutes.
  std::vector<ProcessId> leftovers;
  for (pid_t pid : JobProcesses(SlurmConf(), stepd_path)) {
    if (auto id = IdentifyProcess(pid)) leftovers.push_back(*id);
  }
  if (!leftovers.empty()) {
    auto t = Clock::now();
    std::vector<ProcessId> alive = StopProcesses(leftovers, std::chrono::seconds(5));
    progress << "  stopped " << leftovers.size() - alive.size() << " of " << leftovers.size()
             << " job processes that outlived their slurmd +" << Fixed(Since(t)) << " s\n";
    for (const ProcessId& id : alive) {
      failures.push_back("job process " + std::to_string(id.pid) + " did not stop");
    }
  }
  ReapChildren();
  // The hosts' network last: its Down() kills by PID what is still inside a host (saying so) and
  // checks that nothing of it is left.
  if (options_.hosts && failures.empty()) {
    base::Result<HostNet> net = HostNet::Load(options_.dir);
    if (!net.ok()) {
      // No state file: Up() failed before the network was made, or it is gone already; a
      // HostNet of the lab's tag says whether anything of it is still there.
      net = HostNet(HostNetOptions{.tag = HostNet::TagForPortBase(options_.port_base),
                                   .hosts = Hosts(),
                                   .state_dir = options_.dir});
    }
    if (Status s = net->Down(progress); !s.ok()) failures.push_back(s.message());
  }
  if (!failures.empty()) {
    std::string all;
    for (const std::string& f : failures) all += "; " + f;
    return Status::Error("some daemons did not stop" + all + " (the lab directory is kept)");
  }
  if (!MountsUnder(options_.dir).empty()) {
    return Status::Error("a mount under " + options_.dir + " could not be removed");
  }
  // The busy profile's users, once no job of this lab runs as them (removed when no other lab
  // holds them).
  if (Status s = ReleaseBusyProfile(*this, progress); !s.ok()) {
    progress << "  warning: " << s.message() << "\n";
  }
  std::error_code ec;
  fs::remove_all(options_.dir, ec);
  if (ec) return Status::Error("cannot remove " + options_.dir + ": " + ec.message());
  progress << "lab down in " << Fixed(Since(start)) << " s; " << options_.dir << " removed\n";
  return {};
}

std::vector<DaemonStatus> Lab::Inspect() const {
  std::vector<DaemonStatus> out;
  for (const std::string& name : DaemonNames()) {
    DaemonStatus d;
    d.name = name;
    d.id = DaemonId(name);
    if (d.id) {
      auto state = ProcessState(*d.id);
      d.alive = IsAlive(*d.id);
      d.state = state.value_or('-');
    }
    if (!d.id) {
      d.health = "not started";
    } else if (!d.alive) {
      d.health = "dead (pid " + std::to_string(d.id->pid) + " is gone)";
    } else if (d.state == 'T') {
      d.health = "stopped (SIGSTOP)";
    } else {
      Status s = Probe(name);
      d.health = s.ok() ? "ok" : s.message();
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace slurm_rca::live

#include "scenarios/live/hostnet.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "base/file.h"

namespace slurm_rca::live {

using base::Result;
using base::Status;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"};

constexpr int kMaxTag = 511;    // 512 /24s in 198.18.0.0/15
constexpr int kFirstHost = 10;  // host i is .10+i
constexpr int kMaxHosts = 240;  // .10 .. .249
constexpr const char* kBridge = "br0";
constexpr const char* kHostIf = "eth0";

std::string Seconds(Clock::time_point since) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2)
    << std::chrono::duration<double>(Clock::now() - since).count();
  return s.str();
}

std::string Join(const std::vector<std::string>& v, const std::string& sep = " ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

bool ValidHostName(const std::string& name) {
  if (name.empty() || name.size() > 15 || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string Dotted(std::uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
         std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

// 198.18.0.0 + tag * 256: the tag's /24.
std::uint32_t SubnetBase(int tag) {
  return ((198u << 24) | (18u << 16)) + static_cast<std::uint32_t>(tag) * 256u;
}

std::string Cmdline(pid_t pid) {
  std::string s = base::ReadFile("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s.empty() ? "?" : s;
}

}  // namespace

HostNet::HostNet(HostNetOptions options) : options_(std::move(options)) {}

Result<HostNet> HostNet::Load(const std::string& state_dir) {
  std::string path = state_dir + "/hostnet.state";
  std::optional<std::string> text = base::ReadFile(path);
  if (!text) return Status::Error("no host network recorded: cannot read " + path);
  HostNetOptions options;
  options.state_dir = state_dir;
  bool have_tag = false;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    std::string key = line.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
    if (key == "tag") {
      try {
        options.tag = std::stoi(value);
        have_tag = true;
      } catch (const std::exception&) {
        return Status::Error(path + ": bad tag '" + value + "'");
      }
    } else if (key == "host") {
      std::istringstream fields(value);
      HostSpec h;
      fields >> h.name >> h.role;
      options.hosts.push_back(h);
    }
  }
  if (!have_tag) return Status::Error(path + ": no tag");
  HostNet net(std::move(options));
  if (Status s = net.Validate(); !s.ok()) return Status::Error(path + ": " + s.message());
  return net;
}

Status HostNet::Validate() const {
  if (options_.tag < 0 || options_.tag > kMaxTag) {
    return Status::InvalidArgument("host network tag " + std::to_string(options_.tag) +
                                   " is outside 0.." + std::to_string(kMaxTag) +
                                   ": its /24 would leave 198.18.0.0/15");
  }
  if (options_.state_dir.empty()) return Status::InvalidArgument("host network: no state_dir");
  if (options_.hosts.empty() || options_.hosts.size() > kMaxHosts) {
    return Status::InvalidArgument("host network: " + std::to_string(options_.hosts.size()) +
                                   " hosts; 1.." + std::to_string(kMaxHosts) + " fit a /24");
  }
  std::set<std::string> seen;
  for (const HostSpec& h : options_.hosts) {
    // sw names the switch's namespace; lo and br0 are interfaces of the switch namespace, where
    // each host's port is named as the host.
    if (!ValidHostName(h.name) || h.name == "sw" || h.name == "lo" || h.name == kBridge) {
      return Status::InvalidArgument(
          "host name '" + h.name +
          "': want [a-z][a-z0-9-]*, at most 15 characters, not sw, lo or br0");
    }
    if (!seen.insert(h.name).second) {
      return Status::InvalidArgument("host '" + h.name + "' named twice");
    }
  }
  return Status();
}

std::string HostNet::NamePrefix() const {
  return std::string(kPrefix) + "-" + std::to_string(options_.tag) + "-";
}
std::string HostNet::Namespace(const std::string& host) const { return NamePrefix() + host; }
std::string HostNet::SwitchNamespace() const { return NamePrefix() + "sw"; }

std::string HostNet::Subnet() const {
  if (options_.tag < 0 || options_.tag > kMaxTag) return "";
  return Dotted(SubnetBase(options_.tag)) + "/24";
}

Result<std::string> HostNet::AddressOf(const std::string& host) const {
  if (options_.tag < 0 || options_.tag > kMaxTag) return Validate();
  for (size_t i = 0; i < options_.hosts.size() && i < kMaxHosts; ++i) {
    if (options_.hosts[i].name == host) {
      return Dotted(SubnetBase(options_.tag) + kFirstHost + static_cast<std::uint32_t>(i));
    }
  }
  return Status::InvalidArgument("no host '" + host + "' in lab " + std::to_string(options_.tag));
}

std::string HostNet::HostsFile(const std::string& host) const {
  std::string text = "# slurm-rca host network " + std::to_string(options_.tag) + " (" + Subnet() +
                     "): every host of the lab\n127.0.0.1\tlocalhost\n";
  for (const HostSpec& h : options_.hosts) {
    Result<std::string> a = AddressOf(h.name);
    if (a.ok()) text += *a + "\t" + h.name + "\n";
  }
  // The hosts share the machine's hostname (no UTS namespace): on each, it names the host's own
  // address, as a host's own name does. munged puts the address its hostname resolves to in
  // every credential, and slurmctld logs "Lookup failed for 0.0.0.0" for one that has none.
  char name[256] = {};
  Result<std::string> own = AddressOf(host);
  if (own.ok() && ::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0' &&
      std::string(name) != "localhost" && !AddressOf(name).ok()) {
    text += "# this host's name for itself (the machine's hostname)\n" + *own + "\t" + name + "\n";
  }
  return text;
}

Result<std::vector<std::string>> HostNet::ExecArgv(const std::string& host,
                                                   const std::vector<std::string>& argv) const {
  if (!AddressOf(host).ok()) return AddressOf(host).status();
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return Status::InvalidArgument("Exec in " + host + ": argv[0] must be an absolute path");
  }
  // Not `ip netns exec`: besides entering the namespace and bind-mounting /etc/netns/NS/*, it
  // remounts /sys for the namespace, which drops /sys/fs/cgroup, and slurmd will not start
  // without its cgroup mounts ("No filesystem mounted on /sys/fs/cgroup"). The same steps
  // without that one: nsenter enters the network namespace; unshare makes a mount namespace
  // whose mounts follow the machine's (slave: a bind mount the lab's faults put on a directory
  // later shows inside too); sh bind-mounts the host's hosts and resolv.conf over /etc's and
  // execs argv. None of them forks: the spawned PID is the program's own, which is what
  // SpawnDaemon records and StopProcess signals (hostnet_live_test checks it).
  const std::string nsenter = FindProgram("nsenter", options_.program_dirs);
  const std::string unshare = FindProgram("unshare", options_.program_dirs);
  const std::string mount = FindProgram("mount", options_.program_dirs);
  const std::string sh = FindProgram("sh", options_.program_dirs);
  if (nsenter.empty() || unshare.empty() || mount.empty() || sh.empty()) {
    return Status::Error("nsenter, unshare, mount or sh is not in " + Join(options_.program_dirs) +
                         " (util-linux, mount, dash)");
  }
  const std::string ns = Namespace(host);
  const std::string etc = std::string(kNetnsEtc) + "/" + ns;
  // ns is [a-z0-9-] (Validate): nothing in the script is interpreted but $0 and $@.
  const std::string script = mount + " --bind " + etc + "/hosts /etc/hosts && " + mount +
                             " --bind " + etc + "/resolv.conf /etc/resolv.conf && exec \"$0\" \"$@\"";
  std::vector<std::string> out = {nsenter, "--net=" + std::string(kNetnsRun) + "/" + ns, "--",
                                  unshare, "--mount", "--propagation", "slave", "--",
                                  sh, "-c", script};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Status HostNet::EnterThread(const std::string& host) const {
  if (Result<std::string> a = AddressOf(host); !a.ok()) return a.status();
  const std::string ns = Namespace(host);
  const std::string handle = std::string(kNetnsRun) + "/" + ns;
  int fd = ::open(handle.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IoError("cannot open " + handle + ": " + std::strerror(errno));
  const int joined = ::setns(fd, CLONE_NEWNET);
  const int join_errno = errno;
  ::close(fd);
  if (joined != 0) return Status::Error("setns " + handle + ": " + std::strerror(join_errno));
  // A mount namespace of this thread's own (unshare implies CLONE_FS: the thread's root and
  // working directory become its own too).
  if (::unshare(CLONE_NEWNS) != 0) {
    return Status::Error(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
  }
  if (::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) {
    return Status::Error(std::string("mount --make-rslave /: ") + std::strerror(errno));
  }
  const std::string etc = std::string(kNetnsEtc) + "/" + ns;
  for (const char* f : {"hosts", "resolv.conf"}) {
    const std::string from = etc + "/" + f, to = std::string("/etc/") + f;
    if (::mount(from.c_str(), to.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      return Status::Error("mount --bind " + from + " " + to + ": " + std::strerror(errno));
    }
  }
  return {};
}

ToolResult HostNet::Exec(const std::string& host, const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout, const std::string& input) const {
  Result<std::vector<std::string>> full = ExecArgv(host, argv);
  if (!full.ok()) {
    ToolResult r;
    r.error = full.status().message();
    return r;
  }
  return RunTool(*full, kEnv, timeout, input);
}

std::string HostNet::Ip() const { return FindProgram("ip", options_.program_dirs); }

Status HostNet::RunIp(const std::vector<std::string>& args) const {
  std::string ip = Ip();
  if (ip.empty()) return Status::Error("no ip in " + Join(options_.program_dirs) + " (iproute2)");
  std::vector<std::string> argv = {ip};
  argv.insert(argv.end(), args.begin(), args.end());
  ToolResult r = RunTool(argv, kEnv, options_.command_timeout);
  if (r.ok()) return Status();
  std::string err = r.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  return Status::Error("`" + Join(argv) + "` failed: " + r.Summary() +
                       (err.find('\n') != std::string::npos ? " (" + err + ")" : ""));
}

Result<std::vector<std::string>> HostNet::ExistingNamespaces() const {
  std::string ip = Ip();
  if (ip.empty()) return Status::Error("no ip in " + Join(options_.program_dirs) + " (iproute2)");
  ToolResult r = RunTool({ip, "netns", "list"}, kEnv, options_.command_timeout);
  if (!r.ok()) return Status::Error("`" + ip + " netns list` failed: " + r.Summary());
  // Lines are "NAME" or "NAME (id: N)".
  std::vector<std::string> found;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::string name = line.substr(0, line.find(' '));
    if (name.rfind(NamePrefix(), 0) == 0) found.push_back(name);
  }
  return found;
}

std::vector<std::string> HostNet::Leftovers() const {
  std::vector<std::string> left;
  Result<std::vector<std::string>> ns = ExistingNamespaces();
  if (!ns.ok()) {
    left.push_back(ns.status().message());
  } else {
    for (const std::string& n : *ns) left.push_back("namespace " + n);
  }
  // A link of the root namespace would show our prefix in its name or as "link-netns NS".
  std::string ip = Ip();
  ToolResult links = RunTool({ip, "-o", "link"}, kEnv, options_.command_timeout);
  if (!links.ok()) {
    left.push_back("`" + ip + " -o link` failed: " + links.Summary());
  } else {
    std::istringstream in(links.out);
    for (std::string line; std::getline(in, line);) {
      if (line.find(NamePrefix()) != std::string::npos) {
        left.push_back("root link " + line.substr(0, line.find('<')));
      }
    }
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kNetnsEtc, ec)) {
    if (entry.path().filename().string().rfind(NamePrefix(), 0) == 0) {
      left.push_back(entry.path().string());
    }
  }
  return left;
}

Status HostNet::WriteState(const std::vector<std::string>& namespaces) const {
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  std::string text =
      "# slurm-rca host network: what HostNet::Up created; HostNet::Down removes exactly the ns\n"
      "tag=" +
      std::to_string(options_.tag) + "\n";
  for (const HostSpec& h : options_.hosts) {
    text += "host=" + h.name + " " + (h.role.empty() ? "-" : h.role) + "\n";
  }
  for (const std::string& ns : namespaces) text += "ns=" + ns + "\n";
  if (!base::WriteFile(StatePath(), text)) return Status::IoError("cannot write " + StatePath());
  return Status();
}

Status HostNet::CheckAlreadyUp(std::ostream& progress) const {
  Result<HostNet> recorded = Load(options_.state_dir);
  if (!recorded.ok()) return recorded.status();
  auto roles = [](std::vector<HostSpec> hosts) {
    for (HostSpec& h : hosts) h.role = h.role.empty() ? "-" : h.role;
    return hosts;
  };
  if (recorded->options().tag != options_.tag ||
      roles(recorded->options().hosts) != roles(options_.hosts)) {
    return Status::Error(StatePath() + " records another host network (tag " +
                         std::to_string(recorded->options().tag) +
                         "): take it down first (HostNet::Down, `cluster down`)");
  }
  Result<std::vector<std::string>> existing = ExistingNamespaces();
  if (!existing.ok()) return existing.status();
  std::set<std::string> have(existing->begin(), existing->end());
  std::vector<std::string> missing;
  if (!have.count(SwitchNamespace())) missing.push_back(SwitchNamespace());
  for (const HostSpec& h : options_.hosts) {
    if (!have.count(Namespace(h.name))) {
      missing.push_back(Namespace(h.name));
      continue;
    }
    ToolResult addr =
        RunTool({Ip(), "-n", Namespace(h.name), "-o", "-4", "addr", "show", "dev", kHostIf}, kEnv,
                options_.command_timeout);
    if (!addr.ok() || addr.out.find(" " + *AddressOf(h.name) + "/24") == std::string::npos) {
      missing.push_back(Namespace(h.name) + "'s " + kHostIf + " " + *AddressOf(h.name));
    }
  }
  if (!missing.empty()) {
    return Status::Error(StatePath() + " records host network " + std::to_string(options_.tag) +
                         " but " + Join(missing, ", ") +
                         " is missing: take it down first (HostNet::Down, `cluster down`)");
  }
  progress << "host network " << options_.tag << " already up (" << options_.hosts.size()
           << " hosts, " << Subnet() << ")\n";
  return Status();
}

Status HostNet::Create(std::ostream& progress, std::vector<std::string>* made) const {
  auto start = Clock::now();
  const std::string sw = SwitchNamespace();
  if (Status s = RunIp({"netns", "add", sw}); !s.ok()) return s;
  made->push_back(sw);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-n", sw, "link", "set", "dev", "lo", "up"},
           {"-n", sw, "link", "add", "name", kBridge, "type", "bridge"},
           {"-n", sw, "link", "set", "dev", kBridge, "up"}}) {
    if (Status s = RunIp(args); !s.ok()) return s;
  }
  for (const HostSpec& h : options_.hosts) {
    const std::string ns = Namespace(h.name);
    // `dev` and `name` before every interface name: ip reads a bare "a" as "address".
    // The pair is made inside the switch namespace with its peer put straight into the host's:
    // neither end ever exists in the root namespace, even for a moment.
    if (Status s = RunIp({"netns", "add", ns}); !s.ok()) return s;
    made->push_back(ns);
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"-n", ns, "link", "set", "dev", "lo", "up"},
             {"-n", sw, "link", "add", "name", h.name, "type", "veth", "peer", "name", kHostIf,
              "netns", ns},
             {"-n", sw, "link", "set", "dev", h.name, "master", kBridge, "up"},
             {"-n", ns, "addr", "add", *AddressOf(h.name) + "/24", "dev", kHostIf},
             {"-n", ns, "link", "set", "dev", kHostIf, "up"}}) {
      if (Status s = RunIp(args); !s.ok()) return s;
    }
    // An empty resolv.conf: a name not in the hosts file fails at once inside the namespace
    // (127.0.0.1:53 there answers nothing), and the machine's resolver is never asked.
    std::string dir = std::string(kNetnsEtc) + "/" + ns;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("cannot create " + dir + ": " + ec.message());
    if (!base::WriteFile(dir + "/hosts", HostsFile(h.name)) ||
        !base::WriteFile(dir + "/resolv.conf",
                         "# slurm-rca host network: no name server; names are in /etc/hosts\n")) {
      return Status::IoError("cannot write " + dir + "/hosts or resolv.conf");
    }
  }
  progress << "host network " << options_.tag << " up in " << Seconds(start)
           << " s: " << options_.hosts.size() << " hosts on " << Subnet() << " (switch " << sw
           << ")\n";
  return Status();
}

Status HostNet::Up(std::ostream& progress) {
  if (Status s = Validate(); !s.ok()) return s;
  if (Ip().empty()) return Status::Error("no ip in " + Join(options_.program_dirs) + " (iproute2)");
  if (fs::exists(StatePath())) return CheckAlreadyUp(progress);
  if (std::vector<std::string> left = Leftovers(); !left.empty()) {
    return Status::Error("host network " + std::to_string(options_.tag) +
                         " is taken: " + Join(left, ", ") + " exist without a record in " +
                         StatePath() + " (another lab with this tag, or a lost state file)");
  }
  // Recorded before anything is made, so that a Down() after a crash half-way removes it all.
  std::vector<std::string> planned = {SwitchNamespace()};
  for (const HostSpec& h : options_.hosts) planned.push_back(Namespace(h.name));
  if (Status s = WriteState(planned); !s.ok()) return s;
  std::vector<std::string> made;
  Status created = Create(progress, &made);
  if (created.ok()) return Status();
  // Only what this call made is taken down: a namespace that `ip netns add` found existing
  // belongs to whoever raced us to the tag.
  if (Status s = WriteState(made); !s.ok())
    return Status::Error(created.message() + "; " + s.message());
  std::ostringstream rollback;
  Status down = Down(rollback);
  return Status::Error(created.message() +
                       (down.ok() ? "; what was made is taken down again"
                                  : "; taking it down failed too: " + down.message()));
}

Status HostNet::KillInside(const std::string& ns, std::ostream& progress) const {
  ToolResult r = RunTool({Ip(), "netns", "pids", ns}, kEnv, options_.command_timeout);
  if (!r.ok()) return Status::Error("`" + Ip() + " netns pids " + ns + "` failed: " + r.Summary());
  std::vector<ProcessId> ids;
  std::istringstream in(r.out);
  for (pid_t pid; in >> pid;) {
    std::optional<ProcessId> id = IdentifyProcess(pid);
    if (!id) continue;
    progress << "  " << ns << ": pid " << pid << " (" << Cmdline(pid)
             << ") still inside; killing it (a process in the lab's namespace is the lab's)\n";
    ids.push_back(*id);
  }
  std::vector<ProcessId> survivors = StopProcesses(ids, std::chrono::seconds(2));
  ReapChildren();
  if (!survivors.empty()) {
    std::string pids;
    for (const ProcessId& id : survivors) pids += " " + std::to_string(id.pid);
    return Status::Error(ns + ": processes survived SIGKILL:" + pids);
  }
  return Status();
}

Status HostNet::Down(std::ostream& progress) {
  auto start = Clock::now();
  // Only the tag and the state directory matter here: the hosts come from the state file.
  if (options_.tag < 0 || options_.tag > kMaxTag || options_.state_dir.empty()) return Validate();
  if (!fs::exists(StatePath())) {
    std::vector<std::string> left = Leftovers();
    if (left.empty()) return Status();
    return Status::Error("no host network recorded in " + StatePath() + ", but " +
                         Join(left, ", ") + " exist: not this lab's record, left alone");
  }
  Result<HostNet> recorded = Load(options_.state_dir);
  if (!recorded.ok()) return recorded.status();
  if (recorded->options().tag != options_.tag) {
    return Status::Error(StatePath() + " records tag " + std::to_string(recorded->options().tag) +
                         ", not " + std::to_string(options_.tag));
  }
  // The namespaces recorded (ns=), hosts first so that the switch goes last; never one without
  // this lab's prefix and tag, whatever the file says.
  std::vector<std::string> ours;
  std::istringstream in(base::ReadFile(StatePath()).value_or(""));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ns=", 0) != 0) continue;
    std::string ns = line.substr(3);
    if (ns.rfind(NamePrefix(), 0) != 0 || ns.size() == NamePrefix().size()) {
      return Status::Error(StatePath() + " records namespace '" + ns + "', not of tag " +
                           std::to_string(options_.tag) + ": refusing to delete it");
    }
    if (ns == SwitchNamespace()) continue;
    ours.push_back(ns);
  }
  ours.push_back(SwitchNamespace());

  Result<std::vector<std::string>> existing = ExistingNamespaces();
  if (!existing.ok()) return existing.status();
  std::set<std::string> have(existing->begin(), existing->end());
  std::vector<std::string> errors;
  // Processes first: one left inside would hold its namespace alive after `ip netns delete`,
  // unseen by `ip netns list`.
  for (const std::string& ns : ours) {
    if (!have.count(ns)) continue;
    if (Status s = KillInside(ns, progress); !s.ok()) errors.push_back(s.message());
  }
  for (const std::string& ns : ours) {
    if (!have.count(ns)) continue;
    if (Status s = RunIp({"netns", "delete", ns}); !s.ok()) errors.push_back(s.message());
  }
  for (const std::string& ns : ours) {
    std::error_code ec;
    fs::remove_all(std::string(kNetnsEtc) + "/" + ns, ec);
    if (ec) errors.push_back("cannot remove " + std::string(kNetnsEtc) + "/" + ns);
  }
  std::vector<std::string> left = Leftovers();
  if (!left.empty()) errors.push_back("left after down: " + Join(left, ", "));
  if (!errors.empty()) return Status::Error(Join(errors, "; "));
  fs::remove(StatePath());
  progress << "host network " << options_.tag << " down in " << Seconds(start)
           << " s: " << ours.size() << " namespaces removed\n";
  return Status();
}

}  // namespace slurm_rca::live

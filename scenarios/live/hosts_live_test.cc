// The lab of hosts (lab.h, LabOptions::hosts; issue #39), live (ctest label `live`; root, skipped
// otherwise). One 4-node clean lab on port base 20500 (tag 205, 198.18.205.0/24), Debian's Slurm
// unless SLURM_RCA_SLURM names a built release:
//   - up: every node idle, every daemon in its host's network namespace (`ip netns identify`),
//     nothing of the lab listening on the machine's own loopback, a job submitted from the login
//     host running on the compute host of its node;
//   - each network fault (faults.h: net-cut both ways and one way, name-gone, net-loss,
//     net-throttle) shows its effect and its heal restores the exact prior state (no nftables
//     table left in the host, the root qdiscs as before, the hosts file byte for byte, every node
//     idle);
//   - down: no process of the lab alive (by PID), and none of its namespaces, links or
//     /etc/netns directories left.
#include <gtest/gtest.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/file.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/hostnet.h"
#include "scenarios/live/hostnet_traces_testing.h"
#include "scenarios/live/lab.h"
#include "tests/live_release.h"

namespace slurm_rca::live {
namespace {

namespace fs = std::filesystem;
using base::Status;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"};
const std::vector<std::string> kDirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};
constexpr int kPortBase = 20500;  // tag 205: no other test's lab maps there

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

using testing_hostnet::RootTraces;

// Whether a TCP port can be bound on the machine's own 127.0.0.1 (nothing of the lab holds it).
bool RootLoopbackPortFree(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return free;
}

class HostsLab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0 || !testing_live::ReleaseReady().ok()) return;
    dir_ = "/tmp/slurm-rca-hosts-test-" + std::to_string(::getpid());
    lab_ = new Lab(LabOptions{.dir = dir_,
                              .nodes = 4,
                              .port_base = kPortBase,
                              .slurm_prefix = testing_live::SlurmPrefix(),
                              .hosts = true});
    auto start = Clock::now();
    Status s = lab_->Up(std::cout);
    up_seconds_ = Since(start);
    if (!s.ok()) {
      std::cerr << "hosts lab did not come up: " << s.message() << "\n";
      std::ostringstream ignored;
      lab_->Down(ignored);
      delete lab_;
      lab_ = nullptr;
    }
  }

  static void TearDownTestSuite() {
    if (lab_ == nullptr) return;
    std::vector<ProcessId> ids;
    for (const std::string& name : lab_->DaemonNames()) {
      if (auto id = lab_->DaemonId(name)) ids.push_back(*id);
    }
    auto start = Clock::now();
    Status s = lab_->Down(std::cout);
    std::cout << "hosts lab: up " << up_seconds_ << " s, down " << Since(start) << " s\n";
    EXPECT_TRUE(s.ok()) << s.message();
    for (const ProcessId& id : ids) EXPECT_FALSE(IsAlive(id)) << "pid " << id.pid << " survived";
    EXPECT_TRUE(RootTraces("rcah-" + std::to_string(kPortBase / 100) + "-").empty());
    EXPECT_FALSE(fs::exists(dir_));
    delete lab_;
    lab_ = nullptr;
  }

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the lab of hosts needs root";
    if (Status s = testing_live::ReleaseReady(); !s.ok()) GTEST_SKIP() << s.message();
    ASSERT_NE(lab_, nullptr) << "the lab of hosts did not come up";
    auto net = lab_->Net();
    ASSERT_TRUE(net.ok()) << net.status().message();
    net_ = new HostNet(*net);
  }

  void TearDown() override {
    delete net_;
    net_ = nullptr;
    if (lab_ == nullptr || HasFatalFailure()) return;
    // Every test leaves the lab as it found it: no fault, every node idle.
    EXPECT_TRUE(ActiveFaults(*lab_).empty());
    Status ready = lab_->WaitReady(seconds(60));
    EXPECT_TRUE(ready.ok()) << ready.message();
  }

  // Runs argv (argv[0] by name) inside host.
  ToolResult On(const std::string& host, std::vector<std::string> argv,
                seconds timeout = seconds(40)) const {
    argv[0] = FindProgram(argv[0], kDirs);
    return net_->Exec(host, argv, timeout);
  }

  // Pings received of count from host to name (ping -c COUNT -i 0.05 -W 1).
  int Received(const std::string& host, const std::string& to, int count,
               const std::string& size = "56") const {
    ToolResult r = On(host, {"ping", "-q", "-c", std::to_string(count), "-i", "0.05", "-W", "1",
                             "-s", size, to});
    size_t at = r.out.find(" received");
    if (at == std::string::npos) return -1;
    size_t start = r.out.rfind(' ', at - 1);
    return std::stoi(r.out.substr(start + 1, at - start - 1));
  }

  // The nftables ruleset inside host.
  std::string Ruleset(const std::string& host) const {
    return On(host, {"nft", "list", "ruleset"}).out;
  }

  static FaultOutcome Inject(const std::string& name, const FaultTarget& t) {
    FaultOutcome o = InjectFault(*lab_, name, t);
    EXPECT_TRUE(o.status.ok()) << name << ": " << o.status.message();
    EXPECT_TRUE(o.changed) << name << ": " << o.message;
    return o;
  }
  static FaultOutcome Heal(const std::string& name, const FaultTarget& t) {
    FaultOutcome o = HealFault(*lab_, name, t);
    EXPECT_TRUE(o.status.ok()) << name << ": " << o.status.message();
    EXPECT_TRUE(o.changed) << name << ": " << o.message;
    return o;
  }

  static Lab* lab_;
  static std::string dir_;
  static double up_seconds_;
  HostNet* net_ = nullptr;
};

Lab* HostsLab::lab_ = nullptr;
std::string HostsLab::dir_;
double HostsLab::up_seconds_ = 0;

TEST_F(HostsLab, DaemonsRunOnTheirHostsAndNothingListensOnTheMachinesLoopback) {
  EXPECT_EQ(lab_->Hosts().size(), 5u);  // ctl, db, login, c1, c2
  for (const DaemonStatus& d : lab_->Inspect()) {
    EXPECT_EQ(d.health, "ok") << d.name;
    ASSERT_TRUE(d.id) << d.name;
    ToolResult where =
        RunTool({FindProgram("ip", kDirs), "netns", "identify", std::to_string(d.id->pid)}, kEnv,
                seconds(10));
    std::string ns = where.out.substr(0, where.out.find('\n'));
    EXPECT_EQ(ns, net_->Namespace(lab_->HostOf(d.name))) << d.name << ": " << where.Summary();
  }
  EXPECT_EQ(lab_->HostOf("slurmd-node3"), "c2");
  for (int port : {lab_->CtldPort(), lab_->DbdPort(), lab_->DbPort(), lab_->SlurmdPort(1)}) {
    EXPECT_TRUE(RootLoopbackPortFree(port)) << "port " << port << " is held on 127.0.0.1";
  }
  // The controller listens inside ctl.
  ToolResult ss = On("ctl", {"ss", "-Htln"});
  EXPECT_NE(ss.out.find(":" + std::to_string(lab_->CtldPort())), std::string::npos) << ss.out;

  // A job from the login host runs on node3's host, c2.
  const std::string out = lab_->Path("work/where-%j.out");
  ToolResult sb = lab_->Client({"sbatch", "--parsable", "-w", "node3", "-o", out, "--wrap",
                                "/usr/sbin/ip -o -4 addr show dev eth0"});
  ASSERT_TRUE(sb.ok()) << sb.Summary();
  std::string id = sb.out.substr(0, sb.out.find_first_of(";\n"));
  std::string file = lab_->Path("work/where-" + id + ".out");
  std::string text;
  for (int i = 0; i < 120 && text.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    text = base::ReadFile(file).value_or("");
  }
  EXPECT_NE(text.find(" " + *net_->AddressOf("c2") + "/24"), std::string::npos) << text;
}

TEST_F(HostsLab, NetCutBothWaysAndOneWay) {
  const std::string before = Ruleset("c2");
  // Both ways: c2 reaches neither ctl nor is reached; c1 still does.
  FaultTarget cut{.host = "c2", .peer = "ctl", .direction = "both"};
  Inject("net-cut", cut);
  EXPECT_FALSE(InjectFault(*lab_, "net-cut", cut).changed);  // idempotent
  EXPECT_EQ(Received("c2", "ctl", 3), 0);
  EXPECT_EQ(Received("ctl", "c2", 3), 0);
  EXPECT_EQ(Received("c1", "ctl", 3), 3);
  Heal("net-cut", cut);
  EXPECT_EQ(Ruleset("c2"), before);
  EXPECT_EQ(Received("c2", "ctl", 3), 3);

  // One way, in: ctl cannot open a connection to login, login still can (its squeue answers).
  FaultTarget in{.host = "login", .peer = "ctl", .direction = "in"};
  Inject("net-cut", in);
  ToolResult q = lab_->Client({"squeue", "-h"}, seconds(40));
  EXPECT_TRUE(q.ok()) << q.Summary();
  EXPECT_EQ(Received("ctl", "login", 2), 0);
  Heal("net-cut", in);

  // One way, out: login cannot open a connection to ctl: its clients fail while the nodes,
  // which reach ctl from their own hosts, stay idle.
  FaultTarget out{.host = "login", .peer = "ctl", .direction = "out"};
  Inject("net-cut", out);
  auto start = Clock::now();
  q = lab_->Client({"squeue", "-h"}, seconds(60));
  EXPECT_FALSE(q.ok());
  EXPECT_NE((q.out + q.err).find("Unable to contact slurm controller"), std::string::npos)
      << q.Summary();
  std::cout << "squeue on login cut from ctl (out) failed after " << Since(start) << " s\n";
  ToolResult nodes = On("ctl", {"env", "SLURM_CONF=" + lab_->ConfOf("ctl"),
                                lab_->Program("sinfo"), "-h", "-N", "-o", "%T"});
  EXPECT_TRUE(nodes.ok()) << nodes.Summary();
  EXPECT_EQ(nodes.out.find('*'), std::string::npos) << nodes.out;
  Heal("net-cut", out);
  EXPECT_EQ(Ruleset("login"), before);
  EXPECT_TRUE(lab_->Client({"squeue", "-h"}).ok());
}

TEST_F(HostsLab, NameGoneOnOneHost) {
  // As in a lab where no fault was injected yet: no DIR/faults (the first recording of S46 failed
  // on that: the hosts file was saved before the directory was made).
  ASSERT_TRUE(ActiveFaults(*lab_).empty());
  fs::remove_all(lab_->Path("faults"));
  const std::string path =
      std::string(HostNet::kNetnsEtc) + "/" + net_->Namespace("login") + "/hosts";
  const std::string before = base::ReadFile(path).value_or("");
  FaultTarget t{.host = "login", .name = "ctl"};
  Inject("name-gone", t);
  EXPECT_FALSE(On("login", {"getent", "hosts", "ctl"}).ok());
  EXPECT_TRUE(On("c1", {"getent", "hosts", "ctl"}).ok());
  EXPECT_TRUE(On("login", {"getent", "hosts", "db"}).ok());
  ToolResult q = lab_->Client({"squeue", "-h"}, seconds(60));
  EXPECT_FALSE(q.ok());
  EXPECT_NE((q.out + q.err).find("Unable to establish control machine address"), std::string::npos)
      << q.Summary();
  Heal("name-gone", t);
  EXPECT_EQ(base::ReadFile(path).value_or(""), before);
  EXPECT_TRUE(On("login", {"getent", "hosts", "ctl"}).ok());
}

TEST_F(HostsLab, NetLossDropsAShareOfPackets) {
  const std::string before = Ruleset("c1");
  FaultTarget t{.host = "c1", .percent = 50};
  Inject("net-loss", t);
  // 50 % each way: a round trip survives 1 time in 4. 40 pings: P(all 40 back) = 0.25^40, P(none)
  // = 0.75^40 (1e-5).
  int got = Received("c1", "db", 40);
  std::cout << "net-loss 50 %: " << got << " of 40 pings back\n";
  EXPECT_GE(got, 1);
  EXPECT_LE(got, 30);
  Heal("net-loss", t);
  EXPECT_EQ(Ruleset("c1"), before);
  EXPECT_EQ(Received("c1", "db", 10), 10);
}

TEST_F(HostsLab, NetThrottleSlowsTheLinkAndHealRestoresTheQdiscs) {
  auto qdisc = [&](const std::string& ns, const std::string& dev) {
    ToolResult r = RunTool({FindProgram("ip", kDirs), "netns", "exec", ns,
                            FindProgram("tc", kDirs), "qdisc", "show", "dev", dev, "root"},
                           kEnv, seconds(10));
    return r.out;
  };
  const std::string host_before = qdisc(net_->Namespace("c1"), "eth0");
  const std::string port_before = qdisc(net_->SwitchNamespace(), "c1");
  // 40 pings of 1,400 bytes sent every 50 ms: unthrottled, about 2 s. At 64 kbit/s each
  // 1,428-byte packet takes 178 ms on the wire, and a tbf on the sender's own link holds the
  // sender back rather than dropping (measured: all 40 came back), so the 40 take about 7 s.
  auto timed = [&]() {
    auto start = Clock::now();
    int got = Received("c1", "db", 40, "1400");
    return std::make_pair(got, Since(start));
  };
  auto [free_got, free_s] = timed();
  EXPECT_EQ(free_got, 40);
  FaultTarget t{.host = "c1", .rate = "64kbit"};
  Inject("net-throttle", t);
  EXPECT_NE(qdisc(net_->Namespace("c1"), "eth0").find("tbf"), std::string::npos);
  EXPECT_NE(qdisc(net_->SwitchNamespace(), "c1").find("tbf"), std::string::npos);
  auto [slow_got, slow_s] = timed();
  std::cout << "40 pings of 1,400 bytes: " << free_s << " s unthrottled, " << slow_s
            << " s at 64kbit (" << slow_got << " back)\n";
  EXPECT_GT(slow_s, 4.0);
  EXPECT_GT(slow_s, 1.8 * free_s);
  Heal("net-throttle", t);
  EXPECT_EQ(qdisc(net_->Namespace("c1"), "eth0"), host_before);
  EXPECT_EQ(qdisc(net_->SwitchNamespace(), "c1"), port_before);
  EXPECT_EQ(Received("c1", "db", 10), 10);
}

TEST_F(HostsLab, RefusalsOnTheLabOfHosts) {
  FaultOutcome o = InjectFault(*lab_, "net-cut", FaultTarget{.host = "c9", .peer = "ctl"});
  EXPECT_FALSE(o.status.ok());
  EXPECT_NE(o.status.message().find("not a host of this lab"), std::string::npos);
  o = InjectFault(*lab_, "net-cut", FaultTarget{.host = "ctl", .peer = "ctl"});
  EXPECT_FALSE(o.status.ok());
  // The loopback fault is the one-host lab's.
  o = InjectFault(*lab_, "net-drop", FaultTarget{.daemon = "slurmctld"});
  EXPECT_FALSE(o.status.ok());
  EXPECT_NE(o.status.message().find("net-cut"), std::string::npos);
  // Healing what is not injected changes nothing.
  o = HealFault(*lab_, "net-loss", FaultTarget{.host = "c1"});
  EXPECT_TRUE(o.status.ok());
  EXPECT_FALSE(o.changed);
}

}  // namespace
}  // namespace slurm_rca::live

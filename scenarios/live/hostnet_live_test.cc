// The host network of the hosts lab (hostnet.h), live (ctest label `live`; root, skipped
// otherwise; the plan's names and addresses are checked without root). Four hosts (ctl, dbd,
// login, c1) reach each other by name and nothing else: the root namespace gets no address,
// route or link and cannot reach them; an nftables drop inside one host cuts one path and
// deleting its table restores it (the mechanism of the network faults); a process spawned inside
// a host is the program itself, by PID; Down() kills what was left inside and leaves nothing in
// `ip netns list`, `ip -o link` or /etc/netns. A second network on the same tag is refused, the
// same one again is idempotent, and Down() twice is fine. Tags 497 and 498 (198.19.241.0/24,
// 198.19.242.0/24): no lab's port base maps there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/file.h"
#include "scenarios/live/hostnet.h"
#include "scenarios/live/hostnet_traces_testing.h"

namespace slurm_rca::live {
namespace {

namespace fs = std::filesystem;
using base::Status;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"};
const std::vector<std::string> kDirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<HostSpec> FourHosts() {
  return {{"ctl", "controller"}, {"dbd", "accounting"}, {"login", "login"}, {"c1", "compute"}};
}

std::string TestDir(const std::string& name) {
  std::string dir = "/tmp/slurm-rca-hostnet-test-" + std::to_string(::getpid()) + "-" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

ToolResult Root(const std::vector<std::string>& argv) { return RunTool(argv, kEnv, seconds(15)); }

using testing_hostnet::RootTraces;

// Takes the network down when a test ends early.
struct DownAtExit {
  HostNet& net;
  ~DownAtExit() {
    std::ostringstream ignored;
    net.Down(ignored);
  }
};

// ping -c1 -W1 to, from inside host; once more with -W2 when the first is lost, since this
// machine may run 100 processes per core while the benchmark records.
bool Ping(const HostNet& net, const std::string& host, const std::string& to) {
  for (const char* wait : {"1", "2"}) {
    ToolResult r = net.Exec(host, {FindProgram("ping", kDirs), "-c1", "-W", wait, to}, seconds(10));
    if (r.ok()) return true;
  }
  return false;
}

TEST(HostNetPlan, NamesAddressesAndRefusals) {
  HostNet net(HostNetOptions{.tag = 168, .hosts = FourHosts(), .state_dir = "/tmp/x"});
  EXPECT_TRUE(net.Validate().ok());
  EXPECT_EQ(HostNet::TagForPortBase(16800), 168);
  EXPECT_EQ(net.Namespace("c1"), "rcah-168-c1");
  EXPECT_EQ(net.SwitchNamespace(), "rcah-168-sw");
  EXPECT_EQ(net.Subnet(), "198.18.168.0/24");
  EXPECT_EQ(*net.AddressOf("ctl"), "198.18.168.10");
  EXPECT_EQ(*net.AddressOf("c1"), "198.18.168.13");
  EXPECT_FALSE(net.AddressOf("c2").ok());
  EXPECT_NE(net.HostsFile().find("198.18.168.11\tdbd\n"), std::string::npos) << net.HostsFile();
  EXPECT_NE(net.HostsFile().find("127.0.0.1\tlocalhost\n"), std::string::npos);

  auto argv = net.ExecArgv("c1", {"/bin/true"});
  ASSERT_TRUE(argv.ok()) << argv.status().message();
  EXPECT_EQ((*argv)[1], "--net=/run/netns/rcah-168-c1");
  EXPECT_EQ(argv->back(), "/bin/true");
  EXPECT_NE((*argv)[argv->size() - 2].find("/etc/netns/rcah-168-c1/hosts /etc/hosts"),
            std::string::npos)
      << (*argv)[argv->size() - 2];
  EXPECT_FALSE(net.ExecArgv("c1", {"true"}).ok());
  EXPECT_FALSE(net.ExecArgv("nohost", {"/bin/true"}).ok());
  EXPECT_FALSE(net.Exec("nohost", {"/bin/true"}).error.empty());

  // The range's two ends, and past them.
  EXPECT_EQ(HostNet(HostNetOptions{.tag = 0, .hosts = FourHosts()}).Subnet(), "198.18.0.0/24");
  EXPECT_EQ(HostNet(HostNetOptions{.tag = 300, .hosts = FourHosts()}).Subnet(), "198.19.44.0/24");
  EXPECT_EQ(HostNet(HostNetOptions{.tag = 511, .hosts = FourHosts()}).Subnet(), "198.19.255.0/24");
  for (int tag : {-1, 512, HostNet::TagForPortBase(51200)}) {
    HostNet out(HostNetOptions{.tag = tag, .hosts = FourHosts(), .state_dir = "/tmp/x"});
    std::ostringstream progress;
    Status s = out.Up(progress);
    EXPECT_FALSE(s.ok()) << tag;
    EXPECT_NE(s.message().find("198.18.0.0/15"), std::string::npos) << s.message();
    EXPECT_EQ(out.Subnet(), "");
    EXPECT_FALSE(out.AddressOf("ctl").ok());
  }
  for (const std::vector<HostSpec>& bad :
       std::vector<std::vector<HostSpec>>{{},
                                          {{"Ctl", ""}},
                                          {{"sw", ""}},
                                          {{"lo", ""}},
                                          {{"br0", ""}},
                                          {{"1c", ""}},
                                          {{"a-very-long-name", ""}},
                                          {{"c1", ""}, {"c1", ""}}}) {
    EXPECT_FALSE(HostNet(HostNetOptions{.hosts = bad, .state_dir = "/tmp/x"}).Validate().ok())
        << (bad.empty() ? "no hosts" : bad[0].name);
  }
  EXPECT_FALSE(HostNet(HostNetOptions{.hosts = FourHosts()}).Validate().ok()) << "no state_dir";
}

class HostNetLive : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the host network needs root";
    ASSERT_NE(FindProgram("ping", kDirs), "") << "no ping: install iputils-ping (scripts/deps.sh)";
    ASSERT_NE(FindProgram("nft", kDirs), "") << "no nft: install nftables (scripts/deps.sh)";
  }
};

TEST_F(HostNetLive, FourHostsReachEachOtherByNameAndNothingElse) {
  std::string dir = TestDir("four");
  HostNet net(HostNetOptions{.tag = 497, .hosts = FourHosts(), .state_dir = dir});
  ASSERT_TRUE(RootTraces(net.NamePrefix()).empty()) << "tag 497 is in use on this machine";
  DownAtExit guard{net};
  auto start = Clock::now();
  std::ostringstream progress;
  Status up = net.Up(progress);
  double up_s = Since(start);
  ASSERT_TRUE(up.ok()) << up.message();
  std::cout << progress.str() << "Up(): " << up_s << " s for " << FourHosts().size() << " hosts\n";
  std::string state = base::ReadFile(net.StatePath()).value_or("");
  for (const std::string& ns : {net.SwitchNamespace(), net.Namespace("ctl"), net.Namespace("c1")}) {
    EXPECT_NE(state.find("ns=" + ns + "\n"), std::string::npos) << state;
  }

  // Every ordered pair, by name through the host's own /etc/hosts.
  for (const HostSpec& a : FourHosts()) {
    for (const HostSpec& b : FourHosts()) {
      if (a.name == b.name) continue;
      EXPECT_TRUE(Ping(net, a.name, b.name)) << a.name << " -> " << b.name;
    }
  }
  ToolResult hosts = net.Exec("login", {"/bin/cat", "/etc/hosts"});
  EXPECT_EQ(hosts.out, net.HostsFile("login")) << hosts.Summary();
  EXPECT_NE(net.HostsFile("login"), net.HostsFile("c1"));
  ToolResult addr = net.Exec("c1", {FindProgram("ip", kDirs), "-o", "-4", "addr"});
  EXPECT_NE(addr.out.find(" " + *net.AddressOf("c1") + "/24"), std::string::npos) << addr.out;
  // No way out: a host has no default route, and names the hosts file lacks do not resolve.
  ToolResult route = net.Exec("c1", {FindProgram("ip", kDirs), "route"});
  EXPECT_EQ(route.out.find("default"), std::string::npos) << route.out;
  EXPECT_FALSE(
      net.Exec("c1", {FindProgram("ping", kDirs), "-c1", "-W1", "localhost.invalid"}).ok());

  // The root namespace has nothing of it: no address, no route, no link, no path to a host.
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {FindProgram("ip", kDirs), "-o", "addr"}, {FindProgram("ip", kDirs), "route"}}) {
    ToolResult r = Root(argv);
    ASSERT_TRUE(r.ok()) << r.Summary();
    EXPECT_EQ(r.out.find("198.18."), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("198.19."), std::string::npos) << r.out;
  }
  ToolResult links = Root({FindProgram("ip", kDirs), "-o", "link"});
  EXPECT_EQ(links.out.find(net.NamePrefix()), std::string::npos) << links.out;
  // Asked, not pinged: a ping from the root namespace would follow the machine's default route
  // and send a packet off the machine, which no test may do. The route root would use for a
  // host's address goes through none of the lab's links (root has none to go through).
  ToolResult via = Root({FindProgram("ip", kDirs), "route", "get", *net.AddressOf("ctl")});
  EXPECT_EQ(via.out.find(net.NamePrefix()), std::string::npos) << via.out;
  EXPECT_EQ(via.out.find("br0"), std::string::npos) << via.out;

  // The network faults' mechanism: an nftables drop inside ctl cuts ctl -> dbd only, is not in
  // the root namespace's ruleset, and deleting its table restores the path.
  const std::string nft = FindProgram("nft", kDirs);
  for (const std::vector<std::string>& rule : std::vector<std::vector<std::string>>{
           {nft, "add", "table", "inet", "rcah"},
           {nft, "add", "chain", "inet", "rcah", "out", "{", "type", "filter", "hook", "output",
            "priority", "0", ";", "}"},
           {nft, "add", "rule", "inet", "rcah", "out", "ip", "daddr", *net.AddressOf("dbd"),
            "drop"}}) {
    ToolResult r = net.Exec("ctl", rule);
    ASSERT_TRUE(r.ok()) << rule[1] << ": " << r.Summary();
  }
  EXPECT_FALSE(Root({nft, "list", "table", "inet", "rcah"}).ok()) << "the table leaked to root";
  EXPECT_FALSE(Ping(net, "ctl", "dbd")) << "the drop did not cut ctl -> dbd";
  EXPECT_TRUE(Ping(net, "ctl", "login")) << "the drop cut more than dbd";
  ASSERT_TRUE(net.Exec("ctl", {nft, "delete", "table", "inet", "rcah"}).ok());
  EXPECT_TRUE(Ping(net, "ctl", "dbd")) << "deleting the table did not restore ctl -> dbd";

  // A daemon spawned inside a host is the program itself (ip netns exec execs it): its PID is
  // the one `ip netns pids` reports. Left running, Down() must kill it and say so.
  std::string log = dir + "/sleep.log";
  auto argv = net.ExecArgv("c1", {FindProgram("sleep", kDirs), "600"});
  ASSERT_TRUE(argv.ok());
  SpawnResult spawned = SpawnDaemon(*argv, kEnv, log);
  ASSERT_TRUE(spawned.id) << spawned.error;
  std::string exe;
  for (int i = 0; i < 100; ++i) {  // until ip has exec'd it
    std::error_code ec;
    exe = fs::read_symlink("/proc/" + std::to_string(spawned.id->pid) + "/exe", ec).string();
    if (exe.find("sleep") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(exe.find("sleep"), std::string::npos) << "pid " << spawned.id->pid << " is " << exe;
  ToolResult pids = Root({FindProgram("ip", kDirs), "netns", "pids", net.Namespace("c1")});
  EXPECT_EQ(pids.out, std::to_string(spawned.id->pid) + "\n");
  EXPECT_TRUE(IsAlive(*spawned.id));

  start = Clock::now();
  progress.str("");
  Status down = net.Down(progress);
  double down_s = Since(start);
  EXPECT_TRUE(down.ok()) << down.message();
  std::cout << progress.str() << "Down(): " << down_s << " s (one process killed inside)\n";
  EXPECT_NE(progress.str().find("pid " + std::to_string(spawned.id->pid)), std::string::npos)
      << progress.str();
  EXPECT_NE(progress.str().find("killing it"), std::string::npos);
  ReapChildren();
  EXPECT_FALSE(IsAlive(*spawned.id));
  EXPECT_EQ(RootTraces(net.NamePrefix()), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(net.StatePath()));
  EXPECT_FALSE(fs::exists(std::string(HostNet::kNetnsEtc) + "/" + net.Namespace("ctl")));
  fs::remove_all(dir);
}

TEST_F(HostNetLive, SameTagIsIdempotentOrRefusedAndDownTwiceIsFine) {
  std::string dir = TestDir("same");
  std::string other_dir = TestDir("other");
  std::vector<HostSpec> hosts = {{"a", "login"}, {"b", "compute"}};
  HostNet net(HostNetOptions{.tag = 498, .hosts = hosts, .state_dir = dir});
  ASSERT_TRUE(RootTraces(net.NamePrefix()).empty()) << "tag 498 is in use on this machine";
  DownAtExit guard{net};
  std::ostringstream progress;
  Status s = net.Up(progress);
  ASSERT_TRUE(s.ok()) << s.message();

  // The same network from the same directory: found up.
  HostNet again(HostNetOptions{.tag = 498, .hosts = hosts, .state_dir = dir});
  progress.str("");
  s = again.Up(progress);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_NE(progress.str().find("already up"), std::string::npos) << progress.str();

  // Other hosts on the same record: refused.
  HostNet changed(HostNetOptions{.tag = 498, .hosts = {{"a", "login"}}, .state_dir = dir});
  s = changed.Up(progress);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("take it down first"), std::string::npos) << s.message();

  // Another lab on the same tag: refused, and its Down() touches nothing of ours.
  HostNet other(HostNetOptions{.tag = 498, .hosts = hosts, .state_dir = other_dir});
  s = other.Up(progress);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("rcah-498-a"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(other.StatePath()));
  s = other.Down(progress);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("left alone"), std::string::npos) << s.message();
  EXPECT_TRUE(Ping(net, "a", "b"));

  // From a process that did not bring it up: Load, then Down.
  auto loaded = HostNet::Load(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->options().hosts, hosts);
  EXPECT_EQ(*loaded->AddressOf("b"), *net.AddressOf("b"));
  EXPECT_TRUE(loaded->Exec("b", {FindProgram("ping", kDirs), "-c1", "-W2", "a"}).ok());
  // Down() checks what is left: a stray /etc/netns directory of the tag is named, and the record
  // kept until a Down() finds nothing.
  std::string stray = std::string(HostNet::kNetnsEtc) + "/rcah-498-stray";
  fs::create_directories(stray);
  s = loaded->Down(progress);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(stray), std::string::npos) << s.message();
  EXPECT_TRUE(fs::exists(loaded->StatePath()));
  fs::remove(stray);
  s = loaded->Down(progress);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(RootTraces(net.NamePrefix()), std::vector<std::string>{});

  // Down() again, and on a tag never brought up: nothing to do.
  s = net.Down(progress);
  EXPECT_TRUE(s.ok()) << s.message();
  s = HostNet(HostNetOptions{.tag = 498, .state_dir = dir}).Down(progress);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(other.Down(progress).ok());
  EXPECT_FALSE(HostNet::Load(dir).ok());
  fs::remove_all(dir);
  fs::remove_all(other_dir);
}

}  // namespace
}  // namespace slurm_rca::live

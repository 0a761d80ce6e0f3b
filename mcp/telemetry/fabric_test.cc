// fabric on SYNTHETIC sysfs, /proc and cgroup trees built in a temporary directory (the seed's
// node: jobs 918001 sole user of mlx5_0, 918002 and 918003 sharing mlx5_1, 918004 sole user of
// mlx5_2 over RoCE), in the three cgroup layouts. No HCA, Slurm or real /proc is read.
#include "mcp/telemetry/fabric.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "guard/check.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/tools.h"
#include "testing/corpus.h"

namespace slurm_rca::mcp {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

enum class Layout { kV1, kV2, kV2Sluid };

std::string Sluid(long job) {
  std::string s = "sSYN" + std::to_string(job) + "X";
  while (s.size() < 14) s += "0";
  return s;
}

// The synthetic node. Construct, adjust, then Read().
class Node {
 public:
  explicit Node(Layout layout, bool titles = true) {
    static int n = 0;
    root_ = fs::temp_directory_path() /
            ("fabric_test." + std::to_string(getpid()) + "." + std::to_string(n++));
    fs::remove_all(root_);
    options_.sys_root = (root_ / "sys").string();
    options_.proc_root = (root_ / "proc").string();
    options_.cgroup_root = (root_ / "sys/fs/cgroup").string();
    Port("mlx5_0", 1, "4: ACTIVE", "200 Gb/sec (4X HDR)", "InfiniBand");
    Port("mlx5_1", 1, "4: ACTIVE", "200 Gb/sec (4X HDR)", "InfiniBand");
    Port("mlx5_1", 2, "1: DOWN", "100 Gb/sec (4X EDR)", "InfiniBand");
    Port("mlx5_2", 1, "4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet");
    // uverbs N is not mlx5_N.
    Write("sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_1\n");
    Write("sys/class/infiniband_verbs/uverbs1/ibdev", "mlx5_0\n");
    Write("sys/class/infiniband_verbs/uverbs2/ibdev", "mlx5_2\n");
    Counter("mlx5_0", 1, "counters", "port_xmit_data", "123456789");
    Counter("mlx5_0", 1, "counters", "symbol_error", "0");
    Counter("mlx5_0", 1, "counters", "link_downed", "255");
    Counter("mlx5_0", 1, "counters", "port_rcv_errors", "");
    Counter("mlx5_1", 1, "counters", "symbol_error", "118");
    Counter("mlx5_1", 1, "counters", "VL15_dropped", "65535");
    Counter("mlx5_1", 1, "hw_counters", "packet_seq_err", "48221");
    Counter("mlx5_1", 1, "hw_counters", "out_of_sequence", "47889");
    Counter("mlx5_1", 1, "hw_counters", "rnr_nak_retry_err", "12004");
    Counter("mlx5_2", 1, "counters", "port_rcv_errors", "abc");
    Counter("mlx5_2", 1, "hw_counters", "np_ecn_marked_roce_packets", "5000");
    Counter("mlx5_2", 1, "hw_counters", "rp_cnp_handled", "4000");
    Process(1, {"/dev/null"});  // init: no RDMA
    Job(layout, titles, 918001, {41001, 41002}, "uverbs1");
    Job(layout, titles, 918002, {42001}, "uverbs0");
    Job(layout, titles, 918003, {43001}, "uverbs0");
    Job(layout, titles, 918004, {44001, 44002}, "uverbs2");
    if (layout != Layout::kV1) {
      Write("sys/fs/cgroup/system.slice/slurmstepd.scope/system/cgroup.procs", "499999\n");
      Process(499999, {});
    }
  }
  ~Node() { fs::remove_all(root_); }

  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void Port(const std::string& hca, int port, const std::string& state, const std::string& rate,
            const std::string& layer) {
    std::string d = "sys/class/infiniband/" + hca + "/ports/" + std::to_string(port) + "/";
    Write(d + "state", state + "\n");
    Write(d + "rate", rate + "\n");
    Write(d + "link_layer", layer + "\n");
    fs::create_directories(root_ / (d + "counters"));
  }
  void Counter(const std::string& hca, int port, const std::string& sub, const std::string& name,
               const std::string& value) {
    Write("sys/class/infiniband/" + hca + "/ports/" + std::to_string(port) + "/" + sub + "/" + name,
          value.empty() ? "" : value + "\n");
  }
  // A /proc/<pid> with fds linking to the given targets (uverbsN means /dev/infiniband/uverbsN).
  void Process(long pid, const std::vector<std::string>& targets, const std::string& title = "") {
    fs::path fd = root_ / "proc" / std::to_string(pid) / "fd";
    fs::create_directories(fd);
    int n = 0;
    for (const std::string& t : targets) {
      std::string target = t.rfind("uverbs", 0) == 0 ? "/dev/infiniband/" + t : t;
      fs::create_symlink(target, fd / std::to_string(n++));
    }
    if (!title.empty()) {
      std::string cmd = title;
      cmd.push_back('\0');
      std::ofstream(root_ / "proc" / std::to_string(pid) / "cmdline", std::ios::binary) << cmd;
    }
  }
  std::string JobDir(Layout layout, long job) {
    switch (layout) {
      case Layout::kV1:
        return "sys/fs/cgroup/freezer/slurm/uid_1000/job_" + std::to_string(job);
      case Layout::kV2:
        return "sys/fs/cgroup/system.slice/slurmstepd.scope/job_" + std::to_string(job);
      case Layout::kV2Sluid:
        return "sys/fs/cgroup/system.slice/slurmstepd.scope/" + Sluid(job);
    }
    return "";
  }
  void Job(Layout layout, bool titles, long job, const std::vector<long>& pids,
           const std::string& uverbs) {
    std::string dir = JobDir(layout, job);
    std::string procs;
    for (long p : pids) {
      procs += std::to_string(p) + "\n";
      Process(p, {"/dev/null", uverbs});
    }
    long stepd = 500000 + job % 100000;
    Write(dir + "/step_0/user/task_0/cgroup.procs", procs);
    Write(dir + "/step_0/slurm/cgroup.procs", std::to_string(stepd) + "\n");
    Write(dir + "/cgroup.procs", "");
    Process(stepd, {"/dev/null"}, titles ? "slurmstepd: [" + std::to_string(job) + ".0]" : "");
  }

  Json Read() {
    FabricReport r = ReadFabric(options_);
    EXPECT_TRUE(r.evidence) << r.failure;
    return r.report;
  }
  const FabricOptions& options() const { return options_; }
  fs::path root() const { return root_; }

 private:
  fs::path root_;
  FabricOptions options_;
};

const Json& PortOf(const Json& report, const std::string& device, int port) {
  for (const Json& p : report["ports"]) {
    if (p["device"] == device && p["port"] == port) return p;
  }
  static const Json none;
  ADD_FAILURE() << "no port " << device << "/" << port;
  return none;
}

void ExpectSeedAttribution(const Json& r, const std::string& j1 = "918001",
                           const std::string& j4 = "918004") {
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["attributed_job"], j1);
  EXPECT_TRUE(PortOf(r, "mlx5_0", 1)["suppression"].is_null());
  for (int port : {1, 2}) {
    const Json& p = PortOf(r, "mlx5_1", port);  // an fd names the HCA: every port is used
    EXPECT_TRUE(p["attributed_job"].is_null());
    EXPECT_EQ(p["suppression"], "shared");
    EXPECT_EQ(p["job_users"].size(), 2u);
  }
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["attributed_job"], j4);
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["link_layer"], "Ethernet");
  EXPECT_TRUE(r["node"]["gaps"].empty()) << r["node"]["gaps"].dump();
  EXPECT_TRUE(r["node"]["refused_reads"].empty()) << r["node"]["refused_reads"].dump();
}

// --- the three cgroup layouts -----------------------------------------------------------------

TEST(FabricLayoutTest, CgroupV2NumericJobDirs) {
  Node node(Layout::kV2);
  Json r = node.Read();
  EXPECT_EQ(r["node"]["layout"], "cgroup-v2");
  EXPECT_EQ(r["node"]["scope_found"], true);
  EXPECT_EQ(r["node"]["scopes"], Json({"system.slice/slurmstepd.scope"}));
  ExpectSeedAttribution(r);
  ASSERT_EQ(r["jobs"].size(), 4u);  // system/ is never a job
  EXPECT_EQ(r["jobs"][0]["resolution"], "numeric_dir");
  EXPECT_EQ(r["jobs"][0]["processes"], 3);  // two tasks and the stepd
  EXPECT_EQ(r["jobs"][0]["attributed_ports"], Json({"mlx5_0/1"}));
}

TEST(FabricLayoutTest, CgroupV1Freezer) {
  Node node(Layout::kV1);
  Json r = node.Read();
  EXPECT_EQ(r["node"]["layout"], "cgroup-v1");
  EXPECT_EQ(r["node"]["scopes"], Json({"freezer/slurm"}));
  ExpectSeedAttribution(r);
}

TEST(FabricLayoutTest, CgroupV2SluidResolvedFromStepdTitles) {
  Node node(Layout::kV2Sluid);
  Json r = node.Read();
  EXPECT_EQ(r["node"]["layout"], "cgroup-v2-sluid");
  ExpectSeedAttribution(r);
  for (const Json& j : r["jobs"]) {
    EXPECT_EQ(j["resolution"], "stepd_title");
    EXPECT_TRUE(j["sluid"].get<std::string>().rfind("sSYN", 0) == 0);
    EXPECT_EQ(j["sluid"].get<std::string>().size(), 14u);
  }
  EXPECT_EQ(r["node"]["unresolved_sluid_allocations"], 0);
}

TEST(FabricLayoutTest, SluidWithoutTitlesIsUnresolvedAndStillAUser) {
  Node node(Layout::kV2Sluid, /*titles=*/false);
  Json r = node.Read();
  EXPECT_EQ(r["node"]["unresolved_sluid_allocations"], 4);
  EXPECT_TRUE(PortOf(r, "mlx5_0", 1)["attributed_job"].is_null());
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["suppression"], "unresolved");
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["job_users"], Json({"sluid:" + Sluid(918001)}));
  EXPECT_EQ(PortOf(r, "mlx5_1", 1)["suppression"], "shared");
  for (const Json& j : r["jobs"]) {
    EXPECT_TRUE(j["job_id"].is_null());
    EXPECT_EQ(j["resolution"], "unresolved");
  }
}

TEST(FabricLayoutTest, DisagreeingTitlesStayUnresolved) {
  Node node(Layout::kV2Sluid);
  std::string dir = node.JobDir(Layout::kV2Sluid, 918001);
  node.Write(dir + "/step_1/slurm/cgroup.procs", "519999\n");
  node.Process(519999, {}, "slurmstepd: [918777.1]");
  Json r = node.Read();
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["suppression"], "unresolved");
  EXPECT_EQ(r["node"]["unresolved_sluid_allocations"], 1);
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["attributed_job"], "918004");
}

TEST(FabricLayoutTest, NoScopeIsAnIdleNodeNotAnError) {
  Node node(Layout::kV2);
  fs::remove_all(node.root() / "sys/fs/cgroup");
  Json r = node.Read();
  EXPECT_EQ(r["node"]["layout"], "none");
  EXPECT_EQ(r["node"]["scope_found"], false);
  for (const Json& p : r["ports"]) {
    EXPECT_TRUE(p["attributed_job"].is_null());
    EXPECT_TRUE(p["job_users"].empty());
  }
  // The job processes are still in /proc, outside any job now: non-job users.
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["suppression"], "nonjob_user");
}

// --- suppression: gaps and non-job users ------------------------------------------------------

TEST(FabricSuppressionTest, UnreadableProcFdIsAGapThatSuppressesEverything) {
  Node node(Layout::kV2);
  fs::remove_all(node.root() / "proc/41001/fd");
  node.Write("proc/41001/fd", "not a directory\n");
  Json r = node.Read();
  EXPECT_EQ(r["node"]["pid_fd_unreadable"], 1);
  ASSERT_FALSE(r["node"]["gaps"].empty());
  EXPECT_EQ(r["node"]["gaps"][0]["source"], "procfd");
  for (const Json& p : r["ports"]) {
    EXPECT_TRUE(p["attributed_job"].is_null()) << p.dump();
    EXPECT_EQ(p["suppression"], "evidence_gap");
  }
  // The counters are still read: device-level evidence does not depend on attribution.
  EXPECT_EQ(PortOf(r, "mlx5_1", 1)["counters"]["packet_seq_err"]["value"], 48221);
}

TEST(FabricSuppressionTest, APidInTheCgroupButNotInProcIsAGap) {
  Node node(Layout::kV2);
  std::string dir = node.JobDir(Layout::kV2, 918004);
  node.Write(dir + "/step_0/user/task_0/cgroup.procs", "44001\n44002\n44003\n");
  Json r = node.Read();
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["suppression"], "evidence_gap");
  EXPECT_NE(r["node"]["gaps"][0]["error"].get<std::string>().find("not in /proc"),
            std::string::npos);
}

TEST(FabricSuppressionTest, AnUnreadableCgroupIsAGap) {
  Node node(Layout::kV2);
  fs::path procs = node.root() / node.JobDir(Layout::kV2, 918002) / "cgroup.procs";
  fs::remove(procs);
  fs::create_symlink(procs, procs);  // ELOOP: not ENOENT, so not "job ending"
  Json r = node.Read();
  ASSERT_FALSE(r["node"]["gaps"].empty());
  EXPECT_EQ(r["node"]["gaps"][0]["source"], "cgroup");
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["suppression"], "evidence_gap");
}

TEST(FabricSuppressionTest, AProcessOutsideEveryJobIsANonJobUser) {
  Node node(Layout::kV2);
  node.Process(777, {"uverbs1"});  // an ib_write_bw outside Slurm, on mlx5_0
  Json r = node.Read();
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["suppression"], "nonjob_user");
  EXPECT_EQ(PortOf(r, "mlx5_0", 1)["nonjob_user_pids"], Json({777}));
  EXPECT_TRUE(PortOf(r, "mlx5_0", 1)["attributed_job"].is_null());
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["attributed_job"], "918004");  // no gap: others still attributed
}

TEST(FabricSuppressionTest, AnUnreadableIbdevIsAGap) {
  Node node(Layout::kV2);
  fs::remove(node.root() / "sys/class/infiniband_verbs/uverbs2/ibdev");
  Json r = node.Read();
  EXPECT_EQ(PortOf(r, "mlx5_2", 1)["suppression"], "evidence_gap");
}

// --- ports and counters -----------------------------------------------------------------------

TEST(FabricCounterTest, AbsentIsAbsentAndSaturationCarriesItsWidth) {
  Node node(Layout::kV2);
  Json r = node.Read();
  const Json& p0 = PortOf(r, "mlx5_0", 1);
  EXPECT_EQ(p0["state"], "ACTIVE");
  EXPECT_EQ(p0["up"], true);
  EXPECT_EQ(p0["rate"], "200 Gb/sec (4X HDR)");
  EXPECT_EQ(p0["counters"]["port_xmit_data"]["value"], 123456789);
  EXPECT_FALSE(p0["counters"]["port_xmit_data"].contains("width"));
  EXPECT_EQ(p0["counters"]["symbol_error"]["value"], 0);  // a real 0
  EXPECT_EQ(p0["counters"]["link_downed"]["saturated"], true);
  EXPECT_EQ(p0["counters"]["link_downed"]["width"], 8);
  EXPECT_FALSE(p0["counters"].contains("port_rcv_errors"));  // empty file
  std::set<std::string> absent = p0["absent_counters"].get<std::set<std::string>>();
  EXPECT_TRUE(absent.count("port_rcv_errors"));
  EXPECT_TRUE(absent.count("port_rcv_data"));  // missing file
  const Json& p1 = PortOf(r, "mlx5_1", 1);
  EXPECT_EQ(p1["counters"]["VL15_dropped"]["saturated"], true);
  EXPECT_EQ(p1["counters"]["VL15_dropped"]["width"], 16);
  EXPECT_EQ(p1["counters"]["symbol_error"]["saturated"], false);
  EXPECT_EQ(p1["counters"]["packet_seq_err"]["wraps"], true);
  EXPECT_EQ(p1["counters"]["packet_seq_err"]["saturated"], false);
  const Json& down = PortOf(r, "mlx5_1", 2);
  EXPECT_EQ(down["state"], "DOWN");
  EXPECT_EQ(down["up"], false);
  const Json& roce = PortOf(r, "mlx5_2", 1);
  EXPECT_FALSE(roce["counters"].contains("port_rcv_errors"));  // "abc"
  EXPECT_EQ(roce["counters"]["np_ecn_marked_roce_packets"]["value"], 5000);
}

TEST(FabricCounterTest, NoInfinibandDirectoryIsNoEvidence) {
  Node node(Layout::kV2);
  fs::remove_all(node.root() / "sys/class/infiniband");
  FabricReport r = ReadFabric(node.options());
  EXPECT_FALSE(r.evidence);
  EXPECT_NE(r.failure.find("cannot list"), std::string::npos);
  EXPECT_TRUE(r.report["ports"].empty());
}

// --- the path allowlist (data: mcp/testdata/fabric/paths.txt) ---------------------------------

// Through the one corpus runner (base/corpus.h): each line is a case, its input "KIND PATH"; a
// read off the allowlist is one diagnostic with rule off-allowlist, any other refusal (or an
// input that is no read) a diagnostic no case expects.
TEST(FabricPathTest, EveryListedPathGetsItsVerdict) {
  FabricOptions o{.sys_root = "/sys", .proc_root = "/proc", .cgroup_root = "/sys/fs/cgroup"};
  base::CorpusReport report = base::RunCorpus(
      {.path = std::string(SLURM_RCA_SOURCE_DIR) + "/mcp/testdata/fabric/paths.txt",
       .layout = base::CorpusLayout::kLines,
       .rules = {"off-allowlist"}},
      [&o](const base::CorpusCase& c) -> std::vector<base::Diagnostic> {
        std::istringstream words(c.input);
        std::string kind, path, extra;
        words >> kind >> path >> extra;
        const std::map<std::string, FabricRead> kinds = {
            {"list", FabricRead::kList}, {"read", FabricRead::kFile}, {"link", FabricRead::kLink}};
        if (!kinds.count(kind) || path.empty() || !extra.empty()) {
          return {{.file = c.path, .line = c.line, .rule = "input", .message = "not KIND PATH"}};
        }
        base::Status why = CheckFabricPath(o, kinds.at(kind), path);
        if (why.ok()) return {};
        bool off = why.message().find("not on the fabric allowlist") != std::string::npos;
        return {{.file = c.path,
                 .line = c.line,
                 .rule = off ? "off-allowlist" : "other-refusal",
                 .message = why.message()}};
      });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 30u);
  EXPECT_GE(std::count_if(report.cases.begin(), report.cases.end(),
                          [](const base::CaseResult& r) { return !r.c.expect.allow; }),
            15);
}

// --- no rdma tool, and never a write -----------------------------------------------------------

TEST(FabricGuardTest, RdmaIsNotRunAndItsWritesAreRefused) {
  guard::Guard guard(guard::GuardOptions{});
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {"rdma", "statistic", "qp", "set", "link", "mlx5_0/1", "auto", "type,pid", "on"},
           {"rdma", "resource", "set", "qp"},
           {"rdma", "dev", "set", "mlx5_0", "name", "x"},
           {"rdma", "link", "set", "mlx5_0/1", "type", "rxe"},
           {"rdma", "system", "set", "netns", "exclusive"},
           {"rdma", "-j", "resource", "show", "qp"}}) {
    guard::Verdict v = guard.Check(argv);
    EXPECT_FALSE(v.ok()) << argv[1];
  }
  EXPECT_EQ(FindTopic("fabric")->argv, (std::vector<std::string>{"files", "fabric"}));
}

// --- through slurm_query ---------------------------------------------------------------------

class NullContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

ToolResult QueryFabric(Backend& backend) {
  SurfaceOptions o;
  o.backend = &backend;
  NullContext context;
  for (const Tool& t : BuildTools(o)) {
    if (t.name == kQueryTool) return t.run(Json{{"topic", "fabric"}}, context);
  }
  ADD_FAILURE() << "no slurm_query";
  return {};
}

TEST(FabricToolTest, LiveAnswersPortsAndTheReport) {
  Node node(Layout::kV2Sluid);
  LiveOptions o;
  o.fabric = node.options();
  LiveBackend live(o);
  ToolResult r = QueryFabric(live);
  ASSERT_FALSE(r.is_error) << ResultText(r);
  ASSERT_TRUE(r.structured.has_value());
  EXPECT_EQ((*r.structured)["source"], "live");
  EXPECT_EQ((*r.structured)["argv"], Json({"files", "fabric"}));
  EXPECT_EQ((*r.structured)["rows"].size(), 4u);
  EXPECT_EQ((*r.structured)["report"]["node"]["layout"], "cgroup-v2-sluid");
  EXPECT_NE(ResultText(r).find("2 attributed to a sole job user"), std::string::npos)
      << ResultText(r);
}

TEST(FabricToolTest, NoDeviceAndReplayAreNoEvidence) {
  Node node(Layout::kV2);
  fs::remove_all(node.root() / "sys/class/infiniband");
  LiveOptions o;
  o.fabric = node.options();
  LiveBackend live(o);
  ToolResult r = QueryFabric(live);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(ResultText(r).find("NO EVIDENCE (unavailable, live"), std::string::npos)
      << ResultText(r);

  auto opened = ReplayBackend::Open(std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<ReplayBackend> replay = std::move(opened).value();
  ToolResult rr = QueryFabric(*replay);
  EXPECT_TRUE(rr.is_error);
  EXPECT_NE(ResultText(rr).find("NO EVIDENCE (unavailable, replay"), std::string::npos)
      << ResultText(rr);
  EXPECT_NE(ResultText(rr).find("not recorded in this bundle"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::mcp

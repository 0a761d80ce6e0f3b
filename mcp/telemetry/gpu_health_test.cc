// gpu_health on the synthetic nvidia-smi test double (mcp/testdata/nvidia-smi-double): every
// scenario of mcp/testdata/gpu_health/ is run through the guard and LiveBackend as a real
// process, and judged as expected.txt says. No real GPU or nvidia-smi is involved.
#include "mcp/telemetry/gpu_health.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "guard/check.h"
#include "guard/corpus.h"
#include "guard/rule.h"
#include "mcp/backend/live_backend.h"
#include "mcp/backend/replay_backend.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::mcp {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kData = fs::path(SLURM_RCA_SOURCE_DIR) / "mcp/testdata/gpu_health";
const fs::path kDouble = fs::path(SLURM_RCA_SOURCE_DIR) / "mcp/testdata/nvidia-smi-double";

struct Expected {
  std::string scenario;
  std::string outcome;
  std::string worst;
  bool drain = false;
  std::multiset<std::string> findings;
};

std::vector<Expected> ExpectedTable() {
  std::vector<Expected> table;
  std::ifstream in(kData / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Expected e;
    std::string drain, finding;
    words >> e.scenario >> e.outcome >> e.worst >> drain;
    e.drain = drain == "yes";
    while (words >> finding) {
      if (finding != "-") e.findings.insert(finding);
    }
    table.push_back(e);
  }
  return table;
}

// A trusted directory holding a copy of the test double, pointed at one scenario.
class DoubleDir {
 public:
  DoubleDir() {
    dir_ = fs::temp_directory_path() / ("gpu_health_test." + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    fs::copy_file(kDouble / "nvidia-smi", dir_ / "nvidia-smi");
    fs::permissions(dir_ / "nvidia-smi", fs::perms::owner_all | fs::perms::group_read |
                                             fs::perms::group_exec | fs::perms::others_read |
                                             fs::perms::others_exec);
  }
  ~DoubleDir() { fs::remove_all(dir_); }
  void Select(const std::string& scenario) {
    std::ofstream(dir_ / "scenario") << (kData / scenario).string() << "\n";
  }
  std::string path() const { return dir_.string(); }

 private:
  fs::path dir_;
};

LiveOptions Options(const std::string& dir, int timeout_ms) {
  LiveOptions o;
  o.executor.trusted_dirs = {dir};
  o.executor.timeout = std::chrono::milliseconds(timeout_ms);
  o.cache_ttl_seconds = 0;
  o.max_per_minute = 0;
  return o;
}

std::multiset<std::string> Findings(const Json& report) {
  std::multiset<std::string> out;
  for (const Json& gpu : report["gpus"]) {
    for (const Json& f : gpu["findings"]) {
      out.insert(f["label"].get<std::string>() + ":" + f["check"].get<std::string>() + ":" +
                 f["severity"].get<std::string>());
    }
  }
  for (const Json& f : report["node_findings"]) {
    out.insert(f["label"].get<std::string>() + ":" + f["check"].get<std::string>() + ":" +
               f["severity"].get<std::string>());
  }
  return out;
}

Evidence Ok(const std::string& out) {
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.source = "live";
  e.exit_code = 0;
  e.out = out;
  e.argv = GpuHealthArgv();
  return e;
}

std::string ReadFile(const std::string& name) {
  std::ifstream in(kData / name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A row of the 20 fields with the given overrides (by field name).
std::string Row(int index, const std::map<std::string, std::string>& set = {}) {
  std::map<std::string, std::string> v = {
      {"index", std::to_string(index)},
      {"uuid", "GPU-00000000-0000-0000-0000-0000000000" + std::to_string(10 + index)},
      {"name", "synthetic"},
      {"pci.bus_id", "00000000:" + std::to_string(10 + index) + ":00.0"},
      {"pcie.link.width.current", "16"},
      {"pcie.link.width.max", "16"},
      {"pcie.link.gen.current", "5"},
      {"pcie.link.gen.max", "5"},
      {"ecc.errors.uncorrected.volatile.total", "0"},
      {"ecc.errors.uncorrected.aggregate.total", "0"},
      {"ecc.errors.corrected.volatile.total", "0"},
      {"remapped_rows.pending", "No"},
      {"remapped_rows.uncorrectable", "0"},
      {"remapped_rows.failure", "No"},
      {"clocks_throttle_reasons.active", "0x0000000000000001"},
      {"temperature.gpu", "30"},
      {"memory.used", "1"},
      {"memory.total", "81559"},
      {"persistence_mode", "Enabled"},
      {"mig.mode.current", "Disabled"}};
  for (const auto& [k, value] : set) v.at(k) = value;
  std::string line;
  for (const std::string& f : GpuHealthFields()) line += (line.empty() ? "" : ", ") + v.at(f);
  return line + "\n";
}

// --- every scenario of the test double, through the guard and a real process ------------------

TEST(GpuHealthDoubleTest, EveryScenarioJudgedAsExpected) {
  std::vector<Expected> table = ExpectedTable();
  ASSERT_GE(table.size(), 30u);
  DoubleDir dir;
  LiveBackend live(Options(dir.path(), 5000));
  LiveBackend quick(Options(dir.path(), 1000));  // for the hung query
  for (const Expected& x : table) {
    SCOPED_TRACE(x.scenario);
    dir.Select(x.scenario);
    Evidence e = (x.scenario == "hang" ? quick : live).Read(GpuHealthArgv());
    GpuHealthReport r = AssessGpuHealth(e);
    EXPECT_EQ(r.report["query"]["outcome"], x.outcome) << r.failure << " / " << e.cause;
    EXPECT_EQ(r.evidence, x.outcome != "query_failed");
    EXPECT_EQ(r.report["summary"]["worst_severity"], x.worst);
    EXPECT_EQ(r.report["summary"]["would_drain"], x.drain);
    EXPECT_EQ(r.report["summary"]["classification_only"], true);
    EXPECT_EQ(Findings(r.report), x.findings);
    if (x.outcome == "query_failed") {
      // No evidence: no GPU, no finding, never "healthy".
      EXPECT_TRUE(r.rows.empty());
      EXPECT_NE(r.failure.find("query failed"), std::string::npos);
      EXPECT_EQ(r.report["summary"]["incomplete"], true);
    }
    if (x.drain) {
      EXPECT_EQ(r.report["summary"]["reason"].get<std::string>().rfind(
                    "slurm-rca gpu_health " + x.worst + ":", 0),
                0u);
    } else {
      EXPECT_EQ(r.report["summary"]["reason"], "");
    }
  }
}

TEST(GpuHealthDoubleTest, EveryScenarioFileHasAnExpectation) {
  std::set<std::string> listed;
  for (const Expected& x : ExpectedTable()) listed.insert(x.scenario);
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(kData)) {
    std::string ext = entry.path().extension().string();
    if (ext == ".csv" || ext == ".exit" || ext == ".hang" || ext == ".stderr") {
      on_disk.insert(entry.path().stem().string());
    }
  }
  EXPECT_EQ(listed, on_disk);
}

TEST(GpuHealthDoubleTest, TheDoubleAnswersOnlyTheHealthQuery) {
  DoubleDir dir;
  dir.Select("healthy");
  LiveBackend live(Options(dir.path(), 5000));
  Evidence other = live.Read({"nvidia-smi", "-L"});
  EXPECT_EQ(other.outcome, Evidence::Outcome::kFailed);
  EXPECT_EQ(other.exit_code, 2);
  GpuHealthReport r = AssessGpuHealth(other);
  EXPECT_FALSE(r.evidence);
  EXPECT_NE(r.failure.find("exited 2 (invalid argument"), std::string::npos) << r.failure;
}

// --- the exit statuses --------------------------------------------------------------------

TEST(GpuHealthExitTest, OnlyTheFourDocumentedHardwareFaultsAreEvidence) {
  std::set<int> faults;
  for (int code = -1; code <= 255; ++code) {
    if (IsHardwareFaultExit(code)) faults.insert(code);
    Evidence e;
    e.outcome = code == 0 ? Evidence::Outcome::kOk : Evidence::Outcome::kFailed;
    e.exit_code = code;
    e.argv = GpuHealthArgv();
    e.out = code == 0 ? Row(0) : "";
    GpuHealthReport r = AssessGpuHealth(e);
    EXPECT_EQ(r.evidence, code == 0 || IsHardwareFaultExit(code)) << code;
    if (!r.evidence) {
      EXPECT_TRUE(Findings(r.report).empty()) << code;
    }
  }
  EXPECT_EQ(faults, (std::set<int>{8, 10, 14, 15}));
  EXPECT_EQ(NvidiaSmiExitMeaning(8), "external power cables not attached");
  EXPECT_EQ(NvidiaSmiExitMeaning(10), "NVIDIA kernel detected an interrupt issue with a GPU");
  EXPECT_EQ(NvidiaSmiExitMeaning(14), "infoROM corrupted");
  EXPECT_EQ(NvidiaSmiExitMeaning(15), "the GPU fell off the bus or is otherwise inaccessible");
  EXPECT_EQ(NvidiaSmiExitMeaning(9), "NVIDIA driver not loaded");
  EXPECT_EQ(NvidiaSmiExitMeaning(42), "undocumented");
}

TEST(GpuHealthExitTest, ATimeoutIsNeverAFaultEvenWithExit15) {
  Evidence e;
  e.outcome = Evidence::Outcome::kTimedOut;
  e.exit_code = 15;
  e.argv = GpuHealthArgv();
  e.cause = "killed after 10 s";
  GpuHealthReport r = AssessGpuHealth(e);
  EXPECT_FALSE(r.evidence);
  EXPECT_EQ(r.report["query"]["timed_out"], true);
  EXPECT_EQ(r.report["summary"]["would_drain"], false);
  EXPECT_TRUE(Findings(r.report).empty());
  EXPECT_NE(r.failure.find("timed out"), std::string::npos);
}

TEST(GpuHealthExitTest, RefusedAndUnavailableReadsAreQueryFailed) {
  for (Evidence::Outcome o : {Evidence::Outcome::kRefused, Evidence::Outcome::kUnavailable}) {
    Evidence e;
    e.outcome = o;
    e.argv = GpuHealthArgv();
    e.cause = "cause given";
    GpuHealthReport r = AssessGpuHealth(e);
    EXPECT_FALSE(r.evidence);
    EXPECT_EQ(r.report["query"]["outcome"], "query_failed");
    EXPECT_NE(r.failure.find("cause given"), std::string::npos);
    EXPECT_NE(r.failure.find("neither a GPU fault nor a healthy GPU"), std::string::npos);
  }
}

TEST(GpuHealthExitTest, FaultExitKeepsTheRowsItPrintedAndNamesNoGpu) {
  Evidence e = Ok(ReadFile("off_bus.csv"));
  e.outcome = Evidence::Outcome::kFailed;
  e.exit_code = 15;
  GpuHealthReport r = AssessGpuHealth(e);
  ASSERT_TRUE(r.evidence);
  EXPECT_EQ(r.rows.size(), 3u);
  ASSERT_EQ(r.report["node_findings"].size(), 1u);
  EXPECT_EQ(r.report["node_findings"][0]["label"], "node");
  EXPECT_EQ(r.report["summary"]["reason"], "slurm-rca gpu_health fatal: nvidia-smi-exit-15:node");
}

// --- values: known or unknown, never 0 -------------------------------------------------------

TEST(GpuHealthFieldTest, UnknownValuesAreNullWithAReasonNeverZero) {
  GpuHealthReport r = AssessGpuHealth(Ok(ReadFile("unknown_values.csv")));
  ASSERT_EQ(r.rows.size(), 4u);
  int unknown = 0;
  for (const Json& gpu : r.rows) {
    for (const auto& [name, f] : gpu["fields"].items()) {
      if (f["known"] == false) {
        ++unknown;
        EXPECT_TRUE(f["value"].is_null()) << name;
        EXPECT_FALSE(f["reason"].get<std::string>().empty()) << name;
      }
    }
  }
  EXPECT_EQ(unknown, 15);  // 6 + 4 + 2 + 3
  const Json& g0 = r.rows[0]["fields"];
  EXPECT_EQ(g0["temperature.gpu"]["raw"], "[Not Supported]");
  EXPECT_EQ(g0["temperature.gpu"]["known"], false);
  EXPECT_EQ(g0["pcie.link.width.current"]["known"], false);                 // N/A
  EXPECT_EQ(g0["ecc.errors.uncorrected.aggregate.total"]["known"], false);  // -1
  EXPECT_EQ(g0["pcie.link.gen.current"]["known"], false);                   // NaN
  const Json& g1 = r.rows[1]["fields"];
  EXPECT_NE(g1["temperature.gpu"]["reason"].get<std::string>().find("out of range"),
            std::string::npos);
  EXPECT_EQ(g1["persistence_mode"]["known"], false);
  EXPECT_TRUE(r.rows[1]["clock_reasons"].is_null());
  const Json& g2 = r.rows[2]["fields"];  // used 90000 > total 81559
  EXPECT_EQ(g2["memory.used"]["known"], false);
  EXPECT_EQ(g2["memory.total"]["known"], false);
  EXPECT_TRUE(r.rows[3]["uuid"].is_null());
  EXPECT_EQ(r.rows[3]["fields"]["memory.total"]["known"], false);  // 0 MiB total
  EXPECT_EQ(r.rows[3]["fields"]["memory.used"]["value"], 0);       // a real 0 stays 0
}

TEST(GpuHealthFieldTest, ARealZeroIsAKnownZero) {
  GpuHealthReport r = AssessGpuHealth(Ok(ReadFile("known_zero.csv")));
  ASSERT_EQ(r.rows.size(), 4u);
  for (const Json& gpu : r.rows) {
    EXPECT_EQ(gpu["fields"]["memory.used"]["known"], true);
    EXPECT_EQ(gpu["fields"]["memory.used"]["value"], 0);
    EXPECT_EQ(gpu["fields"]["temperature.gpu"]["value"], 0);
  }
}

TEST(GpuHealthFieldTest, MigMakesMemoryUnknownAndNaMigIsNotMig) {
  GpuHealthReport r = AssessGpuHealth(Ok(ReadFile("mig.csv")));
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0]["mig"], true);
  EXPECT_EQ(r.rows[0]["fields"]["memory.used"]["known"], false);
  EXPECT_EQ(r.rows[1]["mig"], false);                    // [N/A]: a GPU without MIG
  EXPECT_EQ(r.rows[2]["mig"], true);                     // an error string: treated as MIG
  EXPECT_EQ(r.report["summary"]["would_drain"], false);  // 40000 MiB on a MIG GPU is not judged
}

TEST(GpuHealthFieldTest, BusIdsAreCanonicalAndMalformedRowsReported) {
  GpuHealthReport r = AssessGpuHealth(Ok(ReadFile("bus_forms.csv")));
  std::vector<std::string> ids;
  for (const Json& gpu : r.rows) ids.push_back(gpu["pci_bus_id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"00000000:18:00.0", "00000000:28:00.0",
                                           "00000000:38:00.0", "00000000:4B:00.0"}));
  GpuHealthReport m = AssessGpuHealth(Ok(ReadFile("malformed.csv")));
  EXPECT_EQ(m.rows.size(), 4u);
  ASSERT_EQ(m.report["malformed_rows"].size(), 3u);
  EXPECT_NE(m.report["malformed_rows"][0]["why"].get<std::string>().find("19 columns"),
            std::string::npos);
  EXPECT_NE(m.report["malformed_rows"][1]["why"].get<std::string>().find("index"),
            std::string::npos);
  EXPECT_NE(m.report["malformed_rows"][2]["why"].get<std::string>().find("bus id"),
            std::string::npos);
  EXPECT_EQ(m.report["summary"]["incomplete"], true);
}

// --- clock reasons and the reason string -------------------------------------------------

TEST(GpuHealthClockTest, DecodesNamesAndUnknownBits) {
  EXPECT_EQ(DecodeClockReasons(0x49),
            (std::vector<std::string>{"gpu_idle", "hw_slowdown", "hw_thermal_slowdown"}));
  EXPECT_EQ(DecodeClockReasons(0x21),
            (std::vector<std::string>{"gpu_idle", "sw_thermal_slowdown"}));
  EXPECT_EQ(DecodeClockReasons(0x80), (std::vector<std::string>{"hw_power_brake_slowdown"}));
  EXPECT_EQ(DecodeClockReasons(0x1004),
            (std::vector<std::string>{"sw_power_cap", "unknown_bits_0x1000"}));
  EXPECT_TRUE(DecodeClockReasons(0).empty());
  GpuHealthReport r = AssessGpuHealth(Ok(ReadFile("hw_slowdown.csv")));
  EXPECT_EQ(r.rows[0]["clock_reasons"], Json({"gpu_idle", "hw_slowdown", "hw_thermal_slowdown"}));
}

TEST(GpuHealthReasonTest, WorstFindingsOnlyLabelsInNumericOrderAndBounded) {
  std::string out;
  for (int i : {10, 2, 1, 3}) {
    out += Row(i, i == 3 ? std::map<std::string, std::string>{{"memory.used", "50000"}}
                         : std::map<std::string, std::string>{
                               {"ecc.errors.uncorrected.volatile.total", "1"}});
  }
  Evidence e = Ok(out);
  e.outcome = Evidence::Outcome::kFailed;
  e.exit_code = 15;
  GpuHealthReport r = AssessGpuHealth(e);
  EXPECT_EQ(r.report["summary"]["reason"],
            "slurm-rca gpu_health fatal: ecc-uncorrectable:gpu1,gpu2,gpu10 "
            "nvidia-smi-exit-15:node");
  std::string many;
  for (int i = 0; i < 60; ++i) many += Row(i, {{"remapped_rows.failure", "Yes"}});
  std::string reason = AssessGpuHealth(Ok(many)).report["summary"]["reason"];
  EXPECT_EQ(reason.size(), 200u);
  EXPECT_EQ(reason.substr(197), "...");
}

TEST(GpuHealthQueryTest, TheArgvIsOneNodeWideQueryTheGuardApproves) {
  std::vector<std::string> argv = GpuHealthArgv();
  ASSERT_EQ(argv.size(), 3u);
  EXPECT_EQ(std::count(argv[1].begin(), argv[1].end(), ','), 19);
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "-i"), argv.end());
  guard::Guard guard(guard::GuardOptions{});
  guard::Verdict v = guard.Check(argv);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.denial().ToString());
}

// Every nvidia-smi option the guard corpus refuses (guard/testdata/nvidia_smi.txt: mutating,
// file-writing and looping flags) is refused with the same rule when appended to the gpu_health
// query: the one query the topic runs cannot carry a state change.
TEST(GpuHealthQueryTest, EveryRefusedCorpusFlagIsRefusedBesideTheQuery) {
  base::Result<std::vector<guard::ArgvCase>> corpus = guard::LoadArgvCases(
      (fs::path(SLURM_RCA_SOURCE_DIR) / "guard/testdata/nvidia_smi.txt").string());
  ASSERT_TRUE(corpus.ok()) << corpus.status().message();
  guard::Guard guard(guard::GuardOptions{});
  int checked = 0;
  for (const guard::ArgvCase& c : *corpus) {
    if (!c.expected || c.argv.empty() || c.argv[0] != "nvidia-smi") continue;
    const std::string rule(guard::RuleId(*c.expected));
    if (rule != "mutating-option" && rule != "file-option" && rule != "endless-mode") continue;
    std::vector<std::string> argv = GpuHealthArgv();
    std::vector<std::string> extra;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& w = c.argv[i];
      // The query already carries --query-gpu and --format; a second one is another refusal.
      if (w.rfind("--query-gpu", 0) != 0 && w.rfind("--format", 0) != 0) extra.push_back(w);
    }
    if (extra.empty() || extra[0].rfind("-", 0) != 0) continue;  // subcommand words
    argv.insert(argv.end(), extra.begin(), extra.end());
    guard::Verdict v = guard.Check(argv);
    const std::string where = c.file + ":" + std::to_string(c.line);
    ASSERT_FALSE(v.ok()) << where;
    EXPECT_EQ(guard::RuleId(v.denial().rule), rule) << where;
    ++checked;
  }
  EXPECT_GE(checked, 60);
}

TEST(GpuHealthDoubleTest, NvidiaSmiHasItsOwnShorterTimeout) {
  // The server's reads may take 20 s; a hung nvidia-smi is killed at nvidia_smi_timeout (10 s by
  // default, 300 ms here), and other programs keep the executor's limit.
  EXPECT_EQ(LiveOptions{}.nvidia_smi_timeout, std::chrono::milliseconds(10000));
  DoubleDir dir;
  dir.Select("hang");
  LiveOptions o = Options(dir.path(), 20000);
  o.nvidia_smi_timeout = std::chrono::milliseconds(300);
  LiveBackend live(o);
  auto t0 = std::chrono::steady_clock::now();
  Evidence e = live.Read(GpuHealthArgv());
  EXPECT_EQ(e.outcome, Evidence::Outcome::kTimedOut) << e.cause;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(AssessGpuHealth(e).evidence);
}

// --- through slurm_query ---------------------------------------------------------------------

class NullContext : public ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

ToolResult QueryGpuHealth(Backend& backend) {
  SurfaceOptions o;
  o.backend = &backend;
  NullContext context;
  for (const Tool& t : BuildTools(o)) {
    if (t.name == kQueryTool) return t.run(Json{{"topic", "gpu_health"}}, context);
  }
  ADD_FAILURE() << "no slurm_query";
  return {};
}

TEST(GpuHealthToolTest, AnswersWithAReportAndSaysClassificationOnly) {
  DoubleDir dir;
  dir.Select("ecc");
  LiveBackend live(Options(dir.path(), 5000));
  ToolResult r = QueryGpuHealth(live);
  ASSERT_FALSE(r.is_error) << ResultText(r);
  ASSERT_TRUE(r.structured.has_value());
  EXPECT_EQ((*r.structured)["topic"], "gpu_health");
  EXPECT_EQ((*r.structured)["source"], "live");
  EXPECT_EQ((*r.structured)["rows"].size(), 4u);
  EXPECT_EQ((*r.structured)["report"]["summary"]["would_drain"], true);
  EXPECT_NE(ResultText(r).find("classification only, nothing was done"), std::string::npos);

  dir.Select("off_bus");
  ToolResult fault = QueryGpuHealth(live);
  ASSERT_FALSE(fault.is_error) << ResultText(fault);
  ASSERT_TRUE(fault.structured.has_value());
  EXPECT_EQ((*fault.structured)["outcome"], "failed");
  EXPECT_EQ((*fault.structured)["report"]["query"]["outcome"], "hardware_fault_exit");
  EXPECT_EQ((*fault.structured)["report"]["query"]["exit_code"], 15);
}

TEST(GpuHealthToolTest, AFailedQueryIsNoEvidence) {
  DoubleDir dir;
  dir.Select("no_driver");
  LiveBackend live(Options(dir.path(), 5000));
  ToolResult r = QueryGpuHealth(live);
  EXPECT_TRUE(r.is_error);
  EXPECT_TRUE(!r.structured.has_value() || r.structured->is_null());
  EXPECT_NE(ResultText(r).find("NO EVIDENCE (failed"), std::string::npos) << ResultText(r);
  EXPECT_NE(ResultText(r).find("driver not loaded"), std::string::npos) << ResultText(r);
}

TEST(GpuHealthToolTest, ARecordedBundleWithoutTheTopicAnswersNotInTheBundle) {
  auto opened = ReplayBackend::Open(std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<ReplayBackend> replay = std::move(opened).value();
  ToolResult r = QueryGpuHealth(*replay);
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(ResultText(r).find("NO EVIDENCE (unavailable, replay"), std::string::npos)
      << ResultText(r);
  EXPECT_NE(ResultText(r).find("not recorded"), std::string::npos) << ResultText(r);
}

}  // namespace
}  // namespace slurm_rca::mcp

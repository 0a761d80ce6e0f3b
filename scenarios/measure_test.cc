// measure_test: "measured" is derived from a bundle. Synthetic bundles check each way a hop can
// fail to be measured; the shipped suite's bundles must measure every hop of every runnable
// scenario and replay through slurm-mcp's replay back-end.
#include "scenarios/measure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mcp/backend/bundle_pack.h"
#include "mcp/backend/replay_backend.h"
#include "scenarios/validate.h"
#include "scenarios/views.h"

namespace slurm_rca::scenarios {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kSource = SLURM_RCA_SOURCE_DIR;
// The bundles measured here are the tree's: rca-bench's main sets the root the same way.
const bool kRootSet = (SetFixturesRoot(kSource + "/fixtures"), true);

class MeasureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("measure_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "reads");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Stream(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "reads" / name) << text;
  }
  Json Read(const std::vector<std::string>& argv, const std::string& out,
            const std::string& outcome = "ok") {
    bool ok = outcome == "ok";
    return {{"argv", argv},
            {"exit_code", ok ? 0 : (outcome == "timed_out" ? -1 : 1)},
            {"outcome", outcome},
            {"duration_ms", 5},
            {"timed_out", outcome == "timed_out"},
            {"stdout_file", "reads/" + out},
            {"stderr_file", "reads/empty"},
            {"cause", ok ? "" : "sacct " + outcome}};
  }
  // A bundle with a baseline at -1 and snapshots at 5 and 30: the controller's log shows the
  // I/O error from `error_from` on; sacct times out from 30.
  void Write(double error_from, const std::string& id = "S06-state-save-unwritable") {
    Stream("empty", "");
    Stream("log-clean", "[t] slurmctld started\n");
    Stream("log-error", "[t] slurmctld started\n[t] _slurm_rpc_submit_batch_job: I/O error "
                        "writing script/environment to file\n");
    Stream("sacct", "1|research|root|COMPLETED\n");
    const std::vector<std::string> sacct = SignalArgv(Signal{.topic = "accounting"});
    Json snaps = Json::array();
    for (double at : {-1.0, 5.0, 30.0}) {
      Json reads = Json::array();
      reads.push_back(Read({"log", "slurmctld"}, at >= error_from ? "log-error" : "log-clean"));
      reads.push_back(at >= 30 ? Read(sacct, "empty", "timed_out") : Read(sacct, "sacct"));
      snaps.push_back({{"offset_seconds", at}, {"taken_at", "2026-11-30T12:00:00Z"},
                       {"reads", reads}});
    }
    Json m = {{"format", mcp::kEvidenceBundleFormat2},
              {"slurm_version", "22.05.8"},
              {"scenario", id},
              {"recorded_at", "2026-11-30T12:00:00Z"},
              {"trials", {{"count", 3}}},
              {"snapshots", snaps}};
    std::ofstream(dir_ / "manifest.json") << m.dump(2);
  }
  Scenario S06() {
    LoadResult r = LoadScenarioFile(kSource + "/scenarios/S06-state-save-unwritable/scenario.yaml");
    EXPECT_TRUE(r.scenario);
    return *r.scenario;
  }

  fs::path dir_;
};

TEST_F(MeasureTest, AHopWhoseSignalAppearsAfterTheFaultIsMeasured) {
  Write(5);
  Measurement m = MeasureScenario(S06(), dir_.string());
  ASSERT_TRUE(m.error.empty()) << m.error;
  EXPECT_EQ(m.trials, 3);
  ASSERT_EQ(m.hops.size(), 1u);
  EXPECT_TRUE(m.hops[0].measured) << m.hops[0].detail;
  EXPECT_NE(m.hops[0].detail.find("I/O error"), std::string::npos);
  EXPECT_TRUE(MeasurementProblems(S06(), m).empty());
}

TEST_F(MeasureTest, EvidenceAlreadyThereBeforeTheFaultIsNotMeasured) {
  Write(-1);
  Measurement m = MeasureScenario(S06(), dir_.string());
  ASSERT_EQ(m.hops.size(), 1u);
  EXPECT_FALSE(m.hops[0].measured);
  EXPECT_NE(m.hops[0].detail.find("already before the fault"), std::string::npos);
  auto p = MeasurementProblems(S06(), m);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "hop-unmeasured");
}

TEST_F(MeasureTest, EvidenceThatNeverShowsIsNotMeasured) {
  Write(1000);
  Measurement m = MeasureScenario(S06(), dir_.string());
  ASSERT_EQ(m.hops.size(), 1u);
  EXPECT_FALSE(m.hops[0].measured);
  EXPECT_NE(m.hops[0].detail.find("nothing matches"), std::string::npos) << m.hops[0].detail;
}

// A signal scoped to releases is read only on bundles of those releases (22.05.8 here).
TEST_F(MeasureTest, ASignalOfAnotherReleaseIsNotReadAndAHopWithNoneDoesNotHold) {
  Write(5);
  Scenario s = S06();
  ASSERT_FALSE(s.causal_chain[0].signals.empty());
  // Scoped to 22.05, the recording's release: measured as before.
  for (Signal& g : s.causal_chain[0].signals) g.releases = {"22.05"};
  Measurement m = MeasureScenario(s, dir_.string());
  EXPECT_TRUE(m.hops[0].measured) << m.hops[0].detail;
  // Scoped to 25.11 only: nothing describes this recording, and the hop says so.
  for (Signal& g : s.causal_chain[0].signals) g.releases = {"25.11"};
  m = MeasureScenario(s, dir_.string());
  EXPECT_FALSE(m.hops[0].measured);
  EXPECT_NE(m.hops[0].detail.find("no signal of this hop describes Slurm 22.05.8"),
            std::string::npos)
      << m.hops[0].detail;
  // A signal that never shows, scoped away, no longer decides the hop.
  Signal never{.topic = "logs", .match = "no such line", .releases = {"25.11"}};
  s.causal_chain[0].signals = S06().causal_chain[0].signals;
  s.causal_chain[0].signals.push_back(never);
  m = MeasureScenario(s, dir_.string());
  EXPECT_TRUE(m.hops[0].measured) << m.hops[0].detail;
}

// A large-profile scenario's bundle is in the large set for both 22.05 sets, and in no set of
// another release.
TEST(Bundles, ALargeScenarioIsInTheLargeSetForThe2205Sets) {
  ASSERT_TRUE(kRootSet);
  const std::string saved = FixturesRoot();
  SetFixturesRoot("/data/bundles");
  Scenario s;
  s.id = "S40-x";
  EXPECT_EQ(BundleOf(s, kBusySet), "/data/bundles/busy/S40-x");
  s.lab = LabSpec{};
  EXPECT_TRUE(s.Large());
  EXPECT_EQ(BundleOf(s, kBusySet), "/data/bundles/large/S40-x");
  EXPECT_EQ(BundleOf(s, kCleanSet), "/data/bundles/large/S40-x");
  EXPECT_EQ(BundleOf(s, kBusy2511Set), "/data/bundles/busy-25.11/S40-x");
  SetFixturesRoot(saved);
}

TEST(Bundles, EverySetIsUnderTheRootMainSets) {
  ASSERT_TRUE(kRootSet);
  const std::string saved = FixturesRoot();
  SetFixturesRoot("/data/bundles");
  EXPECT_EQ(BundleDir("S01-x", kCleanSet), "/data/bundles/S01-x");
  EXPECT_EQ(BundleDir("S01-x", kBusySet), "/data/bundles/busy/S01-x");
  EXPECT_EQ(BundleDir("S01-x", kBusy2511Set), "/data/bundles/busy-25.11/S01-x");
  SetFixturesRoot(saved);
  EXPECT_EQ(BundleDir("S01-x", kCleanSet), kSource + "/fixtures/S01-x");
}

TEST(Signal, AppliesToItsReleasesByPrefix) {
  Signal any;
  EXPECT_TRUE(any.AppliesTo("25.11.4"));
  EXPECT_TRUE(any.AppliesTo(""));
  Signal s{.releases = {"25.11"}};
  EXPECT_TRUE(s.AppliesTo("25.11.4"));
  EXPECT_TRUE(s.AppliesTo("25.11"));
  EXPECT_FALSE(s.AppliesTo("25.1"));
  EXPECT_FALSE(s.AppliesTo("22.05.8"));
  EXPECT_FALSE(s.AppliesTo("25.111.0"));
  EXPECT_FALSE(s.AppliesTo(""));
}

TEST_F(MeasureTest, ALaterHopIsCheckedAtItsOwnOffset) {
  Write(5);
  Scenario s = S06();
  Hop later;
  later.node = "slurm.slurmdbd";
  later.observable_at_s = 10;  // sacct still answers at 10 (the snapshot of 5 s is served)
  later.signals.push_back(Signal{.topic = "accounting", .outcome = "timed_out"});
  s.causal_chain.push_back(later);
  Measurement m = MeasureScenario(s, dir_.string());
  ASSERT_EQ(m.hops.size(), 2u);
  EXPECT_FALSE(m.hops[1].measured) << m.hops[1].detail;
  s.causal_chain[1].observable_at_s = 30;
  m = MeasureScenario(s, dir_.string());
  EXPECT_TRUE(m.hops[1].measured) << m.hops[1].detail;
  // The root hop at 0 must show by the next timed hop: the log error shows from 5.
  EXPECT_TRUE(m.hops[0].measured) << m.hops[0].detail;
}

TEST_F(MeasureTest, ARedHerringIsMeasuredLikeAHop) {
  Write(5);
  Scenario s = S06();
  RedHerring rh;
  rh.shown.node = "slurm.slurmdbd";
  rh.shown.observable_at_s = 30;  // sacct times out from 30: a real anomaly, not the cause
  rh.shown.signals.push_back(Signal{.topic = "accounting", .outcome = "timed_out"});
  rh.why = "accounting has no part in submitting a job";
  s.red_herrings.push_back(rh);
  Measurement m = MeasureScenario(s, dir_.string());
  ASSERT_EQ(m.herrings.size(), 1u);
  EXPECT_TRUE(m.herrings[0].measured) << m.herrings[0].detail;
  EXPECT_TRUE(m.AllMeasured());
  EXPECT_TRUE(MeasurementProblems(s, m).empty());
  // Shown at 5 s it is not: sacct still answers there.
  s.red_herrings[0].shown.observable_at_s = 5;
  m = MeasureScenario(s, dir_.string());
  EXPECT_FALSE(m.herrings[0].measured);
  EXPECT_FALSE(m.AllMeasured());
  auto p = MeasurementProblems(s, m);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "herring-unmeasured");
}

TEST_F(MeasureTest, FewestCallsCountDistinctReadsWithTheOverviewAsOne) {
  Write(5);
  Scenario s = S06();
  Measurement m = MeasureScenario(s, dir_.string());
  EXPECT_EQ(MinimumCalls(s, m), 1);  // the controller's log
  // queue and nodes bare come together in one slurm_overview; accounting is its own call.
  s.causal_chain[0].signals.push_back(Signal{.topic = "queue"});
  s.causal_chain[0].signals.push_back(Signal{.topic = "nodes"});
  s.causal_chain[0].signals.push_back(Signal{.topic = "accounting"});
  s.causal_chain[0].signals.push_back(Signal{.topic = "logs"});  // the same read as the first
  Hop h;
  h.node = "slurm.slurmctld";
  h.signals.push_back(Signal{.topic = "queue"});
  s.causal_chain.push_back(h);
  std::vector<HopResult> hops = {{1, "storage.state_save", true, ""}, {2, "slurm.slurmctld", true, ""}};
  const auto queue = mcp::DefaultArgv(*mcp::FindTopic("queue"));
  const auto nodes = mcp::DefaultArgv(*mcp::FindTopic("nodes"));
  hops[0].shown_by_overview = {queue, nodes};
  hops[1].shown_by_overview = {queue};
  m.hops = hops;
  EXPECT_EQ(MinimumCalls(s, m), 3);
  // A signal the overview's summary does not show (a row-level match) needs its slurm_query.
  m.hops[1].shown_by_overview.clear();
  EXPECT_EQ(MinimumCalls(s, m), 4);  // log, accounting, overview (nodes), queue
  m.hops[1].shown_by_overview = {queue};
  // A hop the bundle does not measure: no figure.
  m.hops[1].measured = false;
  EXPECT_EQ(MinimumCalls(s, m), std::nullopt);
}

TEST_F(MeasureTest, ABundleOfAnotherScenarioIsRefused) {
  Write(5, "S99-other");
  Measurement m = MeasureScenario(S06(), dir_.string());
  EXPECT_NE(m.error.find("S99-other"), std::string::npos) << m.error;
  auto p = MeasurementProblems(S06(), m);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "bundle-missing");
}

TEST_F(MeasureTest, NoBundleIsBundleMissingAndABlockedScenarioMustHaveNone) {
  Measurement none = MeasureScenario(S06(), (dir_ / "nothing").string());
  auto p = MeasurementProblems(S06(), none);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "bundle-missing");
  Scenario blocked = S06();
  blocked.status = "blocked";
  EXPECT_TRUE(MeasurementProblems(blocked, none).empty());
  Write(5);
  p = MeasurementProblems(blocked, MeasureScenario(blocked, dir_.string()));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "blocked-measured");
}

// The shipped suite: every runnable scenario has a bundle in each set (busy, the default, and
// clean) that replays and measures every hop.
class ShippedSuiteSet : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(BothSets, ShippedSuiteSet,
                         ::testing::Values(std::string(kBusySet), std::string(kCleanSet)));

TEST_P(ShippedSuiteSet, EveryRunnableScenarioIsMeasuredByItsBundle) {
  Suite suite = LoadSuite(ScenarioPaths(kSource + "/scenarios"));
  ASSERT_GE(suite.scenarios.size(), 20u);
  for (const Scenario& s : suite.scenarios) {
    if (s.status != "runnable") continue;
    std::string dir = BundleOf(s, GetParam());
    auto replay = mcp::ReplayBackend::Open(dir);
    ASSERT_TRUE(replay.ok()) << s.id << ": " << replay.status().message();
    EXPECT_GE((*replay)->snapshots().size(), 3u) << s.id;
    Measurement m = MeasureScenario(s, dir);
    EXPECT_EQ(m.trials, 3) << s.id;
    for (const HopResult& h : m.hops) {
      EXPECT_TRUE(h.measured) << s.id << " hop " << h.hop << ": " << h.detail;
    }
    for (const HopResult& h : m.herrings) {
      EXPECT_TRUE(h.measured) << s.id << " herring " << h.hop << ": " << h.detail;
    }
    // A busy bundle says so (and its seed); a clean one names no background. Each is one file.
    EXPECT_EQ(mcp::LocateBundle(dir).kind, mcp::BundleLocation::Kind::kPack) << s.id;
    base::Result<mcp::BundleFiles> files = mcp::ReadBundle(dir);
    ASSERT_TRUE(files.ok()) << s.id << ": " << files.status().message();
    nlohmann::json manifest = nlohmann::json::parse(files->at("manifest.json"), nullptr, false);
    ASSERT_FALSE(manifest.is_discarded()) << s.id;
    if (s.Large()) {
      EXPECT_EQ(manifest.value("profile", ""), "large") << s.id;
      EXPECT_NE(manifest.value("comment", "").find(std::to_string(s.lab->nodes) + " nodes"),
                std::string::npos)
          << s.id;
    } else if (s.Hosts()) {
      // The lab of hosts' one bundle (its own set, for both 22.05 sets) is of the busy profile.
      EXPECT_EQ(manifest.value("profile", ""), "busy") << s.id;
      EXPECT_NE(manifest.value("comment", "").find("lab of hosts"), std::string::npos) << s.id;
    } else if (GetParam() == kBusySet) {
      EXPECT_EQ(manifest.value("profile", ""), "busy") << s.id;
      EXPECT_TRUE(manifest.contains("seed")) << s.id;
    } else {
      EXPECT_NE(manifest.value("profile", "clean"), "busy") << s.id;
    }
  }
}

// The 25.11 set: every bundle was recorded on 25.11 under the busy profile and is a task of the
// suite; each measures every hop, except a task that says its evidence does not show on 25.11
// (its bundle, kept as the evidence of that claim, must indeed leave a hop unmeasured). The 72
// tasks of 2026-12-02 are recorded; the 36 variants added on 2026-12-03 are not yet (the set is
// cut to what it holds, and says so: cli/common.cc CutToRecorded), so the count only ratchets up.
TEST(ShippedSuite, EveryBundleOfThe2511SetMeasuresEveryHopAndIsA2511Recording) {
  Suite suite = LoadSuite(ScenarioPaths(kSource + "/scenarios"));
  EXPECT_EQ(BundleSetRelease(kBusy2511Set), "25.11");
  EXPECT_EQ(BusySetOfRelease("25.11"), kBusy2511Set);
  EXPECT_EQ(BusySetOfRelease("22.05"), kBusySet);
  EXPECT_EQ(BusySetOfRelease("21.08"), "");
  int recorded = 0;
  for (const Scenario& s : suite.scenarios) {
    if (s.status != "runnable" || !RecordedIn(s, kBusy2511Set)) continue;
    ++recorded;
    std::string dir = BundleDir(s.id, kBusy2511Set);
    Measurement m = MeasureScenario(s, dir);
    EXPECT_TRUE(m.error.empty()) << s.id << ": " << m.error;
    EXPECT_EQ(m.trials, 3) << s.id;
    EXPECT_EQ(m.AllMeasured(), s.NotShownOn("25.11").empty()) << s.id;
    EXPECT_TRUE(MeasurementProblems(s, m).empty()) << s.id;
    base::Result<mcp::BundleFiles> files = mcp::ReadBundle(dir);
    ASSERT_TRUE(files.ok()) << s.id << ": " << files.status().message();
    nlohmann::json manifest = nlohmann::json::parse(files->at("manifest.json"), nullptr, false);
    ASSERT_FALSE(manifest.is_discarded()) << s.id;
    EXPECT_EQ(manifest.value("slurm_version", "").rfind("25.11.", 0), 0u) << s.id;
    EXPECT_EQ(manifest.value("profile", ""), "busy") << s.id;
  }
  // Every bundle in the directory belongs to a scenario of the suite, and each is one pack.
  int bundles = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/fixtures/" + kBusy2511Set)) {
    EXPECT_FALSE(e.is_directory()) << e.path() << ": a bundle directory (rca-bench bundle pack)";
    const std::string name = e.path().filename().string();
    bundles += name.size() > std::string(mcp::kBundlePackSuffix).size() &&
               name.substr(name.size() - std::string(mcp::kBundlePackSuffix).size()) ==
                   mcp::kBundlePackSuffix;
  }
  EXPECT_EQ(bundles, recorded);
  constexpr int kRecordedOn2511 = 72;
  EXPECT_GE(recorded, kRecordedOn2511);
}

// A variant whose evidence does not show on a release says so (not_shown_on): S28@outage-50 on
// 25.11, where the nodes re-register within 10 s of munged's return. The claim is checked: the
// same claim against a release whose bundle shows every hop is a problem.
TEST(ShippedSuite, ATaskNotShownOnAReleaseIsCheckedNotForced) {
  Suite suite = LoadSuite(ScenarioPaths(kSource + "/scenarios"));
  const Scenario* s = nullptr;
  for (const Scenario& x : suite.scenarios) {
    if (x.id == "S28-auth-outage-nodes-down@outage-50") s = &x;
  }
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->NotShownOn("25.11").empty());
  EXPECT_FALSE(s->NotShownOn("25.11.4").empty());
  EXPECT_EQ(s->NotShownOn("22.05"), "");
  EXPECT_EQ(s->NotShownOn("25.1"), "");
  Measurement on_2511 = MeasureScenario(*s, BundleDir(s->id, kBusy2511Set));
  EXPECT_FALSE(on_2511.AllMeasured());
  EXPECT_TRUE(MeasurementProblems(*s, on_2511).empty());
  Scenario stale = *s;
  stale.not_shown_on = {{"22.05", "claimed for the test"}};
  Measurement on_2205 = MeasureScenario(stale, BundleDir(s->id, kBusySet));
  ASSERT_TRUE(on_2205.AllMeasured());
  std::vector<Problem> p = MeasurementProblems(stale, on_2205);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].rule, "not-shown-measured");
}

TEST(ShippedSuite, TheAgentViewCarriesOnlyTaskIdsAndTickets) {
  Suite suite = LoadSuite(ScenarioPaths(kSource + "/scenarios"));
  auto m = MeasureSuite(suite.scenarios);
  auto agent = ExportView(suite.scenarios, m, View::kAgent);
  std::string text = agent.dump();
  for (const auto& item : agent) {
    ASSERT_EQ(item.size(), 2u);
    EXPECT_EQ(item["task_id"].get<std::string>().rfind("T-", 0), 0u);
    EXPECT_FALSE(item["symptom"].get<std::string>().empty());
  }
  for (const Scenario& s : suite.scenarios) {
    EXPECT_EQ(text.find(s.id), std::string::npos) << s.id;
    EXPECT_EQ(text.find(s.canary), std::string::npos) << s.id;
    EXPECT_EQ(text.find(s.title), std::string::npos) << s.id;
  }
  for (const char* word : {"undiagnosable", "root_cause", "multi_layer", "difficulty"}) {
    EXPECT_EQ(text.find(word), std::string::npos) << word;
  }
  auto scorer = ExportView(suite.scenarios, m, View::kScorer);
  ASSERT_EQ(scorer.size(), suite.scenarios.size());
  EXPECT_EQ(scorer[0]["root_cause"], suite.scenarios[0].RootCause());
  EXPECT_EQ(scorer[0]["task_id"], suite.scenarios[0].TaskId());
}

}  // namespace
}  // namespace slurm_rca::scenarios

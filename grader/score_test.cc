// score_test: the strict submission parser (a corpus of broken submissions, each with the line
// and the error it must produce) and scores computed by hand on a small fixed suite.
#include "grader/score.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/measure.h"
#include "scenarios/validate.h"
#include "testing/corpus.h"

namespace slurm_rca::grader {
namespace {

namespace fs = std::filesystem;
namespace sc = scenarios;
const std::string kSource = SLURM_RCA_SOURCE_DIR;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at; (at = text.find(from)) != std::string::npos;) text.replace(at, from.size(), to);
  return text;
}

TEST(Submissions, TheFingerprintNamesTheGraphAndTheEvidence) {
  sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(kSource + "/scenarios"));
  const std::string a = SuiteFingerprint(suite.scenarios, "sha256:aaaaaaaaaaaaaaaa", "busy");
  EXPECT_EQ(a, SuiteFingerprint(suite.scenarios, "sha256:aaaaaaaaaaaaaaaa", "busy"));
  // Another graph, or the other set of bundles, is another suite.
  EXPECT_NE(a, SuiteFingerprint(suite.scenarios, "sha256:bbbbbbbbbbbbbbbb", "busy"));
  EXPECT_NE(a, SuiteFingerprint(suite.scenarios, "sha256:aaaaaaaaaaaaaaaa", "clean"));
  // The one-argument form uses the digest main set (the shipped graph's, here) and the default
  // bundle set; a graph that cannot be read matches no readable one.
  std::ifstream in(kSource + "/agents/graph/graph.yaml");
  std::stringstream graph;
  graph << in.rdbuf();
  EXPECT_EQ(GraphDigestOfFile(kSource + "/agents/graph/graph.yaml"), GraphDigest(graph.str()));
  EXPECT_EQ(GraphDigestOfFile(kSource + "/no/such/graph.yaml"), "unreadable");
  SetGraphDigest(GraphDigest(graph.str()));
  EXPECT_EQ(CurrentGraphDigest(), GraphDigest(graph.str()));
  EXPECT_EQ(SuiteFingerprint(suite.scenarios),
            SuiteFingerprint(suite.scenarios, GraphDigest(graph.str()), sc::DefaultBundleSet()));
  EXPECT_NE(GraphDigest(graph.str()), GraphDigest(graph.str() + "\n# changed\n"));
  // A scenario's split is part of it.
  std::vector<sc::Scenario> moved = suite.scenarios;
  moved[0].split = moved[0].split == "dev" ? "test" : "dev";
  EXPECT_NE(SuiteFingerprint(moved, "sha256:aaaaaaaaaaaaaaaa", "busy"), a);
}

// Through the one corpus runner (testing/corpus.h): each NAME.jsonl's sidecar NAME.expect names
// its problems (line and message text: submissions have no rule ids), exactly. @FINGERPRINT@ in
// a file stands for this suite's fingerprint, so that only the broken part is wrong.
TEST(Submissions, BrokenCorpusGivesItsErrorAndScoresNothing) {
  sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(kSource + "/scenarios"));
  ASSERT_TRUE(suite.problems.empty());
  std::string fp = SuiteFingerprint(suite.scenarios);
  base::CorpusReport report =
      base::RunCorpus({.path = kSource + "/grader/testdata/broken",
                       .layout = base::CorpusLayout::kSidecar,
                       .extension = ".jsonl"},
                      [&](const base::CorpusCase& c) {
                        std::string text = Replace(ReadFile(c.path), "@FINGERPRINT@", fp);
                        ParsedSubmission p = ParseSubmission(text, c.name, suite.scenarios);
                        EXPECT_FALSE(p.submission) << c.path;
                        return p.problems;
                      });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 12u);
}

TEST(Submissions, AValidSubmissionOfTheRealSuiteParses) {
  sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(kSource + "/scenarios"));
  std::string text = "{\"configuration\": \"B\", \"configuration_hash\": \"x\", \"model\": \"m\", "
                     "\"suite_fingerprint\": \"" + SuiteFingerprint(suite.scenarios) +
                     "\", \"date\": \"2026-11-30\"}\n"
                     "{\"scenario_id\": \"T-8018cbddf2\", \"root_cause\": \"db.mysql\", "
                     "\"confidence\": 0.8, \"time_to_hypothesis_s\": 30}\n";
  ParsedSubmission p = ParseSubmission(text, "x.jsonl", suite.scenarios);
  for (const auto& q : p.problems) ADD_FAILURE() << q.ToString();
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite.scenarios);
  EXPECT_EQ(r.answered, 1);
  EXPECT_EQ(r.missing, r.scenarios - 1);
  EXPECT_NEAR(r.depth, 1.0 / r.scenarios, 1e-12);
  EXPECT_LT(r.depth, r.floor_depth);  // one right answer is below the floor
  ASSERT_TRUE(r.self_reported_time_s);
  EXPECT_NEAR(*r.self_reported_time_s, 30, 1e-12);
}

// A small fixed suite: S01 (db.mysql, with action and ruled_out ground truth), S02
// (undiagnosable), S03 (blocked).
std::vector<sc::Scenario> SmallSuite() {
  auto make = [](std::string id, std::string canary, std::string family, std::string difficulty,
                 std::vector<std::pair<std::string, double>> credits) {
    sc::Scenario s;
    s.id = std::move(id);
    s.canary = std::move(canary);
    s.family = std::move(family);
    s.difficulty = std::move(difficulty);
    for (auto& [n, c] : credits) s.scoring.push_back({n, c, "why", 0});
    return s;
  };
  std::vector<sc::Scenario> suite;
  suite.push_back(make("S01-a", "11111111-1111-1111-1111-111111111111", "accounting_db",
                       "multi_layer", {{"db.mysql", 1.0}, {"slurm.slurmdbd", 0.2}, {"unknown", 0.05}}));
  suite[0].remediation_helpful = std::vector<sc::Item>{{"repair:db.mysql", 0}};
  suite[0].harmful_actions = {{"restart:slurm.slurmctld", 0}};
  suite[0].ruled_out = {{"slurm.slurmd", "jobs run", 0}};
  suite.push_back(make("S02-b", "22222222-2222-2222-2222-222222222222", "controller",
                       "undiagnosable", {{"unknown", 1.0}, {"slurm.slurmd", 0.15}}));
  suite.push_back(make("S03-c", "33333333-3333-3333-3333-333333333333", "gpu", "single_layer",
                       {{"gpu.device", 1.0}}));
  suite[2].status = "blocked";
  return suite;
}

std::string Header(const std::vector<sc::Scenario>& suite) {
  return "{\"configuration\": \"A\", \"configuration_hash\": \"h\", \"model\": \"m\", "
         "\"suite_fingerprint\": \"" + SuiteFingerprint(suite) + "\", \"date\": \"2026-11-30\"}\n";
}

TEST(Scores, HandComputedOneRightOneMissing) {
  auto suite = SmallSuite();
  std::string text = Header(suite) +
                     "{\"scenario_id\": \"S01-a\", \"root_cause\": \"db.mysql\", \"confidence\": 0.8, "
                     "\"ruled_out\": [\"slurm.slurmd\", \"db.mysql\"], \"actions_proposed\": "
                     "[\"repair:db.mysql\", \"restart:slurm.slurmctld\", \"drain:slurm.slurmd\"]}\n";
  ParsedSubmission p = ParseSubmission(text, "x", suite);
  for (const auto& q : p.problems) ADD_FAILURE() << q.ToString();
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite);
  EXPECT_EQ(r.scenarios, 2);
  EXPECT_EQ(r.answered, 1);
  EXPECT_EQ(r.missing, 1);
  EXPECT_NEAR(r.depth, 0.5, 1e-9);
  EXPECT_NEAR(*r.brier_exact, 0.04, 1e-9);
  EXPECT_NEAR(*r.brier_partial, 0.04, 1e-9);
  EXPECT_NEAR(*r.ece, 0.2, 1e-9);
  EXPECT_EQ(r.reliability[8].count, 1);
  EXPECT_EQ(r.actions_helpful, 1);
  EXPECT_EQ(r.actions_harmful, 1);
  EXPECT_EQ(r.actions_useless, 1);
  EXPECT_EQ(r.ruled_out_given, 2);
  EXPECT_EQ(r.ruled_out_right, 1);
  EXPECT_EQ(r.ruled_out_true_cause, 1);
  EXPECT_NEAR(r.depth_by_family.at("accounting_db"), 1.0, 1e-9);
  EXPECT_NEAR(r.depth_by_family.at("controller"), 0.0, 1e-9);
  EXPECT_EQ(r.depth_by_family.count("gpu"), 0u);  // blocked: not scored
}

TEST(Scores, DepthIsSplitByTheLabATaskWasRecordedOn) {
  auto suite = SmallSuite();
  suite[1].lab = sc::LabSpec{};  // S02-b on the large lab
  std::string text = Header(suite) +
                     "{\"scenario_id\": \"S01-a\", \"root_cause\": \"db.mysql\", "
                     "\"confidence\": 0.8}\n{\"scenario_id\": \"" + suite[1].TaskId() +
                     "\", \"root_cause\": \"slurm.slurmd\", \"confidence\": 0.5}\n";
  ParsedSubmission p = ParseSubmission(text, "x", suite);
  for (const auto& q : p.problems) ADD_FAILURE() << q.ToString();
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite);
  ASSERT_EQ(r.depth_by_lab.size(), 2u);
  EXPECT_NEAR(r.depth_by_lab.at("4-node"), 1.0, 1e-9);
  EXPECT_NEAR(r.depth_by_lab.at("large"), 0.15, 1e-9);
  EXPECT_EQ(r.scenarios_by_lab.at("4-node"), 1);
  EXPECT_EQ(r.scenarios_by_lab.at("large"), 1);  // S03-c is blocked: not counted
  std::string text_report = RenderReport(*p.submission, r);
  EXPECT_NE(text_report.find("depth by lab:   4-node 1.000 (1) large 0.150 (1)"),
            std::string::npos) << text_report;
  EXPECT_NEAR(ReportJson(*p.submission, r)["depth_by_lab"]["large"].get<double>(), 0.15, 1e-9);

  // A suite with no large task prints no such line.
  auto small = SmallSuite();
  ParsedSubmission q = ParseSubmission(Header(small), "y", small);
  ASSERT_TRUE(q.submission);
  Report none = Score(*q.submission, small);
  EXPECT_EQ(none.depth_by_lab.size(), 1u);
  EXPECT_EQ(RenderReport(*q.submission, none).find("depth by lab"), std::string::npos);
}

TEST(Scores, HandComputedPartialCreditAndCalibration) {
  auto suite = SmallSuite();
  std::string text = Header(suite) +
                     "{\"scenario_id\": \"S01-a\", \"root_cause\": \"slurm.slurmdbd\", "
                     "\"confidence\": 0.5}\n"
                     "{\"scenario_id\": \"" + suite[1].TaskId() +
                     "\", \"root_cause\": \"unknown\", \"confidence\": 0.9}\n";
  ParsedSubmission p = ParseSubmission(text, "x", suite);
  for (const auto& q : p.problems) ADD_FAILURE() << q.ToString();
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite);
  EXPECT_NEAR(r.depth, 0.6, 1e-9);
  EXPECT_NEAR(*r.brier_exact, 0.13, 1e-9);    // (0.5-0)^2 + (0.9-1)^2, over 2
  EXPECT_NEAR(*r.brier_partial, 0.05, 1e-9);  // (0.5-0.2)^2 + (0.9-1)^2, over 2
  EXPECT_NEAR(*r.ece, 0.3, 1e-9);             // 0.5*|0.5-0| + 0.5*|0.9-1|
  EXPECT_EQ(r.correct, 1);
}

TEST(Scores, ANeverRightAnswerAtZeroConfidenceDoesNotLookGoodBesideDepth) {
  auto suite = SmallSuite();
  std::string text = Header(suite) +
                     "{\"scenario_id\": \"S01-a\", \"root_cause\": \"gpu.device\", \"confidence\": 0}\n"
                     "{\"scenario_id\": \"S02-b\", \"root_cause\": \"gpu.device\", \"confidence\": 0}\n";
  ParsedSubmission p = ParseSubmission(text, "x", suite);
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite);
  EXPECT_NEAR(*r.brier_exact, 0.0, 1e-12);  // "perfect" against exact correctness ...
  EXPECT_NEAR(r.depth, 0.0, 1e-12);         // ... which is why it is printed beside depth
  EXPECT_NE(RenderReport(*p.submission, r).find("never alone"), std::string::npos);
}

TEST(Scores, AnswersToBlockedScenariosAreRefused) {
  auto suite = SmallSuite();
  std::string text = Header(suite) +
                     "{\"scenario_id\": \"S03-c\", \"root_cause\": \"gpu.device\", \"confidence\": 1}\n";
  ParsedSubmission p = ParseSubmission(text, "x", suite);
  EXPECT_FALSE(p.submission);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_EQ(p.problems[0].line, 2);
  EXPECT_NE(p.problems[0].message.find("blocked"), std::string::npos);
}

TEST(Scores, TheOracleScoresOneAndAnEmptySubmissionIsBelowTheFloor) {
  sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(kSource + "/scenarios"));
  std::string oracle = Header(suite.scenarios);
  for (const sc::Scenario& s : suite.scenarios) {
    oracle += "{\"scenario_id\": \"" + s.TaskId() + "\", \"root_cause\": \"" + s.RootCause() +
              "\", \"confidence\": 1}\n";
  }
  ParsedSubmission p = ParseSubmission(oracle, "oracle", suite.scenarios);
  ASSERT_TRUE(p.submission);
  Report r = Score(*p.submission, suite.scenarios);
  EXPECT_NEAR(r.depth, 1.0, 1e-12);
  EXPECT_NEAR(*r.brier_exact, 0.0, 1e-12);
  ParsedSubmission empty = ParseSubmission(Header(suite.scenarios), "empty", suite.scenarios);
  ASSERT_TRUE(empty.submission);
  Report e = Score(*empty.submission, suite.scenarios);
  EXPECT_EQ(e.missing, e.scenarios);
  EXPECT_LT(e.depth, e.floor_depth);
  EXPECT_FALSE(e.brier_exact);  // nothing answered: no calibration figure, not a perfect one
}

}  // namespace
}  // namespace slurm_rca::grader

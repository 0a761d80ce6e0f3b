// baselines_test: the degenerate baselines, computed by hand on a two-scenario suite, and the
// gate on the shipped suite: no constant answer, abstention included, reaches 0.20, on the whole
// suite and on its test split; and the suite holds at least 36 runnable tasks.
#include "grader/baselines.h"

#include <gtest/gtest.h>

#include "scenarios/validate.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::grader {
namespace {

namespace sc = scenarios;
const std::string kSource = SLURM_RCA_SOURCE_DIR;

sc::Scenario Make(std::string id, std::vector<std::pair<std::string, double>> credits,
                  std::string status = "runnable") {
  sc::Scenario s;
  s.id = std::move(id);
  s.status = std::move(status);
  for (auto& [node, c] : credits) s.scoring.push_back({node, c, "why", 0});
  return s;
}

const Baseline& Find(const std::vector<Baseline>& b, const std::string& name) {
  for (const Baseline& x : b) {
    if (x.name == name) return x;
  }
  static Baseline none;
  ADD_FAILURE() << "no baseline " << name;
  return none;
}

TEST(Baselines, HandComputedOnTwoScenarios) {
  std::vector<sc::Scenario> suite = {
      Make("S01-a", {{"db.mysql", 1.0}, {"slurm.slurmdbd", 0.2}, {"unknown", 0.05}}),
      Make("S02-b", {{"unknown", 1.0}, {"slurm.slurmd", 0.15}}),
      Make("S03-c", {{"gpu.device", 1.0}}, "blocked"),
  };
  auto b = ComputeBaselines(suite);
  EXPECT_NEAR(Find(b, "always-db.mysql").depth, 0.5, 1e-12);
  EXPECT_NEAR(*Find(b, "always-db.mysql").brier, 0.25, 1e-12);  // k=1 of 2
  EXPECT_NEAR(Find(b, "always-abstain").depth, (0.05 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(Find(b, "always-slurm.slurmdbd").depth, 0.1, 1e-12);
  EXPECT_NEAR(*Find(b, "always-slurm.slurmdbd").brier, 0.0, 1e-12);  // never right, p = 0
  EXPECT_NEAR(Find(b, "always-gpu.device").depth, 0.0, 1e-12);  // S03 is blocked
  double k = static_cast<double>(sc::Components().size());
  EXPECT_NEAR(Find(b, "uniform-random").depth, ((1.25 / k) + (1.15 / k)) / 2, 1e-12);
  EXPECT_NEAR(Find(b, "oracle").depth, 1.0, 1e-12);
  EXPECT_EQ(b.back().name, "oracle");
  EXPECT_EQ(b.front().name, "always-abstain");  // 0.525, then db.mysql 0.5
  auto with_blocked = ComputeBaselines(suite, true);
  EXPECT_NEAR(Find(with_blocked, "always-gpu.device").depth, 1.0 / 3, 1e-12);
  EXPECT_TRUE(ComputeBaselines({}).empty());
  EXPECT_EQ(Degenerate(b).size(), 1u);  // always-db.mysql at 0.5; abstain is not counted
  EXPECT_EQ(Degenerate(b, 0.20, /*with_abstain=*/true).size(), 2u);  // and abstain at 0.525
}

class ShippedSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(kSource + "/scenarios"));
    ASSERT_TRUE(suite.problems.empty());
    scenarios_ = suite.scenarios;
    baselines_ = ComputeBaselines(scenarios_);
  }
  std::vector<sc::Scenario> scenarios_;
  std::vector<Baseline> baselines_;
};

// The gate: a suite where answering the same thing every time scores 0.20 or more measures the
// suite, not the agent. Fix it with honest scenarios and variants whose causes lie elsewhere,
// never by lowering credit that a scenario's evidence earns.
TEST_F(ShippedSuite, NoConstantAnswerReachesTheFloorGate) {
  for (const Baseline& b : Degenerate(baselines_, 0.20, /*with_abstain=*/true)) {
    ADD_FAILURE() << b.name << " scores " << b.depth << " on the runnable suite";
  }
  // The leaderboard ranks on the test split: its floor must hold too.
  std::vector<sc::Scenario> test;
  for (const sc::Scenario& s : scenarios_) {
    if (s.split == "test") test.push_back(s);
  }
  ASSERT_FALSE(test.empty());
  std::vector<Baseline> tb = ComputeBaselines(test);
  for (const Baseline& b : Degenerate(tb, 0.20, /*with_abstain=*/true)) {
    ADD_FAILURE() << b.name << " scores " << b.depth << " on the test split";
  }
}

TEST_F(ShippedSuite, HoldsAtLeastThirtySixRunnableTasks) {
  int runnable = 0;
  for (const sc::Scenario& s : scenarios_) runnable += s.status == "runnable";
  EXPECT_GE(runnable, 36);
}

TEST_F(ShippedSuite, TheOracleScoresOneAndRandomAndAbstentionStayLow) {
  EXPECT_NEAR(Find(baselines_, "oracle").depth, 1.0, 1e-12);
  EXPECT_LT(Find(baselines_, "uniform-random").depth, 0.15);
  double abstain = Find(baselines_, "always-abstain").depth;
  EXPECT_GT(abstain, 0.1);
  EXPECT_LT(abstain, 0.4);
  EXPECT_GT(Find(baselines_, "oracle").depth - baselines_.front().depth, 0.5);
}

}  // namespace
}  // namespace slurm_rca::grader

// leaderboard_test: runs of one configuration aggregate as mean ± standard error; another
// suite's submission and a broken one are refused, not mixed in.
#include "grader/leaderboard.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "scenarios/validate.h"

namespace slurm_rca::grader {
namespace {

namespace fs = std::filesystem;
namespace sc = scenarios;

TEST(Leaderboard, RunsAggregateAsMeanAndStandardErrorAndOtherSuitesAreRefused) {
  sc::Suite suite =
      sc::LoadSuite(sc::ScenarioPaths(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios"));
  ASSERT_TRUE(suite.problems.empty());
  int n = 0;
  for (const auto& s : suite.scenarios) n += s.status == "runnable";
  std::string fp = SuiteFingerprint(suite.scenarios);
  fs::path dir = fs::temp_directory_path() / ("leaderboard_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto header = [&](const std::string& config, const std::string& fingerprint) {
    return "{\"configuration\": \"" + config + "\", \"configuration_hash\": \"h-" + config +
           "\", \"model\": \"m\", \"suite_fingerprint\": \"" + fingerprint +
           "\", \"date\": \"2026-11-30\"}\n";
  };
  // Configuration A: one run right on k scenarios, for k = 1, 2, 3 (depth k / n).
  for (int k = 1; k <= 3; ++k) {
    std::string text = header("A", fp);
    int done = 0;
    for (const auto& s : suite.scenarios) {
      if (done == k) break;
      text += "{\"scenario_id\": \"" + s.TaskId() + "\", \"root_cause\": \"" + s.RootCause() +
              "\", \"confidence\": 1}\n";
      ++done;
    }
    std::ofstream(dir / ("a" + std::to_string(k) + ".jsonl")) << text;
  }
  std::ofstream(dir / "b.jsonl") << header("B", fp);  // answers nothing
  std::ofstream(dir / "old.jsonl") << header("C", "sha256:0000000000000000");
  std::ofstream(dir / "broken.jsonl") << header("D", fp) << "{\"scenario_id\": 7}\n";
  std::ofstream(dir / "notes.txt") << "not a submission\n";

  Leaderboard lb = BuildLeaderboard(dir.string(), suite.scenarios);
  fs::remove_all(dir);
  ASSERT_EQ(lb.rows.size(), 2u);
  const Row& a = lb.rows[0];
  EXPECT_EQ(a.configuration, "A");
  EXPECT_EQ(a.runs, 3);
  EXPECT_NEAR(a.depth_mean, 2.0 / n, 1e-12);
  // Depths 1/n, 2/n, 3/n: sample sd 1/n, SE 1/(n sqrt 3).
  EXPECT_NEAR(a.depth_se, 1.0 / (n * std::sqrt(3.0)), 1e-12);
  EXPECT_EQ(lb.rows[1].configuration, "B");
  EXPECT_EQ(lb.rows[1].calibrated_runs, 0);
  ASSERT_EQ(lb.refused.size(), 2u);
  std::string md = LeaderboardMarkdown(lb);
  EXPECT_NE(md.find("refused: broken.jsonl"), std::string::npos) << md;
  EXPECT_NE(md.find("refused: old.jsonl"), std::string::npos) << md;
  char floor[64];
  std::snprintf(floor, sizeof floor, "floor %.3f (%s", lb.floor_depth, lb.floor_name.c_str());
  EXPECT_NE(md.find(floor), std::string::npos) << md;
  EXPECT_NE(md.find("| A | m | 3 |"), std::string::npos) << md;
  // No transcripts: what the runs read is unmeasured, never 0 bytes.
  EXPECT_NE(md.find("| read to hyp. (median bytes) |"), std::string::npos) << md;
  EXPECT_FALSE(a.harness_bytes_median);
  EXPECT_NE(md.find("| unmeasured | unmeasured |"), std::string::npos) << md;
  // Ranked on the test split, beside its own floor; the split columns are each run's mean.
  EXPECT_TRUE(lb.ranked_on_test);
  EXPECT_GT(lb.test_scenarios, 0);
  EXPECT_NE(md.find("ranked on the test split (" + std::to_string(lb.test_scenarios) +
                    " scenarios"),
            std::string::npos)
      << md;
  ASSERT_TRUE(a.depth_by_split.count("test"));
  ASSERT_TRUE(a.depth_by_split.count("dev"));
  // The first three scenarios (S01 test; S02, S02@gpu-jobs dev) answered right in a3, fewer in a1, a2.
  int dev = 0, test = 0;
  for (const auto& s : suite.scenarios) (s.split == "dev" ? dev : test) += 1;
  double want_test = 0, want_dev = 0;
  for (int k = 1; k <= 3; ++k) {
    for (int i = 0; i < k; ++i) (suite.scenarios[i].split == "dev" ? want_dev : want_test) += 1;
  }
  EXPECT_NEAR(a.depth_by_split.at("test"), want_test / 3 / test, 1e-12);
  EXPECT_NEAR(a.depth_by_split.at("dev"), want_dev / 3 / dev, 1e-12);
  EXPECT_NE(md.find("| configuration | multi_layer |"), std::string::npos) << md;
}

}  // namespace
}  // namespace slurm_rca::grader

// leaderboard_test: runs of one configuration aggregate as mean ± standard error; another
// suite's submission and a broken one are refused, not mixed in.
#include "grader/leaderboard.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "grader/baselines.h"
#include "grader/score.h"
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
  // The tasks of the large lab have their own column and their own floor. A's runs answer only the
  // first three tasks, all on the 4-node lab, so A scores 0 on the large ones.
  int large = 0, hosts = 0;
  for (const auto& s : suite.scenarios) {
    large += s.Large() && s.status == "runnable";
    hosts += s.Hosts() && s.status == "runnable";
  }
  EXPECT_EQ(lb.large_scenarios, large);
  EXPECT_EQ(lb.hosts_scenarios, hosts);
  if (hosts > 0) {
    EXPECT_NE(md.find("on the lab of hosts: " + std::to_string(hosts) + " tasks (their floor "),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| large | hosts |"), std::string::npos) << md;
  }
  EXPECT_NE(md.find("| post-freeze | large |"), std::string::npos) << md;
  if (large > 0) {
    EXPECT_NE(md.find("on the large lab: " + std::to_string(large) + " tasks (their floor "),
              std::string::npos)
        << md;
    ASSERT_TRUE(a.depth_by_lab.count("large"));
    EXPECT_EQ(a.depth_by_lab.at("large"), 0.0);
    EXPECT_NEAR(a.depth_by_lab.at("4-node"), 2.0 / (n - large - hosts), 1e-12);
  }
}

// The bootstrap interval: a known answer, deterministic for a seed, and degenerate inputs.
// With nothing to score, the floor is still the suite's: not 0.000 with no name.
TEST(Leaderboard, AnEmptyDirectoryStillPrintsTheSuitesFloor) {
  sc::Suite suite =
      sc::LoadSuite(sc::ScenarioPaths(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios"));
  ASSERT_TRUE(suite.problems.empty());
  fs::path dir = fs::temp_directory_path() / ("leaderboard_empty_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Leaderboard lb = BuildLeaderboard(dir.string(), suite.scenarios);
  fs::remove_all(dir);
  EXPECT_TRUE(lb.rows.empty());
  std::vector<Baseline> b = ComputeBaselines(suite.scenarios);
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(lb.floor_name, b.front().name);
  EXPECT_NEAR(lb.floor_depth, b.front().depth, 1e-12);
  EXPECT_GT(lb.floor_depth, 0.1);
  std::string md = LeaderboardMarkdown(lb);
  char floor[32];
  std::snprintf(floor, sizeof floor, "; floor %.3f (", b.front().depth);
  EXPECT_NE(md.find(floor), std::string::npos) << md;
  EXPECT_NE(md.find("(" + b.front().name + ", an answer that reads nothing)"), std::string::npos) << md;
  EXPECT_NE(md.find("(no submission could be scored)"), std::string::npos) << md;
}

TEST(Bootstrap, PercentileIntervalIsDeterministicAndKnownOnSimpleData) {
  std::vector<double> flat(50, 0.5);
  EXPECT_EQ(BootstrapInterval(flat, 1, 2000), std::make_pair(0.5, 0.5));
  // 1000 tasks, half right: the mean's SE is 0.5 / sqrt(1000) = 0.0158, so the 95% interval is
  // about 0.5 ± 0.031.
  std::vector<double> half;
  for (int i = 0; i < 1000; ++i) half.push_back(i % 2);
  auto [lo, hi] = BootstrapInterval(half, 7, 2000);
  EXPECT_NEAR(lo, 0.5 - 1.96 * 0.5 / std::sqrt(1000.0), 0.006);
  EXPECT_NEAR(hi, 0.5 + 1.96 * 0.5 / std::sqrt(1000.0), 0.006);
  EXPECT_EQ(BootstrapInterval(half, 7, 2000), std::make_pair(lo, hi));  // same seed, same interval
  EXPECT_NE(BootstrapInterval(half, 8, 2000), std::make_pair(lo, hi));
  EXPECT_EQ(BootstrapInterval({}, 1, 100), std::make_pair(0.0, 0.0));
  auto one = BootstrapInterval({0.25, 0.75}, 3, 1);
  EXPECT_EQ(one.first, one.second);
}

TEST(Agreement, SameRootCauseInEveryRunNoAnswerDiffersFromAnAnswer) {
  std::vector<std::map<std::string, std::string>> runs = {
      {{"t1", "db.mysql"}, {"t2", "unknown"}, {"t3", "db.mysql"}},
      {{"t1", "db.mysql"}, {"t2", "unknown"}, {"t3", "slurm.slurmd"}},
      {{"t1", "db.mysql"}, {"t2", "unknown"}}};
  // t1 and t2 agree ("unknown" is an answer); t3 differs; t4, never answered, is not counted.
  Agreement a = CountAgreement(runs, {"t1", "t2", "t3", "t4"});
  EXPECT_EQ(a.answered, 3);
  EXPECT_EQ(a.same, 2);
  EXPECT_DOUBLE_EQ(*a.share(), 2.0 / 3);
  runs[2]["t4"] = "unknown";  // answered in one run only: differs
  a = CountAgreement(runs, {"t1", "t2", "t3", "t4"});
  EXPECT_EQ(a.answered, 4);
  EXPECT_DOUBLE_EQ(*a.share(), 2.0 / 4);
  EXPECT_FALSE(CountAgreement(runs, {"t9"}).share());
}

// Three hand-made repeats of R, whose answers are known: agreement, the bootstrap interval over
// tasks, tokens and cost from the headers; two repeats of Q read n/a; a run stopped at a cap is
// refused.
TEST(Leaderboard, RepeatsGiveAgreementAndABootstrapIntervalTokensAndCost) {
  sc::Suite suite =
      sc::LoadSuite(sc::ScenarioPaths(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios"));
  ASSERT_TRUE(suite.problems.empty());
  std::vector<const sc::Scenario*> runnable;
  for (const auto& s : suite.scenarios) {
    if (s.status == "runnable" && s.RootCause() != "unknown") runnable.push_back(&s);
  }
  int n = 0;
  for (const auto& s : suite.scenarios) n += s.status == "runnable";
  ASSERT_GE(runnable.size(), 4u);
  std::string fp = SuiteFingerprint(suite.scenarios);
  fs::path dir = fs::temp_directory_path() / ("leaderboard_repeats_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto header = [&](const std::string& config, const std::string& extra) {
    return "{\"configuration\": \"" + config +
           "\", \"configuration_hash\": \"h\", \"model\": \"m\", "
           "\"suite_fingerprint\": \"" +
           fp + "\", \"date\": \"2026-12-06\"" + extra + "}\n";
  };
  auto answer = [](const sc::Scenario* s, const std::string& cause) {
    return "{\"scenario_id\": \"" + s->TaskId() + "\", \"root_cause\": \"" + cause +
           "\", \"confidence\": 0.9}\n";
  };
  // Every run: scenarios 0 and 1 right. Scenario 2: right, unknown, right (differs). Scenario 3:
  // answered in run 1 only (differs). Every other runnable scenario: never answered (not counted).
  for (int k = 1; k <= 3; ++k) {
    std::string usage =
        ", \"usage\": {\"input_tokens\": " + std::to_string(1000 * k) +
        ", \"output_tokens\": 100, \"cached_input_tokens\": 600, "
        "\"cache_creation_input_tokens\": 0, \"model_turns\": 4, \"tool_calls\": 3, "
        "\"task_runs\": 2, \"wall_s\": 1.5}, \"cost_usd\": " +
        std::to_string(k) +
        ", \"models_served\": [\"m-2026\"], \"temperature\": 0, "
        "\"seed\": \"not sent\"";
    std::string text = header("R", usage) + answer(runnable[0], runnable[0]->RootCause()) +
                       answer(runnable[1], runnable[1]->RootCause()) +
                       answer(runnable[2], k == 2 ? "unknown" : runnable[2]->RootCause());
    if (k == 1) text += answer(runnable[3], runnable[3]->RootCause());
    std::ofstream(dir / ("r" + std::to_string(k) + ".jsonl")) << text;
  }
  for (int k = 1; k <= 2; ++k) {
    std::ofstream(dir / ("q" + std::to_string(k) + ".jsonl"))
        << header("Q", "") << answer(runnable[0], runnable[0]->RootCause());
  }
  std::ofstream(dir / "capped.jsonl")
      << header("R", ", \"stopped\": \"--max-cost 1 USD reached after 1 of 4 task runs\"");

  LeaderboardOptions options;
  options.bootstrap_seed = 42;
  options.bootstrap_resamples = 500;
  Leaderboard lb = BuildLeaderboard(dir.string(), suite.scenarios, options);

  // The per-task credits the interval resamples, from the grader directly.
  std::vector<std::map<std::string, double>> credits;
  for (int k = 1; k <= 3; ++k) {
    std::ifstream in(dir / ("r" + std::to_string(k) + ".jsonl"));
    std::stringstream text;
    text << in.rdbuf();
    ParsedSubmission p = ParseSubmission(text.str(), "r", suite.scenarios);
    ASSERT_TRUE(p.submission);
    credits.push_back(Score(*p.submission, suite.scenarios).credit);
  }
  fs::remove_all(dir);
  std::vector<double> per_task;
  for (const auto& [id, c] : credits[0]) {
    per_task.push_back((c + credits[1].at(id) + credits[2].at(id)) / 3);
  }
  ASSERT_EQ(static_cast<int>(per_task.size()), n);

  ASSERT_EQ(lb.rows.size(), 2u);
  const Row& r = lb.rows[0].configuration == "R" ? lb.rows[0] : lb.rows[1];
  const Row& q = lb.rows[0].configuration == "R" ? lb.rows[1] : lb.rows[0];
  EXPECT_EQ(r.runs, 3);
  ASSERT_TRUE(r.agreement);
  EXPECT_DOUBLE_EQ(*r.agreement, 2.0 / 4);
  EXPECT_EQ(r.agreement_tasks, 4);
  EXPECT_EQ(AgreementText(r), "0.500 of 4 tasks");
  ASSERT_TRUE(r.depth_ci_low && r.depth_ci_high);
  auto want = BootstrapInterval(per_task, 42, 500);
  EXPECT_EQ(*r.depth_ci_low, want.first);
  EXPECT_EQ(*r.depth_ci_high, want.second);
  EXPECT_LE(*r.depth_ci_low, r.depth_mean);
  EXPECT_GE(*r.depth_ci_high, r.depth_mean);
  EXPECT_LT(*r.depth_ci_low, *r.depth_ci_high);
  ASSERT_TRUE(r.input_tokens_mean && r.cost_usd_mean);
  EXPECT_DOUBLE_EQ(*r.input_tokens_mean, 2000);
  EXPECT_DOUBLE_EQ(*r.cached_input_tokens_mean, 600);
  EXPECT_DOUBLE_EQ(*r.output_tokens_mean, 100);
  EXPECT_DOUBLE_EQ(*r.cost_usd_mean, 2);
  EXPECT_FALSE(q.agreement);
  EXPECT_FALSE(q.depth_ci_low);
  EXPECT_FALSE(q.input_tokens_mean);
  EXPECT_FALSE(q.cost_usd_mean);
  ASSERT_EQ(lb.refused.size(), 1u);
  EXPECT_NE(lb.refused[0].find("capped.jsonl: the run stopped before answering every task"),
            std::string::npos)
      << lb.refused[0];

  std::string md = LeaderboardMarkdown(lb);
  EXPECT_NE(md.find(IntervalText(r) + " | " + AgreementText(r) +
                    " | 2000 in (600 cached) / 100 out | $2.00 |"),
            std::string::npos)
      << md;
  EXPECT_NE(
      md.find("| n/a (needs ≥3 repeats) | n/a (needs ≥3 repeats) | unmeasured | unmeasured |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("500 times, seed 42, 95% percentile interval"), std::string::npos) << md;
  std::string html = LeaderboardHtml(lb);
  EXPECT_NE(html.find("<td class=\"n\">" + IntervalText(r) + "</td><td class=\"n\">" +
                      AgreementText(r) + "</td>"),
            std::string::npos);
  EXPECT_NE(html.find("500 times with seed 42"), std::string::npos);
  EXPECT_NE(html.find("n/a (needs ≥3 repeats)"), std::string::npos);
}

// The header's record of spend and sampling is checked, not trusted.
TEST(Leaderboard, BadSpendInTheHeaderIsAProblem) {
  sc::Suite suite =
      sc::LoadSuite(sc::ScenarioPaths(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios"));
  std::string fp = SuiteFingerprint(suite.scenarios);
  auto parse = [&](const std::string& extra) {
    return ParseSubmission(
        "{\"configuration\": \"R\", \"configuration_hash\": \"h\", \"model\": "
        "\"m\", \"suite_fingerprint\": \"" +
            fp + "\", \"date\": \"2026-12-06\"" + extra + "}\n",
        "x.jsonl", suite.scenarios);
  };
  EXPECT_TRUE(parse(", \"temperature\": \"not sent\", \"seed\": 7").submission);
  auto neg = parse(", \"cost_usd\": -1");
  ASSERT_FALSE(neg.submission);
  EXPECT_NE(neg.problems[0].message.find("cost_usd must be a non-negative number"),
            std::string::npos);
  auto frac = parse(
      ", \"usage\": {\"input_tokens\": 1.5, \"output_tokens\": 1, \"cached_input_tokens\": 0, "
      "\"cache_creation_input_tokens\": 0, \"model_turns\": 1, \"tool_calls\": 0, \"task_runs\": "
      "1, "
      "\"wall_s\": 1}");
  ASSERT_FALSE(frac.submission);
  EXPECT_NE(frac.problems[0].message.find("usage.input_tokens must be a non-negative integer"),
            std::string::npos);
  auto temp = parse(", \"temperature\": \"warm\"");
  ASSERT_FALSE(temp.submission);
  EXPECT_NE(temp.problems[0].message.find("temperature must be a number or \"not sent\""),
            std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::grader

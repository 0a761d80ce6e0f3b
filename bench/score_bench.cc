// score_bench: how fast `rca-bench score` scores, on 10,000 submissions against the shipped suite.
//
//   build/bin/score_bench [--submissions N] [--seed S]
//
// Generates N submissions in memory (JSON Lines, as `rca-bench run` writes them: the header with
// the suite's fingerprint, then one answer per runnable scenario whose root cause, confidence,
// ruled_out and actions are drawn from the vocabulary, with a fixed seed so every run scores the
// same text), then times the core of `rca-bench score`: ParseSubmission + Score for each, and
// Score alone on the parsed submissions. Prints submissions/s and answers/s. No transcripts are
// read (the harness-time column needs files; the command reads them per submission). A figure,
// not a test: every submission must parse, else exit 1.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/paths.h"
#include "grader/score.h"
#include "scenarios/validate.h"
#include "scenarios/vocabulary.h"

namespace {

namespace sc = slurm_rca::scenarios;
namespace grader = slurm_rca::grader;
using Clock = std::chrono::steady_clock;

std::string LoadAverage() {
  std::ifstream f("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(f >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

// One submission's text. Half the answers name a component of the scenario's credit table (so
// partial credit is computed), the rest any component of the vocabulary, `unknown` included.
std::string MakeSubmission(const std::vector<sc::Scenario>& suite, const std::string& fingerprint,
                           int n, std::mt19937_64& rng) {
  const auto& components = sc::Components();
  const auto& verbs = sc::ActionVerbs();
  auto pick = [&rng](size_t size) {
    return std::uniform_int_distribution<size_t>(0, size - 1)(rng);
  };
  std::uniform_real_distribution<double> unit(0, 1);
  nlohmann::json header = {{"configuration", "bench-" + std::to_string(n % 5)},
                           {"configuration_hash", "none"},
                           {"model", "score_bench"},
                           {"suite_fingerprint", fingerprint},
                           {"date", "2026-11-30"}};
  std::string text = header.dump() + "\n";
  for (const sc::Scenario& s : suite) {
    if (s.status != "runnable") continue;
    std::string cause;
    if (!s.scoring.empty() && unit(rng) < 0.5) {
      cause = s.scoring[pick(s.scoring.size())].node;
    } else {
      cause = std::string(components[pick(components.size())].id);
    }
    nlohmann::json answer = {{"scenario_id", (n % 2) ? s.TaskId() : s.id},
                             {"root_cause", cause},
                             {"confidence", static_cast<int>(unit(rng) * 100) / 100.0}};
    std::vector<std::string> ruled_out, actions;
    for (int i = static_cast<int>(pick(4)); i > 0; --i) {
      std::string_view c = components[pick(components.size())].id;
      if (c != sc::kUnknown) ruled_out.emplace_back(c);
    }
    for (int i = static_cast<int>(pick(3)); i > 0; --i) {
      std::string_view c = components[pick(components.size())].id;
      if (c != sc::kUnknown)
        actions.push_back(std::string(verbs[pick(verbs.size())]) + ":" + std::string(c));
    }
    if (!ruled_out.empty()) answer["ruled_out"] = ruled_out;
    if (!actions.empty()) answer["actions_proposed"] = actions;
    if (n % 3 == 0) answer["time_to_hypothesis_s"] = static_cast<int>(unit(rng) * 300);
    text += answer.dump() + "\n";
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"score_bench: submissions scored per second by the core of `rca-bench score`"};
  int submissions = 10000;
  unsigned seed = 9;
  app.add_option("--submissions", submissions, "Submissions to generate and score")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--seed", seed, "Seed of the generator")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("score_bench: load average %s at the start\n", LoadAverage().c_str());
  const auto load_start = Clock::now();
  const slurm_rca::base::DataPaths paths = slurm_rca::base::DataPaths::Under(SLURM_RCA_SOURCE_DIR);
  grader::SetGraphDigest(grader::GraphDigestOfFile(paths.graph));
  sc::Suite suite = sc::LoadSuite(sc::ScenarioPaths(paths.scenarios));
  const double load_s = std::chrono::duration<double>(Clock::now() - load_start).count();
  if (!suite.problems.empty()) {
    std::printf("the suite has problems; run rca-bench validate\n");
    return 1;
  }
  int runnable = 0;
  for (const sc::Scenario& s : suite.scenarios) runnable += s.status == "runnable";
  const std::string fingerprint = grader::SuiteFingerprint(suite.scenarios);
  std::printf("suite:   %zu scenarios (%d runnable, one answer each), %s, loaded in %.1f ms\n",
              suite.scenarios.size(), runnable, fingerprint.c_str(), 1000 * load_s);

  std::mt19937_64 rng(seed);
  std::vector<std::string> texts;
  texts.reserve(submissions);
  size_t bytes = 0;
  for (int i = 0; i < submissions; ++i) {
    texts.push_back(MakeSubmission(suite.scenarios, fingerprint, i, rng));
    bytes += texts.back().size();
  }
  std::printf("input:   %d submissions generated with seed %u, %.1f MiB of JSON Lines\n",
              submissions, seed, bytes / 1048576.0);

  std::vector<grader::Submission> parsed;
  parsed.reserve(submissions);
  double depth_sum = 0;  // used, so the work cannot be optimized away
  const auto t0 = Clock::now();
  for (const std::string& text : texts) {
    grader::ParsedSubmission p = grader::ParseSubmission(text, "bench.jsonl", suite.scenarios);
    if (!p.submission) {
      std::printf("a generated submission does not parse: %s\n",
                  p.problems.empty() ? "?" : p.problems.front().ToString().c_str());
      return 1;
    }
    depth_sum += grader::Score(*p.submission, suite.scenarios).depth;
    parsed.push_back(std::move(*p.submission));
  }
  const double both_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const auto t1 = Clock::now();
  for (const grader::Submission& s : parsed) depth_sum += grader::Score(s, suite.scenarios).depth;
  const double score_s = std::chrono::duration<double>(Clock::now() - t1).count();

  const double answers = static_cast<double>(submissions) * runnable;
  std::printf("parse + score: %.3f s, %.0f submissions/s, %.0f answers/s, %.1f us per submission\n",
              both_s, submissions / both_s, answers / both_s, 1e6 * both_s / submissions);
  std::printf("score only:    %.3f s, %.0f submissions/s, %.0f answers/s, %.1f us per submission\n",
              score_s, submissions / score_s, answers / score_s, 1e6 * score_s / submissions);
  std::printf("mean depth of these random submissions: %.3f\n", depth_sum / (2.0 * submissions));
  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  return 0;
}

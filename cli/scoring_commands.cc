// rca-bench baselines, score, leaderboard, fingerprint: what answers earn.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/common.h"
#include "grader/baselines.h"
#include "grader/leaderboard.h"
#include "grader/score.h"
#include "scenarios/measure.h"

namespace slurm_rca::cli {
namespace {

namespace sc = slurm_rca::scenarios;

class ScoringCommands : public CommandGroup {
 public:
  explicit ScoringCommands(CLI::App& app) {
    baselines = app.add_subcommand(
        "baselines",
        "What answers that read nothing score on the suite: the floor for every agent");
    baselines->add_option("--top", top, "Rows to print (0: all)")
        ->check(CLI::Range(0, 100))
        ->capture_default_str();
    baselines->add_flag("--include-blocked", include_blocked,
                        "Over the designed suite, blocked scenarios included (planning only)");

    score = app.add_subcommand(
        "score", "Score one submission (JSON Lines: a header, then one answer per scenario)");
    score->add_option("submission", submission_path, "The submission file")->required();
    score->add_flag("--json", score_json, "The report as JSON");
    score->add_option("--transcripts", transcripts_dir,
                      "The run's transcripts, for time to hypothesis (default: SUBMISSION with "
                      ".transcripts for .jsonl, when it exists)");
    leaderboard = app.add_subcommand(
        "leaderboard",
        "Every submission (*.jsonl) of RESULTS_DIR scored, runs of a configuration "
        "as mean ± SE, beside the floor: Markdown on stdout and a self-contained "
        "HTML page");
    leaderboard->add_option("results_dir", results_dir, "Directory of submissions")
        ->required()
        ->check(CLI::ExistingDirectory);
    leaderboard->add_option("--html", html_path,
                            "Where to write the HTML page (default: RESULTS_DIR/leaderboard.html)");
    leaderboard->add_flag("--no-html", no_html, "Print the Markdown only");
    leaderboard
        ->add_option("--bootstrap-seed", lb_options.bootstrap_seed,
                     "Seed of the bootstrap interval over tasks (stated in the output)")
        ->capture_default_str();
    leaderboard
        ->add_option("--bootstrap-resamples", lb_options.bootstrap_resamples,
                     "Resamples of the bootstrap interval over tasks")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    fingerprint =
        app.add_subcommand("fingerprint", "The suite fingerprint a submission's header must carry");
  }

  std::optional<int> Run() override {
    if (*fingerprint || *score || *leaderboard) {
      base::Result<sc::Suite> loaded = LoadScenarios({});
      if (!loaded.ok()) {
        Fail(loaded.status().message());
        return kUsage;
      }
      sc::Suite suite = std::move(loaded).value();
      if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
      CutToRecorded(&suite);
      if (*fingerprint) {
        std::cout << slurm_rca::grader::SuiteFingerprint(suite.scenarios) << "\n";
        std::cerr << "rca-bench: " << suite.scenarios.size() << " scenarios, bundles "
                  << sc::DefaultBundleSet() << " (Slurm "
                  << sc::BundleSetRelease(sc::DefaultBundleSet()) << ")\n";
        return 0;
      }
      if (*leaderboard) {
        auto lb = slurm_rca::grader::BuildLeaderboard(results_dir, suite.scenarios, lb_options);
        std::cout << slurm_rca::grader::LeaderboardMarkdown(lb);
        if (!no_html) {
          if (html_path.empty()) html_path = results_dir + "/leaderboard.html";
          std::ofstream out(html_path, std::ios::binary | std::ios::trunc);
          out << slurm_rca::grader::LeaderboardHtml(lb);
          out.close();
          if (!out) return Fail("cannot write " + html_path);
          std::cerr << "rca-bench: wrote " << html_path << "\n";
        }
        return lb.rows.empty() ? 1 : 0;
      }
      std::ifstream in(submission_path, std::ios::binary);
      if (!in) {
        std::cerr << "rca-bench: cannot read " << submission_path << "\n";
        return kUsage;
      }
      std::stringstream text;
      text << in.rdbuf();
      auto parsed =
          slurm_rca::grader::ParseSubmission(text.str(), submission_path, suite.scenarios);
      if (!parsed.submission) {
        for (const auto& p : parsed.problems) std::cout << p.ToString() << "\n";
        std::cerr << "rca-bench: " << parsed.problems.size()
                  << " problem(s) in the submission; nothing was scored\n";
        return 1;
      }
      if (transcripts_dir.empty()) {
        std::filesystem::path t = submission_path;
        t.replace_extension(".transcripts");
        transcripts_dir = t.string();
      } else if (!std::filesystem::is_directory(transcripts_dir)) {
        std::cerr << "rca-bench: --transcripts " << transcripts_dir << " is not a directory\n";
        return kUsage;
      }
      auto times = slurm_rca::grader::ReadTranscripts(transcripts_dir, suite.scenarios);
      auto report = slurm_rca::grader::Score(*parsed.submission, suite.scenarios, &times);
      if (score_json) {
        std::cout << slurm_rca::grader::ReportJson(*parsed.submission, report).dump(2) << "\n";
      } else {
        std::cout << slurm_rca::grader::RenderReport(*parsed.submission, report);
      }
      return 0;
    }
    if (*baselines) {
      base::Result<sc::Suite> loaded = LoadScenarios({});
      if (!loaded.ok()) {
        Fail(loaded.status().message());
        return kUsage;
      }
      sc::Suite suite = std::move(loaded).value();
      if (!suite.problems.empty()) return Fail("the suite has problems; run rca-bench validate");
      CutToRecorded(&suite);
      auto b = slurm_rca::grader::ComputeBaselines(suite.scenarios, include_blocked);
      int n = 0;
      for (const sc::Scenario& s : suite.scenarios) n += include_blocked || s.status == "runnable";
      std::cout << slurm_rca::grader::BaselineTable(b, n, !include_blocked, top);
      if (!include_blocked) {
        for (const auto& d : slurm_rca::grader::Degenerate(b, 0.20, /*with_abstain=*/true)) {
          std::cout << "DEGENERATE: " << d.name << " scores " << d.depth << " (>= 0.20)\n";
        }
      }
      return 0;
    }
    return std::nullopt;
  }

 private:
  int top = 8;
  bool include_blocked = false;
  CLI::App* baselines = nullptr;
  std::string submission_path;
  bool score_json = false;
  CLI::App* score = nullptr;
  std::string transcripts_dir;
  std::string results_dir, html_path;
  bool no_html = false;
  slurm_rca::grader::LeaderboardOptions lb_options;
  CLI::App* leaderboard = nullptr;
  CLI::App* fingerprint = nullptr;
};

}  // namespace

std::unique_ptr<CommandGroup> AddScoringCommands(CLI::App& app) {
  return std::make_unique<ScoringCommands>(app);
}

}  // namespace slurm_rca::cli

// slurm-guard: check an argv against the read-only allowlist, print the allowlist, run an
// approved argv, or check a corpus. All logic lives in the guard library.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include "base/build_info.h"
#include "cli/parse.h"
#include "cli/slurm_guard/output.h"
#include "guard/check.h"
#include "guard/corpus.h"
#include "guard/policy.h"
#include "guard/run.h"

namespace {

using slurm_rca::guard::Guard;
using slurm_rca::guard::GuardOptions;
using Json = nlohmann::ordered_json;
using slurm_rca::cli::slurm_guard::PolicyJson;
using slurm_rca::cli::slurm_guard::PrintPolicy;
using slurm_rca::cli::slurm_guard::PrintRunResult;
using slurm_rca::cli::slurm_guard::RunResultJson;
using slurm_rca::cli::slurm_guard::VerdictJson;

constexpr int kExitAllowed = 0;
constexpr int kExitDenied = 1;
constexpr int kExitUsage = 2;
constexpr int kExitFailed = 3;    // run: the command exited non-zero or was killed
constexpr int kExitTimedOut = 4;  // run: the command did not finish in time
constexpr int kExitCannotRun = 5; // run: not installed, untrusted, or spawn failed
constexpr int kExitInternal = 70; // the policy failed its own self-test

std::vector<std::string> SplitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// check: the verdict, never executed.
int CheckCommand(const Guard& guard, const std::vector<std::string>& argv, bool json) {
  slurm_rca::guard::Verdict v = guard.Check(argv);
  if (json) {
    std::cout << VerdictJson(argv, v).dump() << "\n";
  } else {
    std::cout << (v.ok() ? std::string("ALLOWED") : v.denial().ToString()) << "\n";
  }
  return v.ok() ? kExitAllowed : kExitDenied;
}

int PolicyCommand(bool json) {
  if (json) {
    std::cout << PolicyJson().dump(2) << "\n";
  } else {
    PrintPolicy();
  }
  return 0;
}

// run's flags, with their defaults.
struct RunFlags {
  double timeout_s = 20;
  std::size_t max_output = 1 << 20;
  std::string trusted_dirs = "/usr/bin:/usr/local/bin";
  std::string slurm_conf;
};

// The executor's options the flags name; nullopt after saying on stderr which flag is wrong.
std::optional<slurm_rca::guard::ExecutorOptions> ExecutorOptionsOf(const RunFlags& flags) {
  slurm_rca::guard::ExecutorOptions options;
  options.trusted_dirs = SplitList(flags.trusted_dirs, ':');
  for (const std::string& d : options.trusted_dirs) {
    if (d.front() != '/') {
      std::cerr << "slurm-guard: --trusted-dirs entry '" << d << "' is not absolute\n";
      return std::nullopt;
    }
  }
  options.timeout =
      std::chrono::milliseconds(static_cast<long>(std::llround(flags.timeout_s * 1000)));
  options.max_output_bytes = flags.max_output;
  if (!flags.slurm_conf.empty()) options.slurm_conf = flags.slurm_conf;
  return options;
}

// The exit code of a run that was allowed (the header of main's help lists them).
int RunExitCode(const slurm_rca::guard::RunResult& r) {
  using slurm_rca::guard::Outcome;
  switch (r.outcome) {
    case Outcome::kExited: return r.exit_code == 0 ? 0 : kExitFailed;
    case Outcome::kSignaled: return kExitFailed;
    case Outcome::kTimedOut: return kExitTimedOut;
    default: return kExitCannotRun;
  }
}

// run: check, and only an approved argv reaches the executor.
int RunCommand(const Guard& guard, const std::vector<std::string>& argv, const RunFlags& flags,
               bool json) {
  using namespace slurm_rca::guard;
  std::optional<ExecutorOptions> options = ExecutorOptionsOf(flags);
  if (!options) return kExitUsage;
  Verdict v = guard.Check(argv);
  if (!v.ok()) {
    if (json) {
      std::cout << VerdictJson(argv, v).dump() << "\n";
    } else {
      std::cout << v.denial().ToString() << "\n";
    }
    return kExitDenied;
  }
  Executor executor(*options);
  RunResult r = executor.Run(v.approved());
  if (json) {
    std::cout << RunResultJson(r).dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  } else {
    PrintRunResult(r);
  }
  return RunExitCode(r);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "slurm-guard: the read-only argv allowlist of slurm-rca.\n"
      "Exit codes: 0 allowed (or ran and exited 0), 1 denied, 2 usage, 3 ran and failed,\n"
      "4 timed out, 5 could not run (not installed or untrusted)."};
  app.set_version_flag("--version", slurm_rca::base::VersionLine("slurm-guard"),
                       "Print the version and the git revision built from, and exit");
  app.require_subcommand(1);
  std::string clusters;
  bool json = false;

  std::vector<std::string> check_argv;
  CLI::App* check = app.add_subcommand(
      "check", "Print ALLOWED or 'DENIED <rule-id>: <reason>' for ARGV; never executes");
  check->add_flag("--json", json, "One JSON object instead of text");
  check->add_option("--clusters", clusters, "Cluster names -M may name, comma-separated");
  check->add_option("argv", check_argv, "The argv to check, after --")->required();

  CLI::App* policy = app.add_subcommand("policy", "Print the allowlist");
  policy->add_flag("--json", json, "The allowlist as JSON");

  std::vector<std::string> run_argv;
  RunFlags run_flags;
  CLI::App* run = app.add_subcommand(
      "run", "Check ARGV and, if allowed, run it through the executor and print its result");
  run->add_flag("--json", json, "The result as one JSON object");
  run->add_option("--clusters", clusters, "Cluster names -M may name, comma-separated");
  run->add_option("--timeout", run_flags.timeout_s, "Seconds before the process group is killed")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  run->add_option("--max-output", run_flags.max_output, "Bytes kept per stream")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str();
  run->add_option("--trusted-dirs", run_flags.trusted_dirs, "Colon-separated absolute directories")
      ->capture_default_str();
  run->add_option("--slurm-conf", run_flags.slurm_conf, "Passed to the command as SLURM_CONF");
  run->add_option("argv", run_argv, "The argv to run, after --")->required();

  std::vector<std::string> corpus_paths;
  CLI::App* corpus = app.add_subcommand(
      "corpus", "Check corpus files (or directories of *.txt) and print one verdict line");
  corpus->add_option("--clusters", clusters, "Cluster names -M may name, comma-separated");
  corpus->add_option("paths", corpus_paths, "Corpus files or directories")->required();

  if (std::optional<int> code = slurm_rca::cli::ParseOrExit(
          app, argc, argv, {.binary = "slurm-guard", .exit_code = kExitUsage})) {
    return *code;
  }

  Guard guard(GuardOptions{.clusters = SplitList(clusters, ',')});
  std::vector<std::string> failures = slurm_rca::guard::SelfTest(guard);
  if (!failures.empty()) {
    std::cerr << "slurm-guard: the allowlist failed its self-test (" << failures.size()
              << "): " << failures.front() << "\n";
    return kExitInternal;
  }

  if (*check) return CheckCommand(guard, check_argv, json);
  if (*policy) return PolicyCommand(json);
  if (*run) return RunCommand(guard, run_argv, run_flags, json);
  // corpus
  auto report = slurm_rca::guard::CheckCorpus(guard, corpus_paths);
  if (!report.ok()) {
    std::cerr << "slurm-guard: " << report.status().message() << "\n";
    return kExitUsage;
  }
  std::cout << slurm_rca::guard::CorpusSummary(*report);
  return report->ok() ? 0 : kExitDenied;
}

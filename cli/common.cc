#include "cli/common.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "scenarios/live/lab.h"
#include "scenarios/measure.h"
#include "scenarios/validate.h"

namespace slurm_rca::cli {
namespace {

namespace sc = slurm_rca::scenarios;

// PATHs (files, scenario directories or suite directories) to scenario.yaml files.
base::Result<std::vector<std::string>> ExpandScenarioPaths(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  using base::Status;
  std::vector<std::string> out;
  if (args.empty()) {
    const std::string& dir = Paths().scenarios;
    if (!fs::is_directory(dir)) return Status::InvalidArgument("no scenario directory " + dir);
    out = sc::ScenarioPaths(dir);
    if (out.empty()) return Status::InvalidArgument("no */scenario.yaml under " + dir);
    return out;
  }
  for (const std::string& a : args) {
    if (fs::is_regular_file(a)) {
      out.push_back(a);
    } else if (fs::is_regular_file(fs::path(a) / "scenario.yaml")) {
      out.push_back((fs::path(a) / "scenario.yaml").string());
    } else if (fs::is_directory(a)) {
      auto found = sc::ScenarioPaths(a);
      if (found.empty()) return Status::InvalidArgument("no */scenario.yaml under " + a);
      out.insert(out.end(), found.begin(), found.end());
    } else {
      return Status::InvalidArgument("no such file or directory: " + a);
    }
  }
  return out;
}

}  // namespace

namespace sc = slurm_rca::scenarios;

base::DataPaths ResolveDataPaths() {
  base::DataPaths paths = base::DataPaths::Under(base::DataRoot(SLURM_RCA_SOURCE_DIR));
  auto from_env = [](const char* name, std::string* path) {
    if (const char* v = std::getenv(name); v && *v) *path = v;
  };
  from_env("SLURM_RCA_SCENARIOS", &paths.scenarios);
  from_env("SLURM_RCA_FIXTURES", &paths.fixtures);
  from_env("SLURM_RCA_GRAPH", &paths.graph);
  from_env("SLURM_RCA_CONFIGS", &paths.configs);
  return paths;
}

namespace {
base::DataPaths& PathsRef() {
  static base::DataPaths paths = base::DataPaths::Under(base::DataRoot(SLURM_RCA_SOURCE_DIR));
  return paths;
}
}  // namespace

const base::DataPaths& Paths() { return PathsRef(); }

void SetPaths(const base::DataPaths& paths) { PathsRef() = paths; }

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

std::string DefaultDir() {
  const char* env = std::getenv("SLURM_RCA_LAB_DIR");
  return env && *env ? env : "/tmp/slurm-rca-lab";
}

int Fail(const std::string& what) {
  std::cerr << "rca-bench: " << what << "\n";
  return 1;
}

base::Result<sc::Suite> LoadScenarios(const std::vector<std::string>& args) {
  base::Result<std::vector<std::string>> paths = ExpandScenarioPaths(args);
  if (!paths.ok()) return paths.status();
  return sc::LoadSuite(*paths);
}

// A set recorded on another release than Debian's holds only the tasks whose evidence shows on
// that release (a variant's not_shown_on says which do not, and why) and, while it is being
// recorded, only those recorded so far: the suite is cut to the tasks it holds, and says so. The
// 22.05 sets must be complete, so a missing bundle there stays an error.
void CutToRecorded(sc::Suite* suite) {
  const std::string& set = sc::DefaultBundleSet();
  const std::string release = sc::BundleSetRelease(set);
  if (release == "22.05") return;
  std::vector<sc::Scenario> kept;
  std::vector<std::string> not_shown, missing, large;
  for (sc::Scenario& s : suite->scenarios) {
    if (s.status == "runnable" && !s.OwnSet().empty()) {
      large.push_back(s.id);
    } else if (s.status == "runnable" && !s.NotShownOn(release).empty()) {
      not_shown.push_back(s.id);
    } else if (s.status == "runnable" && !sc::RecordedIn(s, set)) {
      missing.push_back(s.id);
    } else {
      kept.push_back(std::move(s));
    }
  }
  if (not_shown.empty() && missing.empty() && large.empty()) return;
  std::cerr << "rca-bench: the " << set << " set (Slurm " << release << ") holds " << kept.size()
            << " of " << kept.size() + not_shown.size() + missing.size() + large.size()
            << " tasks";
  if (!large.empty()) {
    std::cerr << "; " << large.size()
              << " of their own lab (large profile, lab of hosts) left out (recorded on 22.05 only)";
  }
  if (!not_shown.empty()) {
    std::cerr << "; " << not_shown.size() << " left out because their evidence does not show on "
              << release << " (";
    for (size_t i = 0; i < not_shown.size(); ++i) std::cerr << (i ? ", " : "") << not_shown[i];
    std::cerr << ": rca-bench show says why)";
  }
  if (!missing.empty()) std::cerr << "; " << missing.size() << " not recorded yet";
  std::cerr << ", so its scores and floor are not comparable with the full suite's\n";
  suite->scenarios = std::move(kept);
}

// The scenario named by its id or task id.
const sc::Scenario* FindScenario(const sc::Suite& suite, const std::string& id) {
  for (const sc::Scenario& s : suite.scenarios) {
    if (s.id == id || s.TaskId() == id) return &s;
  }
  std::cerr << "rca-bench: no scenario '" << id << "' (see rca-bench list)\n";
  return nullptr;
}

void AddProfile(CLI::App* c, std::string* profile, std::uint64_t* seed, bool with_large) {
  std::vector<std::string> profiles = {"clean", "busy"};
  if (with_large) profiles = slurm_rca::live::LabProfiles();
  c->add_option(
       "--profile", *profile,
       std::string("The lab's background: clean (idle nodes, an empty queue) or busy (other "
                   "users' running and pending jobs, failed and timed-out jobs in "
                   "accounting, node4 drained for maintenance; scenarios/SCHEMA.md, \"The "
                   "busy profile\")") +
           (with_large ? "; large: 256-1024 nodes with a site's queue and history "
                         "(scenarios/live/large_profile.h; 1,024 nodes unless --nodes says)"
                       : ""))
      ->check(CLI::IsMember(profiles))
      ->capture_default_str();
  c->add_option("--seed", *seed,
                "Seed of the busy profile: the same seed, the same users, jobs and timings")
      ->capture_default_str();
}

void AddLabDir(CLI::App* c, std::string* dir) {
  c->add_option("--dir", *dir, "Lab directory (env SLURM_RCA_LAB_DIR)")->capture_default_str();
}

void AddSlurm(CLI::App* c, std::string* prefix) {
  c->add_option("--slurm", *prefix,
                "A Slurm release built by scripts/build-slurm.sh (its prefix, e.g. "
                "~/.cache/slurm-rca/slurm-25.11.4): the lab runs its daemons and clients "
                "instead of Debian's 22.05")
      ->check(CLI::ExistingDirectory);
}

}  // namespace slurm_rca::cli

// Scenarios on the live lab: inject and heal a scenario's faults and workload, record its
// evidence bundle over several trials, and the bounded live smoke.
//
//   Lab lab(LabOptions{});
//   InjectScenario(lab, scenario, std::cout);   // rca-bench inject S06-...
//   HealScenario(lab, scenario, std::cout);     // rca-bench heal S06-...
//
//   ScenarioRecordOptions o{.fixtures = "fixtures", .trials = 3, .jobs = 3};
//   RecordScenario(scenario, o, std::cout);     // rca-bench record S06-...
//
// A trial brings up a fresh lab (nothing left from another scenario: logs, job ids, sdiag
// counters and accounting all start empty), submits the workload that runs before the fault,
// takes the baseline snapshot, injects, and snapshots every slurm-mcp topic through mcp's live
// back-end at scheduled offsets (offsets and outcomes as the server would have seen them),
// applies the schedule's heals and later submissions, then heals and takes the lab down. The
// bundle keeps the first trial's reads and every trial's timing (when each hop's signals first
// held), as format slurm-rca-evidence/2's `trials`.
#ifndef SLURM_RCA_SCENARIOS_LIVE_RUNNER_H_
#define SLURM_RCA_SCENARIOS_LIVE_RUNNER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "mcp/backend/live_backend.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"
#include "scenarios/scenario.h"

namespace slurm_rca::live {

// The FaultTarget a scenario's fault reference names (defaults for what it does not set).
FaultTarget TargetOf(const scenarios::FaultRef& ref);

// Injects every fault (in order) and submits the whole workload, ignoring the schedule's
// offsets: for an operator trying a scenario by hand. Idempotent per fault.
// The node slurm-mcp is taken to run on for a scenario (a GPU fault's node, else node1), and the
// live back-end options that read the lab as that node.
std::string HostNode(const scenarios::Scenario& s);
mcp::LiveOptions LiveOptionsFor(const Lab& lab, const std::string& host, double timeout_s);
// slurm-mcp serve arguments equivalent to LiveOptionsFor.
std::vector<std::string> LiveServeArgs(const Lab& lab, const std::string& host, double timeout_s);

// Why a lab cannot take a scenario, or "" when it can: a scenario with `lab:` is a task of its
// own lab (its faults name nodes such as node612 of 1,024, its evidence was recorded at that
// size), so a lab of another profile or fewer nodes does not run it.
std::string LabMisfit(const LabOptions& have, const scenarios::Scenario& s);
// Refuses (LabMisfit) before touching the lab.
base::Status InjectScenario(Lab& lab, const scenarios::Scenario& s, std::ostream& progress);
// Heals the faults in reverse order and cancels the workload's jobs. Idempotent.
base::Status HealScenario(Lab& lab, const scenarios::Scenario& s, std::ostream& progress);
// Heals every scenario (all heals run; failures are reported together).
base::Status HealAll(Lab& lab, const std::vector<scenarios::Scenario>& suite,
                     std::ostream& progress);

struct ScenarioRecordOptions {
  std::string fixtures;        // bundles go to FIXTURES/<id>; empty: the source tree's fixtures/
  int trials = 3;
  int jobs = 1;                // trials run at once, each in its own lab
  int port_base = 17800;       // trial k uses port_base + 1000 * k: 3 trials stay below 20800
  double read_timeout_seconds = 20;  // slurm-mcp's default executor timeout
  std::string work_dir;        // where the trials' labs and bundles go; empty: /tmp
  // Re-derive the timing from the trial bundles a previous run left in work_dir (after a
  // signal changed) instead of running the trials again.
  bool reuse_trials = false;
  std::string profile = "clean";  // each trial's lab: clean or busy (LabOptions::profile)
  std::uint64_t seed = 1;         // the busy profile's seed, the same in every trial
  std::string slurm_prefix;       // a built Slurm release (LabOptions::slurm_prefix); "": Debian's
};

// The offsets at which the recorder snapshots (the baseline at -1 is taken before the fault).
std::vector<int> SnapshotSchedule(const scenarios::Scenario& s);

base::Status RecordScenario(const scenarios::Scenario& s, const ScenarioRecordOptions& options,
                            std::ostream& progress);

struct SmokeResult {
  base::Status status;     // the inject or heal failed, or the lab did not return to clean
  bool observed = false;   // the first hop's signals held within the window
  double seconds = 0;      // when they first held, after the fault
  std::string detail;
};
// The faults of s whose heal_at_s has come at elapsed_s seconds after the smoke injected them, in
// the scenario's order: those it injected (at_s <= window_s), with a heal_at_s, not yet healed
// (healed[i]). Pure; SmokeScenario heals them as they fall due.
std::vector<size_t> DueHeals(const scenarios::Scenario& s, int window_s, double elapsed_s,
                             const std::vector<bool>& healed);

// Clean state (Lab::WaitReady: for a busy lab, the profile's resting state, its background jobs
// left alone), workload before the fault, the first hop's signals must not hold yet, inject,
// poll them through a live back-end every second up to window_s, or the scenario's observe_s when
// longer (healing each fault at its heal_at_s, DueHeals), heal. The daemon logs are read from
// where they stood when it started.
SmokeResult SmokeScenario(Lab& lab, const scenarios::Scenario& s, int window_s,
                          std::ostream& progress);

struct SmokeSuiteOptions {
  LabOptions lab;      // dir: a folder that holds one lab per slot (DIR/1, DIR/2, ...)
  int window_s = 45;
  int jobs = 1;        // scenarios smoked at once, each in its own fresh lab; slot k (from 0)
                       // uses port base lab.port_base + 1000 * k
};
// SmokeScenario for each scenario in a fresh lab of its own (nothing another scenario left, a
// failed job in accounting or a log line, can pass for this one's evidence), up to `jobs` at
// once in child processes. Prints one line per scenario as it finishes (its detail and the lab's
// progress when it failed) and a summary; returns how many failed.
int SmokeSuite(const std::vector<const scenarios::Scenario*>& scenarios,
               const SmokeSuiteOptions& options, std::ostream& out);

// The signal (SIGINT, SIGTERM) that interrupted a record or smoke run, 0 when none: their
// children were stopped and their labs taken down; the caller should stop too.
int Interrupted();

}  // namespace slurm_rca::live

#endif  // SLURM_RCA_SCENARIOS_LIVE_RUNNER_H_

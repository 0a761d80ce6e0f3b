// Whether a scenario is measured, derived from its recorded evidence bundle rather than
// asserted in its YAML.
//
// Each hop of a causal chain carries signals: reads slurm-mcp can make (a topic with filters,
// or a daemon log) with the outcome and the pattern its evidence shows. A hop is measured when,
// in the bundle, every signal holds in the snapshot served at the hop's offset (the first
// snapshot after the fault for a hop at 0) and not every signal held in the baseline snapshot
// taken before the fault: the evidence appeared with the fault, it was not there already.
//
//   Measurement m = MeasureScenario(scenario, BundleDir(scenario.id));
//   if (!m.error.empty()) ...;                 // no bundle, or it does not open
//   for (const HopResult& h : m.hops) std::cout << h.measured << " " << h.detail << "\n";
//
// SignalHolds works on any back-end, so the recorder and the live smoke evaluate signals
// against the live cluster exactly as the validator does against a bundle.
#ifndef SLURM_RCA_SCENARIOS_MEASURE_H_
#define SLURM_RCA_SCENARIOS_MEASURE_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"
#include "mcp/topics/topics.h"
#include "scenarios/scenario.h"

namespace slurm_rca::scenarios {

// What the recorder reads in every snapshot: each topic bare, and with each of its argv filters
// alone at its documented example; the logs of slurmctld (bare), slurmdbd and slurmd.
struct PlannedRead {
  const mcp::Topic* topic;
  std::vector<std::string> argv;  // {"log", daemon} for logs
};
const std::vector<PlannedRead>& RecorderPlan();

// The read a signal makes: the topic's argv with its filters, or {"log", daemon}.
std::vector<std::string> SignalArgv(const Signal& signal);

struct SignalResult {
  bool holds = false;
  std::string detail;  // what was seen: outcome, and the matching line or why it did not match
};
SignalResult SignalHolds(mcp::Backend& backend, const Signal& signal);

// All of a hop's signals hold (false when it has none).
// Only the signals that apply to slurm_version (Signal::AppliesTo) are read; a hop none of whose
// signals applies does not hold ("shows no signal on Slurm X").
bool HopHolds(mcp::Backend& backend, const Hop& hop, std::string* detail = nullptr,
              const std::string& slurm_version = "");

struct HopResult {
  int hop = 0;  // 1-based
  std::string node;
  bool measured = false;
  std::string detail;
  // The hop's bare nodes, queue and diagnostics reads whose every signal slurm_overview's own
  // answer shows at the hop's time (its outcome, and the match in its text): the overview is a
  // summary (mcp/topics/overview.h), so a row-level signal may show only through slurm_query.
  std::set<std::vector<std::string>> shown_by_overview;
};

struct Measurement {
  std::string bundle;         // the directory
  std::string error;          // non-empty: no bundle, or it does not open
  int trials = 0;             // trials recorded (from the manifest), 0 when unknown
  std::string trials_json;    // the manifest's `trials` object
  std::vector<HopResult> hops;
  std::vector<HopResult> herrings;  // the red herrings, measured like hops
  std::string slurm_version;        // the manifest's, "25.11.4"; "" when it names none
  bool AllMeasured() const;         // every hop and every red herring
};

// Sets of recorded bundles: `busy`, recorded on the lab's busy background profile, and `clean`,
// on the bare lab, both on Debian's Slurm 22.05; `busy-25.11`, the busy profile on Slurm 25.11
// (issue #18). A bundle is ROOT/<id> in the clean set and ROOT/<set>/<id> in the others, ROOT
// being what main sets with SetFixturesRoot (base::DataPaths::fixtures; "fixtures", relative to
// the working directory, until it does). Only the default set must hold every runnable
// scenario; another may be partly recorded (RecordedIn says which).
inline constexpr const char* kBusySet = "busy";
inline constexpr const char* kCleanSet = "clean";
inline constexpr const char* kBusy2511Set = "busy-25.11";
// The scenarios with `lab: {profile: large}` (issue #36) are recorded on the large lab only, into
// ROOT/large/<id>, on Debian's 22.05: that set stands in for the two 22.05 sets (BundleOf). It
// is not one of BundleSets(): it holds only those scenarios, and no --bundles picks it.
inline constexpr const char* kLargeSet = "large";
// The scenarios with `lab: {profile: hosts}` (issue #39) likewise: recorded on the lab of hosts
// (busy profile, Debian's 22.05) into ROOT/hosts/<id>, standing in for the two 22.05 sets.
inline constexpr const char* kHostsSet = "hosts";
const std::vector<std::string>& BundleSets();
// The Slurm release a set was recorded on ("22.05", "25.11"); "" for no such set.
std::string BundleSetRelease(const std::string& set);
// The busy set of a release (`--slurm-release 25.11` is busy-25.11); "" when none.
std::string BusySetOfRelease(const std::string& release);
// The set BundleDir uses when none is named (busy unless main sets it from --bundles). False: no
// such set.
bool SetDefaultBundleSet(const std::string& set);
const std::string& DefaultBundleSet();
// The root every BundleDir is under; main sets it once from its base::DataPaths.
void SetFixturesRoot(const std::string& root);
const std::string& FixturesRoot();
// ROOT[/<set>]/<id>: the bundle's name, which the replay back-end opens as the directory of that
// name or, as every committed bundle now is, the pack <name>.evidence.gz (mcp/backend/bundle_pack.h).
std::string BundleDir(const std::string& scenario_id, const std::string& set = "");
Measurement MeasureScenario(const Scenario& scenario, const std::string& bundle_dir);
// The scenario's bundle in set (default: the default set): BundleDir(id, set), except that a
// large-profile scenario's is in the large set when set is a 22.05 one (busy, clean), and in no
// set of another release (its BundleDir there, which does not exist).
std::string BundleOf(const Scenario& scenario, const std::string& set = "");
// Whether set (default: the default set) holds a bundle of the scenario (BundleOf).
bool RecordedIn(const Scenario& scenario, const std::string& set = "");

// Difficulty made visible: the fewest slurm-mcp tool calls whose answers show every hop, when
// the bundle measures every hop (nullopt otherwise). Each distinct read the hops' signals make
// is one slurm_query call (a topic with its filters, or a daemon's log), except that the bare
// nodes, queue and diagnostics reads the overview's summary shows for every hop that makes them
// (HopResult::shown_by_overview) come together in one slurm_overview call.
std::optional<int> MinimumCalls(const Scenario& scenario, const Measurement& m);

// The measurement as problems (bundle-missing, hop-unmeasured, blocked-measured).
std::vector<Problem> MeasurementProblems(const Scenario& scenario, const Measurement& m);

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_MEASURE_H_

// One benchmark scenario (scenarios/<id>/scenario.yaml), parsed strictly: unknown keys, missing
// required keys, wrong types and values outside an enum are problems with file and line. The
// schema is the seed's (rca-bench.md section 1) plus `ruled_out`, `harmful_actions` and `faults`
// (the fault primitives of scenarios/live/faults.h that inject it; each is healed by the same
// primitive, in reverse order).
//
//   LoadResult r = LoadScenarioFile("scenarios/S01-accounting-backend-stall/scenario.yaml");
//   for (const Problem& p : r.problems) std::cerr << p.ToString() << "\n";
//   if (r.scenario) std::cout << r.scenario->RootCause() << "\n";
#ifndef SLURM_RCA_SCENARIOS_SCENARIO_H_
#define SLURM_RCA_SCENARIOS_SCENARIO_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/diagnostic.h"

namespace slurm_rca::scenarios {

// A file:line: rule: message finding (base/diagnostic.h).
using Problem = base::Diagnostic;

struct Item {  // a string with the line it came from
  std::string value;
  int line = 0;
};

// A machine-checkable piece of a hop's evidence: what one slurm-mcp topic read shows. A hop
// is measured when, in the scenario's recorded bundle, every one of its signals holds in the
// snapshot served at the hop's offset and not all of them held before the fault (measure.h).
struct Signal {
  std::string topic;                                         // an slurm-mcp topic
  std::vector<std::pair<std::string, std::string>> filters;  // its argv filters (not logs')
  std::string daemon;   // logs only: slurmctld, slurmdbd or slurmd (default slurmctld)
  std::string outcome = "ok";  // ok, failed or timed_out
  std::string match;    // RE2, searched in stdout, stderr and the cause; empty: any
  // The Slurm releases ("22.05", "25.11") whose evidence this signal describes; empty: every
  // release. Where a release shows a hop differently (25.11's squeue fails to connect where
  // 22.05's times out), the hop carries one signal per release.
  std::vector<std::string> releases;
  int line = 0;
  // Whether the signal describes evidence recorded on slurm_version ("25.11.4"); "" (unknown)
  // matches only a signal that names no release.
  bool AppliesTo(const std::string& slurm_version) const;
};

// Whether version ("25.11.4", or "25.11") is of release ("25.11"): equal, or release then a dot.
bool IsOfRelease(const std::string& version, const std::string& release);

struct Hop {
  std::string node;
  std::string state;
  int observable_at_s = 0;
  std::vector<Item> evidence;
  std::vector<Signal> signals;
  int line = 0;
};

struct Credit {
  std::string node;
  double credit = 0;
  std::string rationale;
  int line = 0;
};

struct NodeNote {  // distractors and ruled_out: a component and why
  std::string node;
  std::string why;
  int line = 0;
};

struct FaultRef {
  std::string name;
  std::vector<std::pair<std::string, std::string>> target;  // FaultTarget fields
  int at_s = 0;                   // injected this many seconds into the scenario
  std::optional<int> heal_at_s;   // healed inside the window (else after it)
  int line = 0;
};

// Jobs the scenario submits (through sbatch, as root) so that its evidence exists: a running
// job for a drain to hit, finished jobs for accounting to queue, pending jobs for a limit.
struct Workload {
  std::string name;        // job name (rca-<name>)
  int count = 1;
  int at_s = 0;            // negative: before the fault (and before the baseline snapshot)
  std::string kind = "sleep";  // sleep, true, flaky (fails 1 in 20 by job id), sigkill
  int seconds = 30;        // sleep and flaky: how long each job works
  std::string partition, account, nodelist;
  int nodes = 1;
  int line = 0;
};

// What the recording cannot show, in words. Whether a scenario is measured is never written
// here: it is derived from the recorded bundle (measure.h).
struct Verification {
  std::string caveats;
  int line = 0;
};

// A second, real anomaly of a red-herring scenario: shown by the evidence (its signals are
// measured like a hop's), but not the cause of the ticket. It is ruled out and earns little.
struct RedHerring {
  Hop shown;        // node, state, observable_at_s, evidence, signals
  std::string why;  // why it does not explain the ticket
  int line = 0;
};

// The lab a scenario is recorded on when it is not the suite's 4-node lab (`lab:`; issue #36):
// the large profile (scenarios/live/large_profile.h) at `nodes` slurmd with `history` finished
// jobs in accounting. Its bundle is in the large set (fixtures/large/<id>), whatever the default.
// A scenario's own lab: `profile: large` (issue #36) or `profile: hosts`, the busy profile on the
// lab of hosts (issue #39: 4 nodes across the hosts ctl, db, login, c1, c2; scenarios/live/lab.h).
struct LabSpec {
  std::string profile = "large";
  int nodes = 1024;      // large: a multiple of 64, 256..1024; hosts: 4 (rule lab-size)
  int history = 2000;    // large: finished jobs the history leaves in accounting (0..1,000,000)
  int line = 0;
};

// A scenario's parameter (`parameters: {partition: gpu}`), used in its text as ${partition}.
using Parameters = std::vector<std::pair<std::string, std::string>>;

struct Scenario {
  std::string file;
  // id is the base id (`S16-partition-down`) or, for a variant, `<base>@<variant>`.
  std::string id, title, family, difficulty, status = "runnable", blocked_reason;
  std::string base_id;      // the id in the file (equal to id for the base instance)
  std::string variant;      // empty for the base instance
  Parameters parameters;    // the values this instance was expanded with
  std::string split;        // dev or test; empty when not declared
  std::string post_freeze;  // the frozen graph's tag this scenario was written after, or empty
  // Why a single_layer scenario has fewer than two variants (its parameters allow no other
  // instance), or empty; SuiteMinimum requires two variants or this.
  std::string variants_exhausted;
  std::vector<RedHerring> red_herrings;
  std::string reported_node, canary, symptom, notes, injection;
  int observe_s = 120;
  std::optional<LabSpec> lab;  // absent: the suite's lab (4 nodes, clean or busy)
  std::optional<Verification> verification;
  std::vector<Hop> causal_chain;
  std::vector<Credit> scoring;
  std::vector<NodeNote> distractors;
  std::optional<std::vector<Item>> remediation_helpful;  // absent: not in the action metric
  std::vector<Item> harmful_actions;
  std::vector<NodeNote> ruled_out;
  std::vector<FaultRef> faults;
  std::vector<Workload> workload;
  std::map<std::string, int> key_lines;  // top-level key -> line
  // Releases ("25.11") on which this task's evidence does not show, each with why (a variant's
  // `not_shown_on`): the task is not part of that release's bundle set, and a bundle recorded
  // there must indeed leave a hop unmeasured (else the claim is stale).
  std::map<std::string, std::string> not_shown_on;

  int Line(const std::string& key) const;
  bool Diagnosable() const;       // a full-credit answer that is not `unknown`
  bool Large() const { return lab && lab->profile == "large"; }
  bool Hosts() const { return lab && lab->profile == "hosts"; }
  // The bundle set of a task recorded on its own lab ("large", "hosts"; scenarios/measure.h),
  // which stands in for both 22.05 sets; "" for the suite's 4-node tasks.
  std::string OwnSet() const { return lab ? lab->profile : ""; }
  // The reason this task's evidence does not show on release ("25.11", "25.11.4"); "" when it
  // does (or is not known not to).
  std::string NotShownOn(const std::string& release) const;
  std::string RootCause() const;  // first full-credit node, else `unknown`
  int PropagationS() const;       // largest observable_at_s
  std::string TaskId() const;     // "T-" + first 10 hex of SHA-256 of the canary
  double CreditFor(const std::string& node) const;
};

struct LoadResult {
  std::optional<Scenario> scenario;  // absent when parsing failed; the base instance
  std::vector<Scenario> variants;    // the `variants`, expanded (none when parsing failed)
  std::vector<Problem> problems;     // parse problems (rules yaml-syntax ... bad-enum, and the
                                     // parameter rules)
  std::vector<Scenario> Instances() const;  // the base, then the variants
};

// Parses one scenario file. With `parameters` and `variants`, the base instance is the text
// with every ${name} replaced by the parameter's default, and each variant the text with its
// `set` values over the defaults, its own canary (so its own task id) and the id
// `<id>@<variant name>`; a variant inherits everything else, the split included.
LoadResult ParseScenario(const std::string& text, const std::string& file);

// The first `hex_chars` hex digits of the SHA-256 of text (task ids, suite fingerprints, the
// names of a bundle's stream files).
std::string Sha256Hex(const std::string& text, std::size_t hex_chars);
LoadResult LoadScenarioFile(const std::string& path);

// Parse rule ids.
inline constexpr const char* kRuleYamlSyntax = "yaml-syntax";
inline constexpr const char* kRuleNotMapping = "not-mapping";
inline constexpr const char* kRuleUnknownKey = "unknown-key";
inline constexpr const char* kRuleMissingKey = "missing-key";
inline constexpr const char* kRuleWrongType = "wrong-type";
inline constexpr const char* kRuleBadEnum = "bad-enum";
inline constexpr const char* kRuleDuplicateKey = "duplicate-key";
inline constexpr const char* kRuleParameter = "parameter";  // bad, unused or unknown ${name}
inline constexpr const char* kRuleVariant = "variant";      // bad name, canary or `set`

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_SCENARIO_H_

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

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace slurm_rca::scenarios {

struct Problem {
  std::string file;
  int line = 0;  // 1-based; 0 when unknown
  std::string rule;
  std::string message;
  std::string ToString() const;  // file:line: rule: message
};

struct Item {  // a string with the line it came from
  std::string value;
  int line = 0;
};

struct Hop {
  std::string node;
  std::string state;
  int observable_at_s = 0;
  std::vector<Item> evidence;
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
  int line = 0;
};

struct Verification {
  bool measured = false;
  std::string method;
  std::vector<std::pair<std::string, std::string>> observations;
  std::string caveats;
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string id, title, family, difficulty, status = "runnable", blocked_reason;
  std::string reported_node, canary, symptom, notes, injection;
  int observe_s = 120;
  std::optional<Verification> verification;
  std::vector<Hop> causal_chain;
  std::vector<Credit> scoring;
  std::vector<NodeNote> distractors;
  std::optional<std::vector<Item>> remediation_helpful;  // absent: not in the action metric
  std::vector<Item> harmful_actions;
  std::vector<NodeNote> ruled_out;
  std::vector<FaultRef> faults;
  std::map<std::string, int> key_lines;  // top-level key -> line

  int Line(const std::string& key) const;
  bool Diagnosable() const;       // a full-credit answer that is not `unknown`
  std::string RootCause() const;  // first full-credit node, else `unknown`
  int PropagationS() const;       // largest observable_at_s
  bool Measured() const { return verification && verification->measured; }
  double CreditFor(const std::string& node) const;
};

struct LoadResult {
  std::optional<Scenario> scenario;  // absent when parsing failed
  std::vector<Problem> problems;     // parse problems (rules yaml-syntax ... bad-enum)
};

LoadResult ParseScenario(const std::string& text, const std::string& file);
LoadResult LoadScenarioFile(const std::string& path);

// Parse rule ids.
inline constexpr const char* kRuleYamlSyntax = "yaml-syntax";
inline constexpr const char* kRuleNotMapping = "not-mapping";
inline constexpr const char* kRuleUnknownKey = "unknown-key";
inline constexpr const char* kRuleMissingKey = "missing-key";
inline constexpr const char* kRuleWrongType = "wrong-type";
inline constexpr const char* kRuleBadEnum = "bad-enum";

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_SCENARIO_H_

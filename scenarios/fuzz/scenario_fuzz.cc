// libFuzzer target for the scenario parser (scenarios/scenario.h): the input is a scenario.yaml.
// ParseScenario, then for a scenario that parses Validate and what the benchmark derives from it
// (root cause, task id, credits). Aborts on:
//   - a scenario returned together with problems, or no scenario and no problem;
//   - a problem whose rule the validator does not list (scenarios/validate.h Rules()), a negative
//     line, or a message that is empty;
//   - a credit outside [0, 1] for the root cause of a scenario that validates clean;
//   - an exception escaping the parser or the validator (libFuzzer reports it as a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "scenarios/scenario.h"
#include "scenarios/validate.h"

namespace {

using namespace slurm_rca::scenarios;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "SCENARIO INVARIANT: %s: %s\n", what, detail.c_str());
  std::abort();
}

void CheckProblems(const std::vector<Problem>& problems) {
  static const std::set<std::string_view> known = [] {
    std::set<std::string_view> ids;
    for (const RuleInfo& r : Rules()) ids.insert(r.id);
    return ids;
  }();
  for (const Problem& p : problems) {
    if (!known.count(p.rule)) Fail("unknown rule", p.ToString());
    if (p.line < 0 || p.message.empty()) Fail("malformed problem", p.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  LoadResult r = ParseScenario(text, "fuzz.yaml");
  CheckProblems(r.problems);
  if (r.scenario.has_value() == !r.problems.empty()) {
    Fail("a scenario together with problems, or neither",
         r.problems.empty() ? "no problem" : r.problems.front().ToString());
  }
  if (!r.scenario) return 0;
  const Scenario& s = *r.scenario;
  const std::vector<Problem> problems = Validate(s);
  CheckProblems(problems);
  s.TaskId();
  s.PropagationS();
  s.Diagnosable();
  if (problems.empty()) {
    const double credit = s.CreditFor(s.RootCause());
    if (credit < 0 || credit > 1) Fail("root cause credit outside [0, 1]", std::to_string(credit));
  }
  return 0;
}

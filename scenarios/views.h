// What the suite looks like to its readers: the README's scenario table (printed by
// `rca-bench list`), the two export views, and the suite-level minima.
//
//   std::vector<Measurement> m = MeasureSuite(suite.scenarios);
//   std::cout << ScenarioTable(suite.scenarios, {{kBusySet, m}, {kCleanSet, MeasureSuite(suite.scenarios, kCleanSet)}});
//   nlohmann::json agent = ExportView(suite.scenarios, m, View::kAgent);
//
// The agent view carries only what an agent under test may see: opaque task ids and tickets,
// runnable scenarios only. The scorer view carries every field and the derived ones.
#ifndef SLURM_RCA_SCENARIOS_VIEWS_H_
#define SLURM_RCA_SCENARIOS_VIEWS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenarios/measure.h"
#include "scenarios/scenario.h"

namespace slurm_rca::scenarios {

// One measurement per scenario, in order, from BundleDir(id, set) (set "": the default set).
std::vector<Measurement> MeasureSuite(const std::vector<Scenario>& scenarios,
                                      const std::string& set = "");

// The measurements of one bundle set (kBusySet, kCleanSet), one per scenario, in order.
struct SetMeasurements {
  std::string set;
  std::vector<Measurement> measurements;
};

// A Markdown table, one row per scenario, then one line of totals per set. Each set gets its two
// columns (hops measured; first seen, per hop, min–max of trials), in the order given; the first
// set is the one "fewest calls" is computed from and the totals line names first.
std::string ScenarioTable(const std::vector<Scenario>& scenarios,
                          const std::vector<SetMeasurements>& sets);

enum class View { kAgent, kScorer };
nlohmann::ordered_json ExportView(const std::vector<Scenario>& scenarios,
                                  const std::vector<Measurement>& measurements, View view);

// suite-minimum problems: fewer than kMinRunnable runnable tasks (variants count), 3 runnable
// undiagnosable tasks, 4 runnable multi_layer tasks, kMinRedHerrings scenarios with a red herring
// and kMinPostFreeze scenarios written after the graph's freeze (scenario files: variants do not
// count again), or a family with no runnable scenario; and split-missing. Issue #17 asks for 36
// tasks, 4 red herrings and 6 post-freeze scenarios; the task minimum is what the suite holds,
// so that a task cannot drop out unnoticed. These only ratchet up. And every runnable single_layer
// scenario has kMinVariants variants, or says in `variants_exhausted` why its parameters allow no
// more (a `variants_exhausted` on a scenario that has them is stale, and a problem too).
inline constexpr int kMinRunnable = 108;
inline constexpr int kMinVariants = 2;
inline constexpr int kMinRedHerrings = 4;
inline constexpr int kMinPostFreeze = 6;
std::vector<Problem> SuiteMinimum(const std::vector<Scenario>& scenarios,
                                  const std::string& where);

}  // namespace slurm_rca::scenarios

#endif  // SLURM_RCA_SCENARIOS_VIEWS_H_

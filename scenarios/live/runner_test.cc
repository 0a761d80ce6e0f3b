// The smoke's schedule of in-window heals (DueHeals in runner.h), pure: no lab is started.
#include "scenarios/live/runner.h"

#include <gtest/gtest.h>

#include <vector>

#include "scenarios/scenario.h"

namespace slurm_rca::live {
namespace {

scenarios::FaultRef Fault(const std::string& name, int at_s, std::optional<int> heal_at_s) {
  scenarios::FaultRef f;
  f.name = name;
  f.at_s = at_s;
  f.heal_at_s = heal_at_s;
  return f;
}

TEST(DueHeals, AFaultWithoutHealAtIsNeverHealedInTheWindow) {
  scenarios::Scenario s;
  s.faults = {Fault("db-freeze", 0, std::nullopt)};
  EXPECT_TRUE(DueHeals(s, 45, 1000, {false}).empty());
}

TEST(DueHeals, AFaultFallsDueAtItsHealAtAndOnlyOnce) {
  scenarios::Scenario s;  // S31's schedule: the controller is stopped and healed 20 s later
  s.faults = {Fault("ctld-stop", 0, 20)};
  EXPECT_TRUE(DueHeals(s, 45, 19.9, {false}).empty());
  EXPECT_EQ(DueHeals(s, 45, 20.0, {false}), std::vector<size_t>{0});
  EXPECT_EQ(DueHeals(s, 45, 33.0, {false}), std::vector<size_t>{0});
  EXPECT_TRUE(DueHeals(s, 45, 33.0, {true}).empty()) << "already healed";
}

TEST(DueHeals, OnlyFaultsTheSmokeInjectedAreHealedInScenarioOrder) {
  scenarios::Scenario s;
  s.faults = {Fault("munge-stop", 0, 30), Fault("partition-down", 0, std::nullopt),
              Fault("slurmd-kill", 60, 90), Fault("drain", 5, 10)};
  // slurmd-kill is injected after a 45 s window, so the smoke never injected it.
  EXPECT_EQ(DueHeals(s, 45, 100, {false, false, false, false}), (std::vector<size_t>{0, 3}));
  EXPECT_EQ(DueHeals(s, 45, 12, {false, false, false, false}), std::vector<size_t>{3});
  EXPECT_EQ(DueHeals(s, 120, 100, {false, false, false, true}), (std::vector<size_t>{0, 2}));
}

}  // namespace
}  // namespace slurm_rca::live

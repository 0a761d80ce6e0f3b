// The busy profile's trace (profile.h), pure: no lab is started. Determinism, the job mix every
// seed must have, the capacity it must leave for scenario jobs, and what it must never contain.
#include "scenarios/live/profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "scenarios/scenario.h"

namespace slurm_rca::live {
namespace {

constexpr int kSeeds = 200;

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A release built under a private home (/root is 0700) is named with the directory to open.
TEST(CheckOpenToOthers, NamesTheFirstDirectoryOthersCannotSearch) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("closed-" + std::to_string(::getpid()));
  fs::create_directories(root / "home" / "bin");
  std::ofstream(root / "home" / "bin" / "squeue") << "";
  fs::permissions(root, fs::perms(0755));
  fs::permissions(root / "home", fs::perms(0755));
  const std::string squeue = (root / "home" / "bin" / "squeue").string();
  EXPECT_TRUE(CheckOpenToOthers(squeue).ok());
  fs::permissions(root / "home", fs::perms(0700));
  base::Status closed = CheckOpenToOthers(squeue);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.message(), (root / "home").string() + " is not searchable by others (mode " +
                                  "0700); chmod o+x " + (root / "home").string());
  fs::permissions(root / "home", fs::perms(0711));
  EXPECT_TRUE(CheckOpenToOthers(squeue).ok());
  fs::remove_all(root);
}

TEST(BusyTrace, TheSameSeedGivesTheSameTrace) {
  for (std::uint64_t seed : {0ULL, 1ULL, 7ULL, 123456789ULL, ~0ULL}) {
    EXPECT_EQ(GenerateBusyTrace(seed).ToText(), GenerateBusyTrace(seed).ToText()) << seed;
  }
}

// The generator owes nothing to the standard library's distributions: seed 1's trace is pinned,
// so a toolchain (or a change) that gives another trace fails here. A deliberate change to the
// trace changes what the busy bundles were recorded on: re-record them and update the digest.
TEST(BusyTrace, SeedOneIsPinned) {
  const std::string text = GenerateBusyTrace(1).ToText();
  EXPECT_EQ(scenarios::Sha256Hex(text, 16), "cffd0cf7f4b324ee") << text;
}

TEST(BusyTrace, DifferentSeedsGiveDifferentTraces) {
  std::set<std::string> texts;
  for (int seed = 1; seed <= kSeeds; ++seed) texts.insert(GenerateBusyTrace(seed).ToText());
  EXPECT_EQ(texts.size(), static_cast<size_t>(kSeeds));
  // Not only the seed line: the jobs themselves differ.
  auto body = [](std::uint64_t seed) {
    std::string t = GenerateBusyTrace(seed).ToText();
    return t.substr(t.find('\n') + 1);
  };
  EXPECT_NE(body(1), body(2));
}

TEST(BusyTrace, EverySeedHasEveryKindAndEveryIntendedState) {
  const std::vector<std::string> states = {
      "RUNNING",          "COMPLETED",          "FAILED",
      "TIMEOUT",          "CANCELLED",          "PENDING Resources",
      "PENDING Priority", "PENDING Dependency", "PENDING JobHeldUser",
      "PENDING BeginTime"};
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    BusyTrace t = GenerateBusyTrace(seed);
    std::set<BusyJobKind> kinds;
    for (const BusyJob& j : t.jobs) kinds.insert(j.kind);
    for (BusyJobKind k : AllBusyJobKinds()) EXPECT_TRUE(kinds.count(k)) << KindName(k);
    for (const std::string& state : states) {
      bool found = std::any_of(t.jobs.begin(), t.jobs.end(), [&](const BusyJob& j) {
        return j.shows.find(state) != std::string::npos;
      });
      EXPECT_TRUE(found) << state;
    }
    // Several users own the history (sacct shows more than one).
    std::set<std::string> owners;
    for (const BusyJob& j : t.jobs) {
      if (j.submit_offset_s < 0) owners.insert(j.user);
    }
    EXPECT_GE(owners.size(), 2u);
  }
}

TEST(BusyTrace, UsersAccountsAndNamesAreTheBackgroundsOwn) {
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    BusyTrace t = GenerateBusyTrace(seed);
    EXPECT_GE(t.accounts.size(), 2u);
    EXPECT_LE(t.accounts.size(), 3u);
    std::set<std::string> accounts = {"research", "ops"};
    for (const std::string& a : t.accounts) {
      EXPECT_TRUE(accounts.insert(a).second) << "account " << a << " twice or the lab's own";
    }
    EXPECT_GE(t.users.size(), 4u);
    EXPECT_LE(t.users.size(), 6u);
    std::map<std::string, const BusyUser*> users;
    for (const BusyUser& u : t.users) {
      EXPECT_TRUE(StartsWith(u.name, "rcau-")) << u.name;
      EXPECT_TRUE(users.emplace(u.name, &u).second) << u.name << " twice";
      ASSERT_FALSE(u.accounts.empty());
      EXPECT_EQ(u.accounts.front(), u.default_account);
      for (const std::string& a : u.accounts) EXPECT_TRUE(accounts.count(a)) << a;
    }
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      const BusyJob& j = t.jobs[i];
      SCOPED_TRACE("job " + std::to_string(i) + " " + j.name);
      EXPECT_FALSE(StartsWith(j.name, "rca-")) << "scenario jobs are rca-*";
      EXPECT_FALSE(j.name.empty());
      ASSERT_TRUE(users.count(j.user)) << j.user;
      const auto& mine = users[j.user]->accounts;
      EXPECT_NE(std::find(mine.begin(), mine.end(), j.account), mine.end()) << j.account;
      EXPECT_TRUE(j.partition == "cpu" || j.partition == "gpu") << j.partition;
      EXPECT_EQ(j.gpus_per_node > 0, j.partition == "gpu" && j.kind == BusyJobKind::kGpu);
    }
  }
}

TEST(BusyTrace, EveryJobHasATimeLimitAndALowPriority) {
  for (int seed = 1; seed <= kSeeds; ++seed) {
    BusyTrace t = GenerateBusyTrace(seed);
    for (const BusyJob& j : t.jobs) {
      EXPECT_GT(j.time_limit_min, 0) << seed << " " << j.name;
      // Below every root job's priority (profile.h): a scenario job never waits behind it.
      EXPECT_GE(j.nice, 11000) << seed << " " << j.name;
      if (j.kind == BusyJobKind::kTimesOut) {
        EXPECT_GT(j.seconds, 60 * j.time_limit_min) << "it must outlive its limit";
      } else if (j.kind != BusyJobKind::kCancelled) {
        EXPECT_LE(j.seconds, 60 * j.time_limit_min) << seed << " " << j.name << " would time out";
      }
    }
  }
}

TEST(BusyTrace, TheMaintenanceNodeIsNeverNode1AndRunsNothing) {
  for (int seed = 1; seed <= kSeeds; ++seed) {
    BusyTrace t = GenerateBusyTrace(seed);
    EXPECT_EQ(t.maintenance_node, "node4");
    EXPECT_NE(t.maintenance_node, "node1") << "slurm-mcp is taken to run on node1";
    EXPECT_TRUE(StartsWith(t.maintenance_reason, "maint: ")) << t.maintenance_reason;
    EXPECT_NE(t.maintenance_reason.find("ticket OPS-"), std::string::npos);
    for (const BusyJob& j : t.jobs) EXPECT_NE(j.nodelist, t.maintenance_node) << j.name;
  }
}

// What runs through the horizon, pinned, leaves a CPU on each of node1 and node3 and both of
// node2's, and the GPU jobs pending for Resources cannot fit beside node1's GPU job.
TEST(BusyTrace, ItLeavesCapacityForScenarioJobs) {
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    BusyTrace t = GenerateBusyTrace(seed);
    std::map<std::string, int> cpus, gpus;
    for (const BusyJob& j : t.jobs) {
      if (j.settle || j.submit_offset_s > 0 || j.hold || j.depends_on >= 0 ||
          j.shows.rfind("PENDING", 0) == 0) {
        continue;  // history (ended before hand-over), future, held or pending
      }
      // Runs from hand-over on: must be pinned, one node, one CPU.
      EXPECT_EQ(j.nodes, 1) << j.name;
      EXPECT_FALSE(j.nodelist.empty()) << j.name << " is not pinned";
      cpus[j.nodelist] += 1;
      gpus[j.nodelist] += j.gpus_per_node;
    }
    EXPECT_LE(cpus["node1"], 1);
    EXPECT_EQ(cpus["node2"], 0);
    EXPECT_LE(cpus["node3"], 1);
    EXPECT_GE(gpus["node1"], 1) << "the Resources job needs node1's GPUs held";
    for (const BusyJob& j : t.jobs) {
      if (j.shows == "PENDING Resources" || j.shows == "PENDING Priority") {
        EXPECT_EQ(j.nodes, 2);
        EXPECT_EQ(j.gpus_per_node, 2) << "all of both GPU nodes' GPUs: cannot start now";
        EXPECT_TRUE(j.nodelist.empty());
      }
    }
    // The dependencies point backwards, to a job submitted no later.
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      const BusyJob& j = t.jobs[i];
      if (j.depends_on < 0) continue;
      ASSERT_LT(static_cast<size_t>(j.depends_on), i);
      EXPECT_LE(t.jobs[static_cast<size_t>(j.depends_on)].submit_offset_s, j.submit_offset_s);
      EXPECT_TRUE(j.dependency_type == "afterok" || j.dependency_type == "afternotok");
    }
  }
}

TEST(BusyTrace, TheStreamIsReleasedBySlurmWithinItsWindow) {
  TraceOptions o;
  o.stream_s = 900;
  BusyTrace t = GenerateBusyTrace(3, o);
  int stream = 0;
  for (const BusyJob& j : t.jobs) {
    if (j.submit_offset_s > 0 && j.kind != BusyJobKind::kBeginTime) {
      ++stream;
      EXPECT_LE(j.submit_offset_s, 900);
    }
    if (j.kind == BusyJobKind::kBeginTime) {
      EXPECT_GT(j.submit_offset_s, o.horizon_s);
    }
  }
  EXPECT_GE(stream, 900 / 150);
}

TEST(SbatchArgv, SubmitsAsTheUserWithEveryLimitAndNothingElse) {
  BusyTrace t = GenerateBusyTrace(5);
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const BusyJob& j = t.jobs[i];
    SCOPED_TRACE(j.name);
    std::vector<std::string> argv = SbatchArgv(j, "grp", "/lab/work/users", "42");
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv[0], "sbatch");
    auto has = [&](const std::string& a) {
      return std::find(argv.begin(), argv.end(), a) != argv.end();
    };
    EXPECT_TRUE(has("--uid=" + j.user));
    EXPECT_TRUE(has("--gid=grp"));
    EXPECT_TRUE(has("--time=" + std::to_string(j.time_limit_min)));
    EXPECT_TRUE(has("--nice=" + std::to_string(j.nice)));
    EXPECT_TRUE(has("--output=/dev/null"));
    EXPECT_TRUE(has("--chdir=/lab/work/users"));
    EXPECT_TRUE(has("--job-name=" + j.name));
    EXPECT_EQ(has("--hold"), j.hold);
    EXPECT_EQ(has("--begin=now+" + std::to_string(j.submit_offset_s)), j.submit_offset_s > 0);
    if (j.depends_on >= 0) {
      EXPECT_TRUE(has("--dependency=" + j.dependency_type + ":42"));
    }
    // Never a scenario's fault or a way around the scenario's: no QOS, reservation or
    // partition other than the job's, no exclusive node.
    for (const std::string& a : argv) {
      EXPECT_FALSE(StartsWith(a, "--qos")) << a;
      EXPECT_FALSE(StartsWith(a, "--reservation")) << a;
      EXPECT_FALSE(StartsWith(a, "--exclusive")) << a;
    }
    ASSERT_GE(argv.size(), 2u);
    EXPECT_EQ(argv[argv.size() - 2], "--wrap");
    if (j.exit_code != 0) {
      EXPECT_NE(argv.back().find("exit " + std::to_string(j.exit_code)), std::string::npos);
    }
  }
}

TEST(BusyJobKind, EveryKindHasAName) {
  std::set<std::string> names;
  for (BusyJobKind k : AllBusyJobKinds()) names.insert(std::string(KindName(k)));
  EXPECT_EQ(names.size(), AllBusyJobKinds().size());
  EXPECT_EQ(names.count("?"), 0u);
}

}  // namespace
}  // namespace slurm_rca::live

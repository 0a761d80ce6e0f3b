// The large profile's plan (large_profile.h), pure: no lab is started. Its nodes and partitions,
// users, accounts and limits, the job mix at 1,024 and at 256 nodes, determinism by seed, and the
// slurm.conf lines it adds.
#include "scenarios/live/large_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace slurm_rca::live {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool Shows(const LargeTrace& t, const std::string& what) {
  return std::any_of(t.jobs.begin(), t.jobs.end(),
                     [&](const LargeJob& j) { return j.shows.find(what) != std::string::npos; });
}

long Tasks(const LargeTrace& t, LargePhase phase, const std::string& shows) {
  long n = 0;
  for (const LargeJob& j : t.jobs) {
    if (j.phase == phase && j.shows.find(shows) != std::string::npos) n += j.Tasks();
  }
  return n;
}

TEST(LargeTrace, NodeCountsTheProfileTakes) {
  EXPECT_TRUE(CheckLargeNodes(1024).ok());
  EXPECT_TRUE(CheckLargeNodes(256).ok());
  EXPECT_TRUE(CheckLargeNodes(512).ok());
  EXPECT_FALSE(CheckLargeNodes(64).ok());
  EXPECT_FALSE(CheckLargeNodes(1088).ok());
  base::Status odd = CheckLargeNodes(300);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.message(),
            "--nodes 300: the large profile takes a multiple of 64 between 256 and 1024");
}

TEST(LargeTrace, PartitionsAndGpuNodes) {
  LargeTrace t = GenerateLargeTrace(1, LargeOptions{.nodes = 1024});
  EXPECT_EQ(t.nodes, 1024);
  EXPECT_EQ(t.gpu_nodes, 128);
  std::map<std::string, LargePartition> parts;
  for (const LargePartition& p : t.partitions) parts[p.name] = p;
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts["gpu"].nodes, "node[1-128]");
  EXPECT_EQ(parts["cpu"].nodes, "node[129-1024]");
  EXPECT_TRUE(parts["cpu"].is_default);
  EXPECT_EQ(parts["long"].nodes, "node[129-576]");
  EXPECT_EQ(parts["debug"].nodes, "node[1009-1024]");
  int defaults = 0;
  for (const auto& [name, p] : parts) defaults += p.is_default;
  EXPECT_EQ(defaults, 1);

  LargeTrace small = GenerateLargeTrace(1, LargeOptions{.nodes = 256});
  EXPECT_EQ(small.gpu_nodes, 32);
  EXPECT_EQ(small.partitions[0].nodes, "node[1-32]");
  EXPECT_EQ(small.partitions[1].nodes, "node[33-256]");
  EXPECT_EQ(small.partitions[3].nodes, "node[253-256]");
}

TEST(LargeTrace, UsersAccountsQosAndLimits) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    LargeTrace t = GenerateLargeTrace(seed, LargeOptions{.nodes = 1024});
    EXPECT_GE(t.users.size(), 8u);
    EXPECT_EQ(t.accounts.size(), 5u);
    std::set<std::string> accounts(t.accounts.begin(), t.accounts.end());
    accounts.insert("research");
    std::set<std::string> names, defaults;
    for (const BusyUser& u : t.users) {
      EXPECT_TRUE(StartsWith(u.name, "rcau-")) << u.name;
      EXPECT_TRUE(names.insert(u.name).second) << u.name << " twice";
      ASSERT_FALSE(u.accounts.empty());
      EXPECT_EQ(u.accounts.front(), u.default_account);
      for (const std::string& a : u.accounts) EXPECT_TRUE(accounts.count(a)) << a;
      defaults.insert(u.default_account);
    }
    EXPECT_EQ(defaults.size(), 5u) << "every account has users of its own";
    EXPECT_TRUE(std::count(t.accounts.begin(), t.accounts.end(), t.limited_account));
    EXPECT_EQ(t.assoc_grp_jobs, 32);
    EXPECT_EQ(t.scavenger_max_jobs, 8);
    ASSERT_EQ(t.qos.size(), 2u);
    EXPECT_EQ(t.qos[1].name, "scavenger");
    EXPECT_NE(std::find(t.qos[1].settings.begin(), t.qos[1].settings.end(), "MaxJobsPerUser=8"),
              t.qos[1].settings.end());
    EXPECT_TRUE(names.count(t.scavenger_user));
    EXPECT_NE(t.reservation_account, t.limited_account);
    // Every job: a user of the profile in one of its accounts, never a scenario's rca-* name.
    std::map<std::string, const BusyUser*> users;
    for (const BusyUser& u : t.users) users[u.name] = &u;
    long capped_running = 0, scavenger_running = 0;
    for (const LargeJob& j : t.jobs) {
      ASSERT_TRUE(users.count(j.user)) << j.user;
      const auto& mine = users[j.user]->accounts;
      EXPECT_NE(std::find(mine.begin(), mine.end(), j.account), mine.end()) << j.account;
      EXPECT_FALSE(StartsWith(j.name, "rca-"));
      EXPECT_GT(j.time_limit_min, 0);
      EXPECT_GE(j.copies, 1);
      if (j.depends_on >= 0) {
        ASSERT_LT(j.depends_on, static_cast<int>(t.jobs.size()));
        EXPECT_EQ(t.jobs[static_cast<size_t>(j.depends_on)].phase, LargePhase::kRunning);
      }
      if (j.phase == LargePhase::kRunning && j.account == t.limited_account) {
        capped_running += j.Tasks();
      }
      if (j.phase == LargePhase::kRunning && j.qos == "scavenger") scavenger_running += j.Tasks();
      // Only the capped account's own jobs use it: nobody else eats its GrpJobs.
      if (j.account == t.limited_account) {
        EXPECT_TRUE(j.shows == "RUNNING" || j.shows == "PENDING AssocGrpJobsLimit") << j.shows;
      }
    }
    EXPECT_EQ(capped_running, t.assoc_grp_jobs) << "exactly at the limit";
    EXPECT_EQ(scavenger_running, t.scavenger_max_jobs) << "exactly at the limit";
  }
}

// The figures at 1,024 nodes: 20,000-50,000 jobs in the queue, at least 1,000 running,
// at least 50,000 finished, every pending reason of the mix present.
TEST(LargeTrace, JobMixAtFullSize) {
  LargeTrace t = GenerateLargeTrace(1, LargeOptions{.nodes = 1024});
  const long history = t.Tasks(LargePhase::kHistory);
  const long running = t.Tasks(LargePhase::kRunning);
  const long pending = t.Tasks(LargePhase::kPending);
  EXPECT_GE(history, 50000);
  EXPECT_GE(running, 1000);
  EXPECT_GE(running + pending, 20000);
  EXPECT_LE(running + pending, 50000);
  EXPECT_GT(Tasks(t, LargePhase::kHistory, "FAILED"), 0);
  // The history runs at most 300 tasks at once, whatever the nodes.
  long at_once = 0;
  for (const LargeJob& j : t.jobs) {
    if (j.phase == LargePhase::kHistory) at_once += j.array_limit > 0 ? j.array_limit : j.Tasks();
  }
  EXPECT_LE(at_once, 300);
  EXPECT_GT(Tasks(t, LargePhase::kHistory, "COMPLETED"), 0);
  for (const char* reason : {"Priority or Resources", "QOSMaxJobsPerUserLimit", "AssocGrpJobsLimit",
                             "Reservation", "Dependency", "JobHeldUser", "BeginTime"}) {
    EXPECT_TRUE(Shows(t, std::string("PENDING ") + reason)) << reason;
  }
  // Both job arrays and single jobs, in every phase but the history (arrays only).
  for (LargePhase phase : {LargePhase::kRunning, LargePhase::kPending}) {
    bool arrays = false, singles = false;
    for (const LargeJob& j : t.jobs) {
      if (j.phase != phase) continue;
      arrays = arrays || j.array > 0;
      singles = singles || j.array == 0;
    }
    EXPECT_TRUE(arrays && singles);
  }
}

// The running jobs fill the cluster exactly: every GPU node and every CPU, no more.
TEST(LargeTrace, RunningJobsFitTheClusterExactly) {
  for (int nodes : {256, 512, 1024}) {
    SCOPED_TRACE(nodes);
    LargeTrace t = GenerateLargeTrace(3, LargeOptions{.nodes = nodes});
    long gpu_nodes = 0, cpu_cpus = 0;
    for (const LargeJob& j : t.jobs) {
      if (j.phase != LargePhase::kRunning) continue;
      if (j.partition == "gpu") {
        EXPECT_TRUE(j.exclusive);
        gpu_nodes += j.Tasks() * j.nodes;
      } else {
        EXPECT_EQ(j.partition, "cpu");
        cpu_cpus += j.Tasks() * (j.exclusive ? 2 * j.nodes : 1);
      }
    }
    EXPECT_EQ(gpu_nodes, t.gpu_nodes);
    EXPECT_EQ(cpu_cpus, 2L * (t.nodes - t.gpu_nodes));
  }
}

// --nodes 256 is the same plan at a quarter of the size.
TEST(LargeTrace, ScalesWithTheNodes) {
  LargeTrace full = GenerateLargeTrace(1, LargeOptions{.nodes = 1024});
  LargeTrace quarter = GenerateLargeTrace(1, LargeOptions{.nodes = 256});
  for (LargePhase phase : {LargePhase::kHistory, LargePhase::kRunning, LargePhase::kPending}) {
    const double ratio = static_cast<double>(quarter.Tasks(phase)) / full.Tasks(phase);
    EXPECT_NEAR(ratio, 0.25, 0.02) << static_cast<int>(phase);
  }
  EXPECT_EQ(quarter.assoc_grp_jobs, 8);
  EXPECT_EQ(quarter.scavenger_max_jobs, 2);
  EXPECT_EQ(quarter.users.size(), full.users.size());
}

// A bounded test asks for fewer finished jobs; the rest of the plan does not change.
TEST(LargeTrace, HistoryCanBeBounded) {
  LargeTrace plan = GenerateLargeTrace(1, LargeOptions{.nodes = 256});
  LargeTrace bounded = GenerateLargeTrace(1, LargeOptions{.nodes = 256, .history_tasks = 2000});
  EXPECT_EQ(plan.Tasks(LargePhase::kHistory), 12500);
  EXPECT_EQ(bounded.Tasks(LargePhase::kHistory), 2000);
  EXPECT_EQ(bounded.Tasks(LargePhase::kRunning), plan.Tasks(LargePhase::kRunning));
  EXPECT_EQ(bounded.Tasks(LargePhase::kPending), plan.Tasks(LargePhase::kPending));
}

TEST(LargeTrace, TheSameSeedGivesTheSameTrace) {
  for (std::uint64_t seed : {0ULL, 1ULL, 7ULL, 123456789ULL, ~0ULL}) {
    EXPECT_EQ(GenerateLargeTrace(seed).ToText(), GenerateLargeTrace(seed).ToText()) << seed;
  }
  std::set<std::string> bodies;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::string text = GenerateLargeTrace(seed).ToText();
    bodies.insert(text.substr(text.find('\n') + 1));
  }
  EXPECT_EQ(bodies.size(), 20u);
}

TEST(LargeTrace, SlurmConfRaisesTheLimitsAndNamesThePartitions) {
  LargeTrace t = GenerateLargeTrace(1, LargeOptions{.nodes = 1024});
  const std::string conf = LargeSlurmConf(t);
  EXPECT_NE(conf.find("PartitionName=cpu Nodes=node[129-1024] MaxTime=2-00:00:00 Default=YES "
                      "State=UP\n"),
            std::string::npos)
      << conf;
  EXPECT_NE(conf.find("PartitionName=gpu Nodes=node[1-128] "), std::string::npos);
  EXPECT_NE(conf.find("PartitionName=long "), std::string::npos);
  EXPECT_NE(conf.find("PartitionName=debug "), std::string::npos);
  EXPECT_NE(conf.find("MaxJobCount=200000\n"), std::string::npos);
  EXPECT_NE(conf.find("MaxArraySize=100001\n"), std::string::npos);
  EXPECT_NE(conf.find("SchedulerParameters="), std::string::npos);
  // Every array of the plan fits MaxArraySize, and the queue fits MaxJobCount.
  for (const LargeJob& j : t.jobs) EXPECT_LT(j.array, 100001);
  EXPECT_LT(t.Tasks(LargePhase::kRunning) + t.Tasks(LargePhase::kPending), 200000);
}

TEST(LargeTrace, SbatchArgvSaysWhatTheJobIs) {
  LargeJob j;
  j.user = "rcau-alice";
  j.account = "bio";
  j.partition = "gpu";
  j.qos = "scavenger";
  j.name = "train_bert";
  j.nodes = 4;
  j.exclusive = true;
  j.gpus_per_node = 2;
  j.array = 100;
  j.array_limit = 3;
  j.seconds = 60;
  j.time_limit_min = 5;
  j.reservation = "training_123";
  j.depends_on = 0;
  std::vector<std::string> argv = LargeSbatchArgv(j, "rcau-alice", "/lab/work/users", "42");
  auto has = [&](const std::string& a) {
    return std::find(argv.begin(), argv.end(), a) != argv.end();
  };
  EXPECT_EQ(argv.front(), "sbatch");
  for (const char* a :
       {"--uid=rcau-alice", "--account=bio", "--partition=gpu", "--qos=scavenger", "--nodes=4",
        "--exclusive", "--gres=gpu:2", "--array=0-99%3", "--time=5", "--reservation=training_123",
        "--dependency=afterok:42", "--output=/dev/null"}) {
    EXPECT_TRUE(has(a)) << a;
  }
  EXPECT_EQ(argv.back(), "sleep 60");
}

}  // namespace
}  // namespace slurm_rca::live

#include "mcp/backend/live_backend.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "guard/rule.h"
#include "mcp/test_temp_dir.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using Outcome = Evidence::Outcome;

// One fake for sinfo, squeue and sacct; the behaviour is the second argument (`sinfo -p ok`).
// Every run appends a line to `runs` next to it, so tests count processes started.
constexpr char kFake[] = R"sh(#!/bin/sh
d="$(dirname "$0")"
echo "$(basename "$0") $*" >> "$d/runs"
case "$2" in
  ok) echo "PARTITION AVAIL"; echo "gpu up" ;;
  slow) sleep 0.6; echo "slow answer" ;;
  hold) touch "$d/holding"; sleep 1.5; echo "held" ;;
  hang) echo partial; exec sleep 300 ;;
  exit3) echo "sinfo: error: slurm_load_partitions: Unable to contact slurm controller (connect failure)" >&2
         exit 3 ;;
  nomunge) printf '%s\n' "sinfo: error: If munged is up, restart with --num-threads=10" \
             "sinfo: error: Munge encode failed: Failed to connect to socket: Connection refused" \
             "slurm_load_partitions: Protocol authentication error" >&2
           exit 1 ;;
  *) echo "partition $2" ;;
esac
)sh";

// A program that must never run: it leaves a trace if it does.
constexpr char kMarker[] = "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\n";


void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    ASSERT_TRUE(f.good()) << path;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class LiveBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_tools::MakeTempDir("live");
    for (const char* name : {"sinfo", "squeue", "sacct"}) WriteFile(dir_ + "/" + name, kFake, 0755);
    WriteFile(dir_ + "/scontrol", kMarker, 0755);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  LiveOptions Options() {
    LiveOptions o;
    o.executor.trusted_dirs = {dir_};
    o.executor.timeout = milliseconds(5000);
    return o;
  }

  int Runs() {
    std::string runs = ReadFile(dir_ + "/runs");
    int n = 0;
    for (char c : runs) n += c == '\n';
    return n;
  }

  std::string dir_;
};

bool IsIsoSecondsUtc(const std::string& s) {
  return std::regex_match(s, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"));
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

TEST_F(LiveBackendTest, RefusedArgvIsRefusedWithTheRuleAndStartsNothing) {
  LiveBackend live(Options());
  Evidence e = live.Read({"scontrol", "update", "NodeName=c1", "State=DOWN"});
  EXPECT_EQ(e.outcome, Outcome::kRefused);
  EXPECT_EQ(e.source, "live");
  EXPECT_NE(e.cause.find("DENIED mutating-word"), std::string::npos) << e.cause;
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.out.empty());

  Evidence c = live.Read({"sinfo", "-M", "elsewhere"});
  EXPECT_EQ(c.outcome, Outcome::kRefused);
  EXPECT_NE(c.cause.find("unknown-cluster"), std::string::npos) << c.cause;

  EXPECT_FALSE(std::filesystem::exists(dir_ + "/ran"));
  EXPECT_EQ(Runs(), 0);
  EXPECT_EQ(live.reads_started(), 0u);
}

TEST_F(LiveBackendTest, OkReadIsLabelledLiveWithItsTime) {
  LiveBackend live(Options());
  EXPECT_EQ(live.Label(), "live");
  const std::string before = NowIso();
  Evidence e = live.Read({"sinfo", "-p", "ok"});
  const std::string after = NowIso();
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(e.source, "live");
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.out, "PARTITION AVAIL\ngpu up\n");
  EXPECT_EQ(e.argv, (std::vector<std::string>{"sinfo", "-p", "ok"}));
  EXPECT_TRUE(e.cause.empty());
  EXPECT_FALSE(e.cached);
  EXPECT_GT(e.seconds, 0);
  EXPECT_TRUE(IsIsoSecondsUtc(e.evidence_time)) << e.evidence_time;
  EXPECT_LE(before, e.evidence_time);
  EXPECT_LE(e.evidence_time, after);
  EXPECT_EQ(Runs(), 1);
  EXPECT_EQ(live.reads_started(), 1u);
}

TEST_F(LiveBackendTest, CacheHitWithinTtlStartsNoProcess) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 30;
  o.max_per_minute = 1;  // a hit must not need the budget
  LiveBackend live(o);
  Evidence first = live.Read({"sinfo", "-p", "ok"});
  ASSERT_TRUE(first.ok()) << first.cause;
  std::this_thread::sleep_for(milliseconds(20));
  Evidence second = live.Read({"sinfo", "-p", "ok"});
  ASSERT_TRUE(second.ok()) << second.cause;
  EXPECT_EQ(Runs(), 1);
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(second.cached);
  EXPECT_GT(second.cache_age_seconds, 0);
  EXPECT_LT(second.cache_age_seconds, 30);
  EXPECT_EQ(second.out, first.out);
  EXPECT_EQ(second.evidence_time, first.evidence_time);  // the time the read was taken
  EXPECT_EQ(live.reads_started(), 1u);

  // A different argv is a different entry.
  Evidence other = live.Read({"sinfo", "-p", "gpu"});
  EXPECT_EQ(other.outcome, Outcome::kRefused) << "budget of 1 is spent";
  EXPECT_EQ(Runs(), 1);
}

TEST_F(LiveBackendTest, CacheExpiresAfterTtl) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 0.2;
  LiveBackend live(o);
  ASSERT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok());
  std::this_thread::sleep_for(milliseconds(300));
  Evidence e = live.Read({"sinfo", "-p", "ok"});
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e.cached);
  EXPECT_EQ(Runs(), 2);
}

TEST_F(LiveBackendTest, TtlZeroDisablesTheCache) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 0;
  LiveBackend live(o);
  Evidence a = live.Read({"sinfo", "-p", "ok"});
  Evidence b = live.Read({"sinfo", "-p", "ok"});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(a.cached);
  EXPECT_FALSE(b.cached);
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(live.reads_started(), 2u);
}

// N identical reads at once start one process, with the cache on or off.
void ExpectSingleFlight(LiveBackend& live, int* runs_out, const std::function<int()>& runs) {
  constexpr int kReaders = 8;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<Evidence> got(kReaders);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) {
    threads.emplace_back([&, i] {
      ++ready;
      while (!go) std::this_thread::yield();
      got[i] = live.Read({"sinfo", "-p", "slow"});
    });
  }
  while (ready < kReaders) std::this_thread::yield();
  go = true;
  for (std::thread& t : threads) t.join();
  *runs_out = runs();
  int fresh = 0;
  for (const Evidence& e : got) {
    EXPECT_EQ(e.outcome, Outcome::kOk) << e.cause;
    EXPECT_EQ(e.out, "slow answer\n");
    EXPECT_EQ(e.evidence_time, got[0].evidence_time);
    fresh += e.cached ? 0 : 1;
  }
  EXPECT_EQ(fresh, 1) << "exactly one reader started the process";
}

TEST_F(LiveBackendTest, SingleFlightStartsOneProcessForConcurrentIdenticalReads) {
  LiveBackend live(Options());
  int runs = 0;
  ExpectSingleFlight(live, &runs, [&] { return Runs(); });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(live.reads_started(), 1u);
}

TEST_F(LiveBackendTest, SingleFlightHoldsWithTheCacheOff) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 0;
  LiveBackend live(o);
  int runs = 0;
  ExpectSingleFlight(live, &runs, [&] { return Runs(); });
  EXPECT_EQ(runs, 1);
  // Once the flight has landed, the next read starts a new process.
  ASSERT_TRUE(live.Read({"sinfo", "-p", "slow"}).ok());
  EXPECT_EQ(Runs(), 2);
}

TEST_F(LiveBackendTest, RateBudgetRefusesTheReadOverTheLimit) {
  LiveOptions o = Options();
  o.max_per_minute = 3;
  LiveBackend live(o);
  ASSERT_TRUE(live.Read({"sinfo", "-p", "a"}).ok());
  ASSERT_TRUE(live.Read({"squeue", "-p", "b"}).ok());
  ASSERT_TRUE(live.Read({"sinfo", "-p", "c"}).ok());
  Evidence fourth = live.Read({"sinfo", "-p", "d"});
  EXPECT_EQ(fourth.outcome, Outcome::kRefused);
  EXPECT_EQ(fourth.cause.rfind("rate budget: 3 reads started in the last 60 s; retry in ", 0), 0u)
      << fourth.cause;
  EXPECT_NE(fourth.cause.find(" s or reuse the last answer"), std::string::npos) << fourth.cause;
  EXPECT_EQ(Runs(), 3);

  // Cached answers are still served: they cost slurmctld nothing.
  Evidence again = live.Read({"sinfo", "-p", "a"});
  EXPECT_TRUE(again.ok()) << again.cause;
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(Runs(), 3);
}

// One caller's fleet against another caller's occasional reads, over a 1 s budget window of 10
// starts: with principals (ReadAs) the budget is shared, without them the fleet takes it all.
// Returns {fleet's starts, alice's starts, alice's asks}.
struct Contest {
  int fleet = 0;
  int alice = 0;
  int asks = 0;
};
Contest RunContest(const LiveOptions& base, bool principals) {
  LiveOptions o = base;
  o.max_per_minute = 10;
  o.budget_window = milliseconds(1000);
  o.cache_ttl_seconds = 0;
  o.max_concurrent = 4;
  LiveBackend live(o);
  std::atomic<bool> stop{false};
  std::atomic<int> fleet{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const std::string which = "f" + std::to_string(t) + "_" + std::to_string(i);
        if (live.ReadAs({"sinfo", "-p", which}, principals ? "fleet" : "").ok()) ++fleet;
        std::this_thread::sleep_for(milliseconds(1));
      }
    });
  }
  std::this_thread::sleep_for(milliseconds(50));  // the fleet has the budget first
  Contest c;
  const auto end = Clock::now() + milliseconds(2500);
  for (int i = 0; Clock::now() < end; ++i) {
    ++c.asks;
    if (live.ReadAs({"squeue", "-p", "a" + std::to_string(i)}, principals ? "alice" : "").ok()) {
      ++c.alice;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  stop = true;
  for (std::thread& t : threads) t.join();
  c.fleet = fleet;
  return c;
}

TEST_F(LiveBackendTest, RateBudgetIsSharedFairlyBetweenPrincipals) {
  const Contest fair = RunContest(Options(), true);
  const Contest unfair = RunContest(Options(), false);
  std::cerr << "alice started " << fair.alice << " of " << fair.asks << " asks with principals (fleet "
            << fair.fleet << "), " << unfair.alice << " of " << unfair.asks << " without (fleet "
            << unfair.fleet << ")\n";
  // About 2.5 windows: the fleet alone in the first took all 10; then each principal has 5 a
  // window, and alice asks 10 times a window, so she starts at least one window's share.
  EXPECT_GE(fair.alice, 5) << "alice " << fair.alice << " of " << fair.asks << ", fleet " << fair.fleet;
  EXPECT_GE(fair.fleet, 10);
  EXPECT_LE(fair.fleet + fair.alice, 40) << "the budget itself still holds";
  // Without principals the same fleet starves her: she gets fewer than with them.
  EXPECT_LT(unfair.alice, fair.alice) << "unfair: alice " << unfair.alice << ", fleet " << unfair.fleet;
}

TEST_F(LiveBackendTest, AFairShareRefusalSaysWhoseShareAndWhenToRetry) {
  LiveOptions o = Options();
  o.max_per_minute = 4;
  o.cache_ttl_seconds = 0;
  LiveBackend live(o);
  // Alone, a principal may take the whole budget.
  ASSERT_TRUE(live.ReadAs({"sinfo", "-p", "a"}, "fleet").ok());
  ASSERT_TRUE(live.ReadAs({"sinfo", "-p", "b"}, "fleet").ok());
  // A second principal asks: the fleet's share is now 4 / 2 = 2, which it has used.
  ASSERT_TRUE(live.ReadAs({"sinfo", "-p", "c"}, "alice").ok());
  Evidence refused = live.ReadAs({"sinfo", "-p", "d"}, "fleet");
  EXPECT_EQ(refused.outcome, Outcome::kRefused);
  EXPECT_EQ(refused.cause.rfind("rate budget: this caller started 2 of the 4 reads allowed in the "
                                "last 60 s, its fair share while 2 callers read; retry in ", 0),
            0u)
      << refused.cause;
  EXPECT_TRUE(live.ReadAs({"sinfo", "-p", "e"}, "alice").ok()) << "alice's share is not spent";
  // The principal never reaches the process: the argv is the same as Read's.
  EXPECT_EQ(Runs(), 4);
}

TEST_F(LiveBackendTest, RateBudgetZeroDisablesIt) {
  LiveOptions o = Options();
  o.max_per_minute = 0;
  o.cache_ttl_seconds = 0;
  LiveBackend live(o);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok()) << i;
  EXPECT_EQ(Runs(), 5);
}

TEST_F(LiveBackendTest, ConcurrencyBoundRefusesAsBusyAndGivesTheBudgetBack) {
  LiveOptions o = Options();
  o.max_concurrent = 1;
  o.slot_wait = milliseconds(200);
  o.max_per_minute = 2;
  LiveBackend live(o);
  Evidence held;
  std::thread holder([&] { held = live.Read({"sinfo", "-p", "hold"}); });
  auto until = Clock::now() + std::chrono::seconds(5);
  while (!std::filesystem::exists(dir_ + "/holding") && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_TRUE(std::filesystem::exists(dir_ + "/holding"));

  const auto start = Clock::now();
  Evidence busy = live.Read({"sinfo", "-p", "ok"});
  const auto waited = Clock::now() - start;
  EXPECT_EQ(busy.outcome, Outcome::kRefused);
  EXPECT_EQ(busy.cause.rfind("busy: waited 0.2 s for a free read slot (1 at once", 0), 0u)
      << busy.cause;
  EXPECT_GE(waited, milliseconds(190));
  holder.join();
  EXPECT_TRUE(held.ok()) << held.cause;

  // The busy read's budget start was given back: the second of two is still allowed.
  Evidence after = live.Read({"sinfo", "-p", "ok"});
  EXPECT_TRUE(after.ok()) << after.cause;
  EXPECT_EQ(Runs(), 2);
}

TEST_F(LiveBackendTest, SlotWaitDefaultsToTheExecutorTimeout) {
  LiveOptions o = Options();
  o.max_concurrent = 1;
  o.executor.timeout = milliseconds(4000);
  LiveBackend live(o);
  Evidence held;
  std::thread holder([&] { held = live.Read({"sinfo", "-p", "hold"}); });
  auto until = Clock::now() + std::chrono::seconds(5);
  while (!std::filesystem::exists(dir_ + "/holding") && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  // The holder keeps the slot for 1.5 s, less than the 4 s executor timeout: the read waits.
  Evidence waited = live.Read({"sinfo", "-p", "ok"});
  holder.join();
  EXPECT_TRUE(waited.ok()) << waited.cause;
  EXPECT_TRUE(held.ok()) << held.cause;
  EXPECT_EQ(Runs(), 2);
}

TEST_F(LiveBackendTest, HangIsTimedOutAndNotCached) {
  LiveOptions o = Options();
  o.executor.timeout = milliseconds(300);
  LiveBackend live(o);
  Evidence e = live.Read({"sinfo", "-p", "hang"});
  EXPECT_EQ(e.outcome, Outcome::kTimedOut);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.cause.rfind("sinfo timed out after ", 0), 0u) << e.cause;
  EXPECT_NE(e.cause.find("a hang is itself evidence"), std::string::npos) << e.cause;
  EXPECT_TRUE(IsIsoSecondsUtc(e.evidence_time));
  Evidence again = live.Read({"sinfo", "-p", "hang"});
  EXPECT_EQ(again.outcome, Outcome::kTimedOut);
  EXPECT_FALSE(again.cached);
  EXPECT_EQ(Runs(), 2);
}

TEST_F(LiveBackendTest, SetReadTimeoutBoundsLaterReadsAndNotesTheirTimeouts) {
  LiveOptions o = Options();
  o.executor.timeout = milliseconds(300);
  LiveBackend live(o);
  // Raised: a read slower than the first timeout answers.
  live.SetReadTimeout(milliseconds(5000), "");
  EXPECT_TRUE(live.Read({"sinfo", "-p", "slow"}).ok());
  // Lowered again, with a note: the hang is killed at the new timeout and says why it may be no
  // hang at all; a read that failed otherwise carries no note.
  live.SetReadTimeout(milliseconds(400), "The note.");
  Evidence e = live.Read({"sinfo", "-p", "hang"});
  EXPECT_EQ(e.outcome, Outcome::kTimedOut);
  EXPECT_EQ(e.cause,
            "sinfo timed out after 400 ms; a hang is itself evidence (no output is not 'no "
            "rows'). The note.");
  Evidence failed = live.Read({"sinfo", "-p", "exit3"});
  EXPECT_EQ(failed.outcome, Outcome::kFailed);
  EXPECT_EQ(failed.cause.find("The note."), std::string::npos) << failed.cause;
}

TEST_F(LiveBackendTest, NonZeroExitIsFailedWithItsCauseAndNotCached) {
  LiveBackend live(Options());
  Evidence e = live.Read({"sinfo", "-p", "exit3"});
  EXPECT_EQ(e.outcome, Outcome::kFailed);
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_EQ(e.cause,
            "sinfo exited 3: sinfo: error: slurm_load_partitions: Unable to contact slurm "
            "controller (connect failure). The read failed; this is not an empty result.");
  EXPECT_NE(e.err.find("Unable to contact"), std::string::npos);
  Evidence again = live.Read({"sinfo", "-p", "exit3"});
  EXPECT_FALSE(again.cached);
  EXPECT_EQ(Runs(), 2);
}

// Without munged a Slurm client opens with a hint and ends with the failure: the cause keeps both.
TEST_F(LiveBackendTest, CauseKeepsTheFirstAndTheLastLineOfStderr) {
  LiveBackend live(Options());
  Evidence e = live.Read({"sinfo", "-p", "nomunge"});
  EXPECT_EQ(e.outcome, Outcome::kFailed);
  EXPECT_EQ(e.cause,
            "sinfo exited 1: sinfo: error: If munged is up, restart with --num-threads=10 ... "
            "slurm_load_partitions: Protocol authentication error. The read failed; this is not "
            "an empty result.");
}

TEST_F(LiveBackendTest, ProgramNotInstalledIsUnavailableAndSpendsNoBudget) {
  LiveOptions o = Options();
  o.max_per_minute = 1;
  LiveBackend live(o);
  Evidence e = live.Read({"sdiag"});
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_NE(e.cause.find("not installed"), std::string::npos) << e.cause;
  EXPECT_EQ(live.reads_started(), 0u);
  EXPECT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok());
}

// The readiness probe's record: the last read of each program, from the reads agents made.
const ProgramReads* Find(const std::vector<ProgramReads>& reads, const std::string& program) {
  for (const ProgramReads& r : reads) {
    if (r.program == program) return &r;
  }
  return nullptr;
}

TEST_F(LiveBackendTest, LastReadsRecordEachProgramsLastReadAndNothingElse) {
  LiveOptions o = Options();
  o.cache_ttl_seconds = 30;
  LiveBackend live(o);
  // Before any read every resolved program is listed, never read; one not installed says why.
  std::vector<ProgramReads> none = live.LastReads();
  ASSERT_NE(Find(none, "sinfo"), nullptr);
  EXPECT_TRUE(Find(none, "sinfo")->last_read.empty());
  EXPECT_TRUE(Find(none, "sinfo")->unusable.empty());
  ASSERT_NE(Find(none, "sdiag"), nullptr);
  EXPECT_NE(Find(none, "sdiag")->unusable.find("not installed"), std::string::npos);

  ASSERT_TRUE(live.Read({"sinfo", "-p", "ok"}).ok());
  const ProgramReads ok = *Find(live.LastReads(), "sinfo");
  EXPECT_EQ(ok.outcome, "ok");
  EXPECT_TRUE(IsIsoSecondsUtc(ok.last_read)) << ok.last_read;
  EXPECT_EQ(ok.last_ok, ok.last_read);
  EXPECT_TRUE(ok.cause.empty());

  // A failure is the last read now, with its cause; the last success is kept.
  EXPECT_FALSE(live.Read({"sinfo", "-p", "exit3"}).ok());
  const ProgramReads failed = *Find(live.LastReads(), "sinfo");
  EXPECT_EQ(failed.outcome, "failed");
  EXPECT_NE(failed.cause.find("Unable to contact slurm controller"), std::string::npos);
  EXPECT_EQ(failed.last_ok, ok.last_read);

  // A cache hit and a read the guard refused start nothing and change nothing.
  EXPECT_TRUE(live.Read({"sinfo", "-p", "ok"}).cached);
  EXPECT_EQ(live.Read({"sinfo", "-M", "elsewhere"}).outcome, Outcome::kRefused);
  EXPECT_EQ(Find(live.LastReads(), "sinfo")->outcome, "failed");
  EXPECT_TRUE(Find(live.LastReads(), "squeue")->last_read.empty());

  // A program that cannot run is recorded as such when asked for.
  EXPECT_EQ(live.Read({"sdiag"}).outcome, Outcome::kUnavailable);
  EXPECT_EQ(Find(live.LastReads(), "sdiag")->outcome, "unavailable");
}

TEST_F(LiveBackendTest, ReadinessSaysFailingOkOrUnknownFromTheLastReads) {
  LiveBackend live(Options());
  nlohmann::json j = nlohmann::json::parse(ReadinessJson(live));
  EXPECT_EQ(j["ready"], true);
  EXPECT_EQ(j["backend"], "live");
  EXPECT_EQ(j["slurm"], "unknown");  // nothing read yet: no evidence, not "ok"
  ASSERT_TRUE(live.Read({"squeue", "-p", "ok"}).ok());
  j = nlohmann::json::parse(ReadinessJson(live));
  EXPECT_EQ(j["slurm"], "ok");
  ASSERT_FALSE(live.Read({"sinfo", "-p", "exit3"}).ok());
  j = nlohmann::json::parse(ReadinessJson(live));
  EXPECT_EQ(j["slurm"], "failing");
  int seen = 0;
  for (const nlohmann::json& p : j["programs"]) {
    if (p["program"] == "sinfo") {
      EXPECT_EQ(p["state"], "failing");
      EXPECT_EQ(p["outcome"], "failed");
      EXPECT_TRUE(p["last_ok"].is_null());
      ++seen;
    } else if (p["program"] == "squeue") {
      EXPECT_EQ(p["state"], "ok");
      EXPECT_EQ(p["last_ok"], p["last_read"]);
      ++seen;
    } else if (p["program"] == "sacct") {
      EXPECT_EQ(p["state"], "never_read");
      EXPECT_FALSE(p.contains("last_read"));
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3) << j.dump();
}

TEST_F(LiveBackendTest, ReadLogServesTheTailOfTheConfiguredFile) {
  const std::string log = dir_ + "/slurmctld.log";
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "line " + std::to_string(i) + "\n";
  WriteFile(log, text);
  LiveOptions o = Options();
  o.log_files = {{"slurmctld", log}, {"slurmd", dir_ + "/missing.log"}};
  LiveBackend live(o);

  Evidence e = live.ReadLog("slurmctld", 3);
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_EQ(e.out, "line 8\nline 9\nline 10\n");
  EXPECT_EQ(e.argv, (std::vector<std::string>{"log", "slurmctld"}));
  EXPECT_EQ(e.source, "live");
  EXPECT_FALSE(e.out_truncated);
  EXPECT_TRUE(IsIsoSecondsUtc(e.evidence_time));
  EXPECT_EQ(live.ReadLog("slurmctld", 0).out, text);
  EXPECT_EQ(live.ReadLog("slurmctld", 100).out, text);
  EXPECT_EQ(Runs(), 0) << "a log read starts no process";

  Evidence none = live.ReadLog("slurmdbd", 10);
  EXPECT_EQ(none.outcome, Outcome::kUnavailable);
  EXPECT_NE(
      none.cause.find("no log file is configured for slurmdbd (configured: slurmctld, slurmd)"),
      std::string::npos)
      << none.cause;

  Evidence missing = live.ReadLog("slurmd", 10);
  EXPECT_EQ(missing.outcome, Outcome::kUnavailable);
  EXPECT_NE(missing.cause.find("cannot read the slurmd log"), std::string::npos) << missing.cause;
}

TEST_F(LiveBackendTest, ReadLogIsBoundedByMaxLogBytes) {
  const std::string log = dir_ + "/slurmctld.log";
  WriteFile(log, "first line is long\nsecond\nthird\n");
  LiveOptions o = Options();
  o.log_files = {{"slurmctld", log}};
  o.max_log_bytes = 16;  // the last 16 bytes start inside "first line is long"
  LiveBackend live(o);
  Evidence e = live.ReadLog("slurmctld", 0);
  ASSERT_TRUE(e.ok()) << e.cause;
  EXPECT_EQ(e.out, "second\nthird\n");
  EXPECT_TRUE(e.out_truncated);
}

TEST(OutcomeNameTest, NamesEveryOutcome) {
  EXPECT_STREQ(OutcomeName(Outcome::kOk), "ok");
  EXPECT_STREQ(OutcomeName(Outcome::kFailed), "failed");
  EXPECT_STREQ(OutcomeName(Outcome::kTimedOut), "timed_out");
  EXPECT_STREQ(OutcomeName(Outcome::kRefused), "refused");
  EXPECT_STREQ(OutcomeName(Outcome::kUnavailable), "unavailable");
}

}  // namespace
}  // namespace slurm_rca::mcp

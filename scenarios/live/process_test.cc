// RunTool (process.h) on /bin/sh, without a lab: what it reports of a tool that runs, spends CPU
// and exits.
#include "scenarios/live/process.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace slurm_rca::live {
namespace {

TEST(RunTool, ReportsTheToolsOutputExitAndOwnCpu) {
  // A shell loop that spends CPU in the shell itself (no child processes), then says so.
  const ToolResult r = RunTool(
      {"/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done; exit 3"},
      {}, std::chrono::seconds(60));
  EXPECT_TRUE(r.error.empty()) << r.error;
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_GT(r.cpu_seconds, 0.05);  // the loop takes about 0.3 s of CPU here
  EXPECT_LE(r.cpu_seconds, r.seconds + 0.05);  // one thread: no more CPU than wall time
}

TEST(RunTool, AToolThatSleepsSpendsAlmostNoCpu) {
  const ToolResult r = RunTool({"/bin/sleep", "0.3"}, {}, std::chrono::seconds(10));
  EXPECT_TRUE(r.ok()) << r.Summary();
  EXPECT_GE(r.seconds, 0.29);
  EXPECT_LT(r.cpu_seconds, 0.1);
}

void* SleepForever(void*) {
  for (;;) ::pause();
  return nullptr;
}

// What a SIGKILLed slurmctld looks like for a moment: its leader thread has exited (a zombie)
// while another thread still runs and holds its sockets. That process is alive; it is dead once
// no thread is left.
TEST(IsAlive, AZombieLeaderWithARunningThreadIsStillAlive) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    pthread_t t;
    if (pthread_create(&t, nullptr, SleepForever, nullptr) != 0) ::_exit(2);
    ::syscall(SYS_exit, 0);  // the leader thread alone
  }
  auto id = IdentifyProcess(pid);
  ASSERT_TRUE(id);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ProcessState(*id).value_or('?') != 'Z' && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(ProcessState(*id).value_or('?'), 'Z') << "the leader thread did not exit";
  EXPECT_TRUE(IsAlive(*id)) << "a thread of it still runs";
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(IsAlive(*id));
}


// Lab::Down's leftover job processes: a slurmstepd or job shell that ignores SIGTERM is killed
// after the grace period. Stopped together they take one grace period, not one each (six of
// them stopped one by one would take at least 6 s here).
TEST(StopProcesses, StopsProcessesThatIgnoreTermInOneGracePeriod) {
  std::vector<ProcessId> ids;
  for (int i = 0; i < 6; ++i) {
    // A shell that ignores SIGTERM and waits without a child of its own (read on a pipe that
    // never gets a line), so that nothing is left behind when it is killed.
    SpawnResult r = SpawnDaemon({"/bin/sh", "-c", "trap '' TERM; mkfifo /tmp/stopprocesses.$$ "
                                 "&& exec 3<>/tmp/stopprocesses.$$ && rm /tmp/stopprocesses.$$ "
                                 "&& read x <&3"},
                                {"PATH=/usr/bin:/bin"}, "/dev/null");
    ASSERT_TRUE(r.id) << r.error;
    ids.push_back(*r.id);
  }
  ids.push_back(ids[0]);  // the same process twice is not an error
  // Let every shell reach its trap.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (const ProcessId& id : ids) ASSERT_TRUE(IsAlive(id));
  auto start = std::chrono::steady_clock::now();
  std::vector<ProcessId> alive = StopProcesses(ids, std::chrono::seconds(1));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(alive.empty()) << alive.size() << " still alive";
  for (const ProcessId& id : ids) EXPECT_FALSE(IsAlive(id)) << id.ToString();
  EXPECT_LT(seconds, 4.0) << "stopped one at a time?";
}

TEST(StopProcesses, GoneAndEmptyListsAreNotFailures) {
  EXPECT_TRUE(StopProcesses({}, std::chrono::milliseconds(10)).empty());
  // A PID with a start time that no process has.
  EXPECT_TRUE(StopProcesses({ProcessId{.pid = ::getpid(), .start_time = 1}},
                            std::chrono::milliseconds(10))
                  .empty());
  EXPECT_TRUE(IsAlive(*IdentifyProcess(::getpid())));
}

}  // namespace
}  // namespace slurm_rca::live

// RunTool (process.h) on /bin/sh, without a lab: what it reports of a tool that runs, spends CPU
// and exits.
#include "scenarios/live/process.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace slurm_rca::live

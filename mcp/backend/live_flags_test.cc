#include "mcp/backend/live_flags.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace slurm_rca::mcp {
namespace {

TEST(LiveFlagsTest, TheDefaultsAreLiveOptionsDefaults) {
  base::Result<LiveOptions> got = LiveOptionsFromFlags(LiveFlags{});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  const LiveOptions want{};
  EXPECT_EQ(got->executor.trusted_dirs, want.executor.trusted_dirs);
  EXPECT_EQ(got->executor.timeout, want.executor.timeout);
  EXPECT_EQ(got->executor.slurm_conf, want.executor.slurm_conf);
  EXPECT_EQ(got->clusters, want.clusters);
  EXPECT_EQ(got->cache_ttl_seconds, want.cache_ttl_seconds);
  EXPECT_EQ(got->max_concurrent, want.max_concurrent);
  EXPECT_EQ(got->max_per_minute, want.max_per_minute);
  EXPECT_EQ(got->executor.max_output_bytes, want.executor.max_output_bytes);
  EXPECT_EQ(got->executor.max_output_bytes, kLiveMaxOutputBytes);
  EXPECT_EQ(got->log_files, want.log_files);
  EXPECT_EQ(got->fabric.sys_root, want.fabric.sys_root);
  EXPECT_TRUE(ServeArgs(LiveFlags{}).empty());
}

TEST(LiveFlagsTest, EachFlagReachesItsOption) {
  LiveFlags f;
  f.slurm_conf = "/etc/slurm/x.conf";
  f.clusters = "a,,b";
  f.trusted_dirs = "/opt/slurm/bin";
  f.timeout = 2.5;
  f.cache_ttl = 0;
  f.max_concurrent = 8;
  f.max_per_minute = 0;
  f.max_output_mib = 0.5;
  f.log_files = {"slurmctld=/var/log/ctld.log"};
  f.fabric_root = "/tmp/fabric";
  base::Result<LiveOptions> got = LiveOptionsFromFlags(f);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->executor.slurm_conf, "/etc/slurm/x.conf");
  EXPECT_EQ(got->clusters, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(got->executor.trusted_dirs, std::vector<std::string>{"/opt/slurm/bin"});
  EXPECT_EQ(got->executor.timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(got->cache_ttl_seconds, 0);
  EXPECT_EQ(got->max_concurrent, 8);
  EXPECT_EQ(got->max_per_minute, 0);
  EXPECT_EQ(got->executor.max_output_bytes, 512u * 1024);
  EXPECT_EQ(got->log_files.at("slurmctld"), "/var/log/ctld.log");
  EXPECT_EQ(got->fabric.cgroup_root, "/tmp/fabric/sys/fs/cgroup");
  EXPECT_EQ(ServeArgs(f),
            (std::vector<std::string>{"--slurm-conf", "/etc/slurm/x.conf", "--clusters", "a,,b",
                                      "--log-file", "slurmctld=/var/log/ctld.log",
                                      "--trusted-dirs", "/opt/slurm/bin", "--timeout", "2.500000",
                                      "--cache-ttl", "0.000000", "--max-concurrent", "8",
                                      "--max-per-minute", "0", "--max-output-mib", "0.500000",
                                      "--fabric-root", "/tmp/fabric"}));
}

TEST(LiveFlagsTest, RefusalsNameTheFlagAndTheValue) {
  LiveFlags relative_dir, bare_daemon, no_daemon, no_path, relative_root;
  relative_dir.trusted_dirs = "/usr/bin:bin";
  bare_daemon.log_files = {"slurmctld"};
  no_daemon.log_files = {"=/x"};
  no_path.log_files = {"slurmd="};
  relative_root.fabric_root = "fabric";
  const std::vector<std::pair<LiveFlags, std::string>> cases = {
      {relative_dir, "--trusted-dirs entry 'bin' is not absolute"},
      {bare_daemon, "--log-file takes DAEMON=PATH, got 'slurmctld'"},
      {no_daemon, "--log-file takes DAEMON=PATH, got '=/x'"},
      {no_path, "--log-file takes DAEMON=PATH, got 'slurmd='"},
      {relative_root, "--fabric-root 'fabric' is not absolute"},
  };
  for (const auto& [flags, message] : cases) {
    base::Result<LiveOptions> got = LiveOptionsFromFlags(flags);
    ASSERT_FALSE(got.ok()) << message;
    EXPECT_EQ(got.status().code(), base::Status::Code::kInvalidArgument);
    EXPECT_EQ(got.status().message(), message);
  }
}

TEST(LiveFlagsTest, ATimeoutGivenAtItsDefaultIsStillPassedOn) {
  LiveFlags f;
  f.timeout_given = true;
  EXPECT_EQ(ServeArgs(f), (std::vector<std::string>{"--timeout", "20.000000"}));
}

// Lines as `scontrol show config` prints them (Slurm 22.05 to 25.11).
constexpr char kConfig[] =
    "Configuration data as of 2026-12-07T10:00:00\n"
    "MaxStepCount            = 40000\n"
    "MessageTimeout          = 30 sec\n"
    "MinJobAge               = 300 sec\n";

TEST(MessageTimeoutTest, IsReadFromItsLine) {
  base::Result<int> got = ParseMessageTimeout(kConfig);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, 30);
  EXPECT_EQ(*ParseMessageTimeout("MessageTimeout = 10 sec"), 10);
  EXPECT_EQ(*ParseMessageTimeout("  MessageTimeout\t= 100 sec \r\n"), 100);
}

TEST(MessageTimeoutTest, AbsentGarbageOrOtherUnitsAreUnknownAndSayWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "`scontrol show config` printed no MessageTimeout line"},
      {"MinJobAge = 300 sec\n", "`scontrol show config` printed no MessageTimeout line"},
      {"MessageTimeoutX = 30 sec\n", "`scontrol show config` printed no MessageTimeout line"},
      {"MessageTimeout = 30 min\n",
       "`scontrol show config` printed MessageTimeout = '30 min', not 'N sec'"},
      {"MessageTimeout = 30\n", "`scontrol show config` printed MessageTimeout = '30', not 'N sec'"},
      {"MessageTimeout = (null)\n",
       "`scontrol show config` printed MessageTimeout = '(null)', not 'N sec'"},
      {"MessageTimeout = -5 sec\n",
       "`scontrol show config` printed MessageTimeout = '-5 sec', not 'N sec'"},
      {"MessageTimeout = 99999999999 sec\n",
       "`scontrol show config` printed MessageTimeout = '99999999999 sec', not 'N sec'"},
  };
  for (const auto& [text, why] : cases) {
    base::Result<int> got = ParseMessageTimeout(text);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().message(), why) << text;
  }
}

TEST(MessageTimeoutTest, AReadThatGaveNoEvidenceIsUnknown) {
  Evidence timed_out;
  timed_out.outcome = Evidence::Outcome::kTimedOut;
  timed_out.cause = "scontrol timed out after 20 s; a hang is itself evidence";
  EXPECT_EQ(MessageTimeoutOf(timed_out).status().message(),
            "`scontrol show config` timed out at start");
  Evidence failed;
  failed.outcome = Evidence::Outcome::kFailed;
  failed.cause =
      "scontrol exited 1: slurm_load_ctl_conf error: Unable to contact slurm controller (connect "
      "failure). The read failed; this is not an empty result.";
  EXPECT_EQ(MessageTimeoutOf(failed).status().message(),
            "`scontrol show config` at start: scontrol exited 1: slurm_load_ctl_conf error: "
            "Unable to contact slurm controller (connect failure)");
  Evidence missing;
  missing.outcome = Evidence::Outcome::kUnavailable;
  missing.cause = "scontrol is not installed in the trusted directories /usr/bin";
  EXPECT_EQ(MessageTimeoutOf(missing).status().message(),
            "`scontrol show config` at start: scontrol is not installed in the trusted "
            "directories /usr/bin");
  Evidence ok;
  ok.outcome = Evidence::Outcome::kOk;
  ok.out = kConfig;
  EXPECT_EQ(*MessageTimeoutOf(ok), 30);
}

TEST(ReadTimeoutChoiceTest, BelowTheReadTimeoutNothingChangesAndNothingIsSaid) {
  for (bool given : {false, true}) {
    ReadTimeoutChoice c = ChooseReadTimeout(20, given, 10);
    EXPECT_EQ(c.timeout, 20);
    EXPECT_EQ(c.message, "");
    EXPECT_EQ(c.timed_out_note, "");
  }
}

TEST(ReadTimeoutChoiceTest, AtOrAboveItTheDefaultIsRaisedPastMessageTimeout) {
  ReadTimeoutChoice c = ChooseReadTimeout(20, false, 30);
  EXPECT_EQ(c.timeout, 40);
  EXPECT_EQ(c.message,
            "the controller's MessageTimeout is 30 s, at or above the read timeout 20 s: reads "
            "now time out at 40 s, so a controller that is down fails (connect failure) before a "
            "read is killed; --timeout overrides");
  EXPECT_EQ(c.timed_out_note, "");  // 40 s is above MessageTimeout: a timeout is a hang
  EXPECT_EQ(ChooseReadTimeout(20, false, 20).timeout, 30);  // equal is not enough
}

TEST(ReadTimeoutChoiceTest, AtOrAboveItAGivenTimeoutStaysWithAWarning) {
  ReadTimeoutChoice c = ChooseReadTimeout(5, true, 10);
  EXPECT_EQ(c.timeout, 5);
  EXPECT_EQ(c.message,
            "the controller's MessageTimeout is 10 s, at or above --timeout 5 s: a controller "
            "that is down and one that is hung will both read as timed out (without --timeout, "
            "reads would time out at 20 s)");
  EXPECT_EQ(c.timed_out_note,
            "The read timeout (5 s) is not above the controller's MessageTimeout (10 s), so at "
            "this timeout a controller that is down (connection refused) and one that is hung "
            "look the same.");
}

TEST(ReadTimeoutChoiceTest, UnknownKeepsTheTimeoutAndSaysWhy) {
  for (bool given : {false, true}) {
    ReadTimeoutChoice c = ChooseReadTimeout(
        2.5, given, base::Status::Unavailable("`scontrol show config` timed out at start"));
    EXPECT_EQ(c.timeout, 2.5);
    EXPECT_EQ(c.message,
              "MessageTimeout unknown: `scontrol show config` timed out at start; the read "
              "timeout stays 2.5 s, at which a controller that is down may read as timed out "
              "like a hung one");
    EXPECT_EQ(c.timed_out_note,
              "The controller's MessageTimeout is unknown (`scontrol show config` timed out at "
              "start), so at this read timeout (2.5 s) a controller that is down and one that is "
              "hung may look the same.");
  }
}

}  // namespace
}  // namespace slurm_rca::mcp

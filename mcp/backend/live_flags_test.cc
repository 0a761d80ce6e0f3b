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

}  // namespace
}  // namespace slurm_rca::mcp

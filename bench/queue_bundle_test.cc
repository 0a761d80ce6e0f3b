#include "bench/queue_bundle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "mcp/backend/replay_backend.h"
#include "mcp/test_temp_dir.h"

namespace slurm_rca::bench {
namespace {

namespace fs = std::filesystem;
const std::string kDemo = std::string(SLURM_RCA_SOURCE_DIR) + "/fixtures/demo";

TEST(QueueBundleTest, ReplaysTheGeneratedJobsAndTheRecordedNodes) {
  const std::string dir = mcp::testing_tools::MakeTempDir("queue-bundle");
  ASSERT_TRUE(WriteQueueBundle(kDemo, dir, 200).ok());
  auto made = mcp::ReplayBackend::Open(dir);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto demo = mcp::ReplayBackend::Open(kDemo);
  ASSERT_TRUE(demo.ok());

  const mcp::Evidence queue = (*made)->Read({"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"});
  EXPECT_EQ(std::count(queue.out.begin(), queue.out.end(), '\n'), 200);
  EXPECT_EQ(queue.out.rfind("5001|", 0), 0u);
  const std::vector<std::string> nodes = {"sinfo", "--noheader", "-N", "-o", "%N|%P|%T|%C|%G|%E"};
  EXPECT_EQ((*made)->Read(nodes).out, (*demo)->Read(nodes).out);
  EXPECT_FALSE((*made)->Read(nodes).out.empty());

  // The same bytes on every run.
  const std::string again = mcp::testing_tools::MakeTempDir("queue-bundle");
  ASSERT_TRUE(WriteQueueBundle(kDemo, again, 200).ok());
  auto remade = mcp::ReplayBackend::Open(again);
  ASSERT_TRUE(remade.ok());
  EXPECT_EQ((*remade)->Read({"squeue", "--noheader", "-o", "%i|%P|%u|%T|%M|%D|%R"}).out, queue.out);
  fs::remove_all(dir);
  fs::remove_all(again);
}

TEST(QueueBundleTest, RefusesABundleWithoutOne) {
  const std::string dir = mcp::testing_tools::MakeTempDir("queue-bundle");
  EXPECT_EQ(WriteQueueBundle(dir + "/nowhere", dir, 10).code(), base::Status::Code::kIoError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace slurm_rca::bench

// slurm-mcp against the live control plane (ctest label `live`): every topic answers with parsed
// rows through the guard and the live back-end, and with the accounting database frozen the
// accounting topic is a labelled timeout within its limit while nodes still answers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "mcp/backend/live_backend.h"
#include "mcp/topics/overview.h"
#include "mcp/topics/tools.h"
#include "scenarios/live/faults.h"
#include "scenarios/live/lab.h"
#include "tests/live_release.h"
#include "tests/live_workload.h"

namespace slurm_rca {
namespace {

// The lab's templates, from this source tree (main sets them in rca-bench: base::DataPaths).
const bool kLabTemplatesSet =
    (live::SetLabTemplates(std::string(SLURM_RCA_SOURCE_DIR) + "/scenarios/live/templates"), true);

using mcp::Json;

class NoContext : public mcp::ToolContext {
 public:
  void Progress(double, std::optional<double>, const std::string&) override {}
  void Log(const std::string&, const Json&) override {}
  bool Cancelled() const override { return false; }
};

TEST(McpLive, EveryTopicAnswersAndAFrozenDatabaseIsALabelledTimeout) {
  if (::geteuid() != 0) GTEST_SKIP() << "the live lab needs root";
  if (base::Status s = testing_live::ReleaseReady(); !s.ok()) GTEST_SKIP() << s.message();
  char dir[] = "/tmp/rca-mcplive-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  live::Lab lab(live::LabOptions{.dir = dir, .nodes = 4, .port_base = 28800,
                                 .slurm_prefix = testing_live::SlurmPrefix()});
  struct Down {
    live::Lab& lab;
    ~Down() { lab.Down(std::cout); }
  } down{lab};
  base::Status up = lab.Up(std::cout);
  ASSERT_TRUE(up.ok()) << up.message();
  ASSERT_TRUE(testing_live::StartTopicWorkload(lab));

  mcp::LiveOptions o;
  o.executor.trusted_dirs = lab.SlurmDirs();
  o.executor.trusted_dirs.push_back(lab.Path("nodes/node2/bin"));
  o.executor.slurm_conf = lab.SlurmConf();
  o.executor.timeout = std::chrono::seconds(5);
  o.clusters = {"rca"};
  o.cache_ttl_seconds = 0;
  o.max_per_minute = 0;
  o.log_files = {{"slurmctld", lab.Path("log/slurmctld.log")},
                 {"slurmdbd", lab.Path("log/slurmdbd.log")},
                 {"slurmd", lab.Path("log/slurmd-node1.log")}};
  mcp::LiveBackend backend(o);
  std::vector<mcp::Tool> tools = mcp::BuildTools(mcp::SurfaceOptions{.backend = &backend});
  NoContext context;
  auto query = [&](const std::string& topic) { return tools[1].run({{"topic", topic}}, context); };

  for (const mcp::Topic& topic : mcp::Topics()) {
    SCOPED_TRACE(topic.name);
    mcp::ToolResult r = query(topic.name);
    if (topic.name == "fabric") {
      // The lab has no InfiniBand or RoCE port: no evidence, said as such, never an empty table.
      EXPECT_TRUE(r.is_error) << mcp::ResultText(r);
      EXPECT_NE(mcp::ResultText(r).find("NO EVIDENCE"), std::string::npos) << mcp::ResultText(r);
      continue;
    }
    if (topic.name == "gpu_idle") {
      // This server samples no GPU (sampling is off unless asked): no evidence, never an idle GPU.
      EXPECT_TRUE(r.is_error) << mcp::ResultText(r);
      EXPECT_NE(mcp::ResultText(r).find("NO EVIDENCE"), std::string::npos) << mcp::ResultText(r);
      EXPECT_NE(mcp::ResultText(r).find("sampling is off"), std::string::npos)
          << mcp::ResultText(r);
      continue;
    }
    // slurmdbd records a job's end asynchronously: give accounting a few seconds to show it.
    for (int i = 0; i < 20 && topic.name == "accounting" && !r.is_error &&
                    (*r.structured)["rows"].empty();
         ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      r = query(topic.name);
    }
    ASSERT_FALSE(r.is_error) << mcp::ResultText(r);
    const Json& s = *r.structured;
    EXPECT_EQ(s["source"], "live");
    EXPECT_EQ(s["outcome"], "ok");
    if (topic.format == mcp::Format::kText) {
      EXPECT_FALSE(s["text"].get<std::string>().empty());
    } else {
      EXPECT_GT(s["rows"].size(), 0u) << mcp::ResultText(r);
      EXPECT_FALSE(s.contains("parse_error")) << s.dump();
    }
  }

  // The overview's own sinfo read (%a the partition's state, %H the reason's time) on real
  // Slurm: a drained node is listed with its reason and since-when; no partition is down.
  auto drained = live::InjectFault(lab, "drain", live::FaultTarget{.node = "node3"});
  ASSERT_TRUE(drained.status.ok()) << drained.status.message();
  mcp::ToolResult overview = tools[0].run(Json::object(), context);
  ASSERT_FALSE(overview.Fields().is_error) << mcp::ResultText(overview);
  {
    const Json& nodes = (*overview.Fields().structured)["sections"][0];
    EXPECT_EQ(nodes["argv"], mcp::OverviewReads()[0].argv);
    EXPECT_EQ(nodes["outcome"], "ok") << nodes.dump();
    EXPECT_EQ(nodes["summary"]["nodes"], 4) << nodes.dump();
    bool listed = false;
    for (const Json& u : nodes["summary"]["unavailable"]) {
      if (u["hostlist"] != "node3") continue;
      listed = true;
      EXPECT_EQ(u["state"].get<std::string>().rfind("drain", 0), 0u) << u.dump();
      EXPECT_TRUE(u.contains("since")) << u.dump();
    }
    EXPECT_TRUE(listed) << mcp::ResultText(overview);
    EXPECT_EQ(nodes["summary"]["partitions_not_up"], Json::array()) << nodes.dump();
    EXPECT_LE(mcp::ResultText(overview).size(), mcp::kOverviewMaxBytes);
    std::cout << mcp::ResultText(overview);
  }
  EXPECT_TRUE(live::HealFault(lab, "drain", live::FaultTarget{.node = "node3"}).status.ok());

  auto frozen = live::InjectFault(lab, "db-freeze", {});
  ASSERT_TRUE(frozen.status.ok());
  auto start = std::chrono::steady_clock::now();
  mcp::ToolResult acct = query("accounting");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(acct.is_error);
  EXPECT_NE(mcp::ResultText(acct).find("NO EVIDENCE (timed_out, live"), std::string::npos)
      << mcp::ResultText(acct);
  EXPECT_LT(seconds, 7.0) << "the timeout is 5 s";
  mcp::ToolResult nodes = query("nodes");
  EXPECT_FALSE(nodes.is_error) << mcp::ResultText(nodes);
  EXPECT_TRUE(live::HealFault(lab, "db-freeze", {}).status.ok());
  EXPECT_TRUE(live::HealFault(lab, "gpu-fake", live::FaultTarget{.node = "node2"}).status.ok());
}

}  // namespace
}  // namespace slurm_rca

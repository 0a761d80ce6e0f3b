// config_test: every shipped configuration loads, A-E differ in what the ablation says they add,
// and each broken configuration (agents/testdata/broken_configs, its expected errors in its
// header: `# deny 'message text'`, testing/README.md) is refused with those errors. Also the ticket rules of the reference agents.
#include "agents/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "agents/harness.h"
#include "agents/reference.h"
#include "scenarios/validate.h"
#include "testing/corpus.h"

namespace slurm_rca::agents {
namespace {

namespace fs = std::filesystem;
const std::string kSource = SLURM_RCA_SOURCE_DIR;

std::vector<std::string> SuiteIds() {
  auto suite = scenarios::LoadSuite(scenarios::ScenarioPaths(kSource + "/scenarios"));
  std::vector<std::string> ids;
  for (const auto& s : suite.scenarios) ids.push_back(s.id);
  return ids;
}

TEST(Configs, ShippedOnesLoadAndAddWhatTheAblationSays) {
  auto ids = SuiteIds();
  std::map<std::string, AgentConfig> c;
  for (const std::string& name : ConfigNames(kSource + "/agents/configs")) {
    auto r = LoadConfig(kSource + "/agents/configs/" + name + ".yaml", ids);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    c[name] = *r;
  }
  ASSERT_EQ(c.size(), 8u);
  EXPECT_EQ(c["A"].tools, "raw");
  EXPECT_EQ(c["B"].tools, "mcp");
  EXPECT_FALSE(c["B"].graph);
  EXPECT_TRUE(c["C"].graph);
  EXPECT_TRUE(c["C"].specialists.empty());
  EXPECT_EQ(c["D"].specialists.size(), 4u);
  EXPECT_FALSE(c["D"].abstention);
  ASSERT_TRUE(c["E"].abstention);
  EXPECT_EQ(c["E"].specialists, c["D"].specialists);
  for (const char* r : {"folk", "graphwalk", "ticketonly"}) EXPECT_EQ(c[r].kind, "reference") << r;
  std::set<std::string> hashes;
  for (const auto& [n, x] : c) hashes.insert(x.hash);
  EXPECT_EQ(hashes.size(), c.size());  // every file hashes differently
}

// Through the one corpus runner (testing/corpus.h): each file's header names its errors by
// message text (configuration errors have no rule ids), exactly.
// What each shipped configuration's session opens (agents::NeedsOf): A reads raw commands through
// the back-end only; the MCP configurations and the reference agents that read evidence need the
// slurm-mcp child only; ticketonly reads nothing.
TEST(Configs, EachOpensOnlyWhatItReads) {
  auto ids = SuiteIds();
  const std::map<std::string, std::pair<bool, bool>> want = {  // {client, backend}
      {"A", {false, true}},     {"B", {true, false}},         {"C", {true, false}},
      {"D", {true, false}},     {"E", {true, false}},         {"folk", {true, false}},
      {"graphwalk", {true, false}}, {"ticketonly", {false, false}}};
  for (const std::string& name : ConfigNames(kSource + "/agents/configs")) {
    auto r = LoadConfig(kSource + "/agents/configs/" + name + ".yaml", ids);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    ASSERT_TRUE(want.count(name)) << name << ": a configuration this test does not know";
    SessionNeeds needs = NeedsOf(*r);
    EXPECT_EQ(needs.client, want.at(name).first) << name;
    EXPECT_EQ(needs.backend, want.at(name).second) << name;
  }
}

TEST(Configs, BrokenOnesAreRefusedWithTheirError) {
  auto ids = SuiteIds();
  base::CorpusReport report =
      base::RunCorpus({.path = kSource + "/agents/testdata/broken_configs", .extension = ".yaml"},
                      [&ids](const base::CorpusCase& c) {
                        auto r = LoadConfig(c.path, ids);
                        EXPECT_FALSE(r.ok()) << c.path;
                        std::vector<base::Diagnostic> out;
                        std::istringstream lines(r.status().message());
                        for (std::string e; std::getline(lines, e);)
                          out.push_back({.file = c.path, .message = e});
                        return out;
                      });
  testing::ExpectCorpusPasses(report);
  EXPECT_GE(report.cases.size(), 12u);
}

TEST(Configs, AMissingFileIsAnErrorAndTheHashFollowsTheBytes) {
  auto r = LoadConfig("/nonexistent/X.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::Status::Code::kIoError);
  EXPECT_NE(r.status().message().find("/nonexistent/X.yaml: cannot read"), std::string::npos);
  fs::path tmp = fs::temp_directory_path() / ("cfg_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::ofstream(tmp / "X.yaml") << "name: X\ntools: none\ninstructions: a\n";
  auto a = LoadConfig((tmp / "X.yaml").string());
  std::ofstream(tmp / "X.yaml") << "name: X\ntools: none\ninstructions: b\n";
  auto b = LoadConfig((tmp / "X.yaml").string());
  fs::remove_all(tmp);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->hash, b->hash);
  EXPECT_EQ(a->hash.rfind("sha256:", 0), 0u);
}

TEST(Reference, TicketRulesPointAtWhereTheSymptomShows) {
  EXPECT_EQ(TicketGuess("sacct hangs for minutes"), "slurm.slurmdbd");
  EXPECT_EQ(TicketGuess("node1 went into DRAIN; the GPU jobs fail"), "gpu.device");
  EXPECT_EQ(TicketGuess("jobs stay pending with idle nodes"), "slurm.scheduler");
  EXPECT_EQ(TicketGuess("squeue is slow"), "slurm.slurmctld");
  EXPECT_EQ(TicketGuess("something odd"), "slurm.slurmctld");  // the default
}

}  // namespace
}  // namespace slurm_rca::agents

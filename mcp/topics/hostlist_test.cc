// CompressHostlist (hostlist.h): the expressions it writes, and, with real Slurm as the oracle,
// that `scontrol show hostnames` expands each to exactly the names given (run through the
// project's own guard and executor, as slurm-mcp would run it).
#include "mcp/topics/hostlist.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcp/test_temp_dir.h"

namespace slurm_rca::mcp {
namespace {

TEST(CompressHostlist, WritesRangesOfTheLastNumber) {
  EXPECT_EQ(CompressHostlist({}), "");
  EXPECT_EQ(CompressHostlist({"node1"}), "node1");
  EXPECT_EQ(CompressHostlist({"node0037", "node0012", "node0038", "node0039"}),
            "node[0012,0037-0039]");
  EXPECT_EQ(CompressHostlist({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(CompressHostlist({"n098", "n099", "n100", "n101"}), "n[098-101]");
  EXPECT_EQ(CompressHostlist({"a0999", "a1000", "a1001"}), "a[0999-1001]");
  EXPECT_EQ(CompressHostlist({"node2", "node1", "node2", "", "node3"}), "node[1-3]");
  EXPECT_EQ(CompressHostlist({"rack2-node01", "rack1-node02", "rack1-node01", "rack2-node02"}),
            "rack1-node[01-02],rack2-node[01-02]");
  // Slurm 22.05 refuses a suffix after a bracket: such names are written as they are.
  EXPECT_EQ(CompressHostlist({"node02-ib", "node01-ib"}), "node01-ib,node02-ib");
  EXPECT_EQ(CompressHostlist({"login", "gpu002", "gpu001", "cpu7"}),
            "cpu7,gpu[001-002],login");
}

TEST(CompressHostlist, KeepsPaddedAndUnpaddedNumbersApart) {
  // n1 and n01 are two nodes; 5 is unpadded, 0007 and 1000 are of width 4.
  EXPECT_EQ(CompressHostlist({"n1", "n01", "n02"}), "n[1,01-02]");
  EXPECT_EQ(CompressHostlist({"x5", "x0007", "x1000", "x6"}), "x[5-6,0007,1000]");
}

TEST(CompressHostlist, AThousandNodesCostOneLine) {
  std::vector<std::string> names;
  for (int i = 1; i <= 1024; ++i) {
    std::ostringstream n;
    n << "node" << std::setw(4) << std::setfill('0') << i;
    names.push_back(n.str());
  }
  EXPECT_EQ(CompressHostlist(names), "node[0001-1024]");
  names.erase(names.begin() + 36);  // node0037
  names.erase(names.begin() + 99);  // node0101
  EXPECT_EQ(CompressHostlist(names), "node[0001-0036,0038-0100,0102-1024]");
}

// Real Slurm expands an expression: scontrol show hostnames, which needs no controller, only a
// slurm.conf to read. Run directly, not through the guard: an expression of a thousand scattered
// names is longer than the guard lets an agent give (arg-too-long), and the oracle is Slurm.
class SlurmOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/scontrol", X_OK) != 0) {
      GTEST_SKIP() << "no /usr/bin/scontrol (Debian's slurm-client; scripts/deps.sh installs it)";
    }
    dir_ = testing_tools::MakeTempDir("hostlist");
    ASSERT_FALSE(dir_.empty());
    std::ofstream(dir_ + "/slurm.conf")
        << "ClusterName=oracle\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\n"
           "PartitionName=p Nodes=n1\n";
  }

  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // The expression holds only letters, digits and - , [ ]: safe inside single quotes.
  std::vector<std::string> Expand(const std::string& expression) {
    const std::string command = "SLURM_CONF='" + dir_ + "/slurm.conf' /usr/bin/scontrol show hostnames '" +
                                expression + "' 2>&1";
    std::vector<std::string> names;
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) {
      ADD_FAILURE() << "popen: " << command;
      return names;
    }
    std::string out;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    const int status = ::pclose(pipe);
    EXPECT_EQ(status, 0) << expression << ": " << out;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) names.push_back(line);
    }
    return names;
  }

  void ExpectRoundTrip(std::vector<std::string> names) {
    const std::string expression = CompressHostlist(names);
    std::vector<std::string> expanded = Expand(expression);
    std::set<std::string> want(names.begin(), names.end());
    want.erase("");
    std::multiset<std::string> got(expanded.begin(), expanded.end());
    EXPECT_EQ(got.size(), want.size()) << expression << " expands to repeated or missing names";
    EXPECT_EQ(std::set<std::string>(expanded.begin(), expanded.end()), want) << expression;
  }

  std::string dir_;
};

TEST_F(SlurmOracle, ExpandsTheWrittenExamplesToTheirNames) {
  ExpectRoundTrip({"node0037", "node0012", "node0038", "node0039"});
  ExpectRoundTrip({"n9", "n10", "n11", "n098", "n099", "n100", "n101"});
  ExpectRoundTrip({"n1", "n01", "n02", "x5", "x0007", "x1000", "x6"});
  ExpectRoundTrip({"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"});
  ExpectRoundTrip({"node01-ib", "node02-ib", "login", "gpu001", "gpu002", "cpu7"});
  // The lab's names (fixtures/slurm-22.05: node1-node4) and a large lab's.
  ExpectRoundTrip({"node1", "node2", "node3", "node4"});
  std::vector<std::string> large;
  for (int i = 1; i <= 1024; i += (i % 7 == 0 ? 3 : 1)) {
    std::ostringstream n;
    n << (i <= 128 ? "gpu" : "node") << std::setw(4) << std::setfill('0') << i;
    large.push_back(n.str());
  }
  ExpectRoundTrip(large);
}

// Random sets of names from a few prefixes, numbers padded or not at several widths: each
// compressed set expands back to itself.
TEST_F(SlurmOracle, RandomSetsRoundTrip) {
  std::mt19937 rng(20261205);
  const std::vector<std::string> prefixes = {"node", "gpu", "n", "rack3-node", "c1-"};
  for (int round = 0; round < 60; ++round) {
    std::vector<std::string> names;
    const int count = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < count; ++k) {
      const std::string& prefix = prefixes[rng() % prefixes.size()];
      const int width = static_cast<int>(rng() % 5);  // 0: unpadded
      const unsigned value = rng() % (rng() % 2 ? 20 : 1200);
      std::ostringstream n;
      n << prefix;
      if (width > 0) n << std::setw(width) << std::setfill('0');
      n << value;
      names.push_back(n.str());
    }
    ExpectRoundTrip(names);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace slurm_rca::mcp

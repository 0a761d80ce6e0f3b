// For the hosts lab's live tests (hostnet_live_test, hosts_live_test): what of a lab's names the
// machine's own namespace still shows, asked of the system itself (`ip netns list`, `ip -o link`,
// /etc/netns), not of HostNet's own bookkeeping.
#ifndef SLURM_RCA_SCENARIOS_LIVE_HOSTNET_TRACES_TESTING_H_
#define SLURM_RCA_SCENARIOS_LIVE_HOSTNET_TRACES_TESTING_H_

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/live/hostnet.h"
#include "scenarios/live/process.h"

namespace slurm_rca::live::testing_hostnet {

// Every namespace, link (by name or link-netns) and /etc/netns directory whose name holds
// prefix ("rcah-205-"); a failed `ip` read is a test failure, never an empty answer.
inline std::vector<std::string> RootTraces(const std::string& prefix) {
  const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "LC_ALL=C"};
  const std::vector<std::string> dirs = {"/usr/sbin", "/usr/bin", "/sbin", "/bin"};
  std::vector<std::string> found;
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {FindProgram("ip", dirs), "netns", "list"}, {FindProgram("ip", dirs), "-o", "link"}}) {
    ToolResult r = RunTool(argv, env, std::chrono::seconds(15));
    EXPECT_TRUE(r.ok()) << argv[1] << ": " << r.Summary();
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.find(prefix) != std::string::npos) found.push_back(line);
    }
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(HostNet::kNetnsEtc, ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) found.push_back(entry.path());
  }
  return found;
}

}  // namespace slurm_rca::live::testing_hostnet

#endif  // SLURM_RCA_SCENARIOS_LIVE_HOSTNET_TRACES_TESTING_H_

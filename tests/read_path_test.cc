// Whole-tree checks of the read path: guard/run.cc is the only code in it that can start a
// process, and the privileged live harness (scenarios/live/) is never linked into it.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
const fs::path kRoot = SLURM_RCA_SOURCE_DIR;
// Code that may never start a process except through guard::Executor::Run.
const std::vector<std::string> kReadPath = {"guard", "mcp", "agents", "grader", "skills"};
// Modules linked into slurm-mcp and the agents: they may not even link the live harness.
// (grader/ builds rca-bench, which drives the harness, and links no read-path library into it.)
const std::vector<std::string> kLinkedIntoReadPath = {"guard", "mcp", "agents", "skills"};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsSource(const fs::path& p) {
  auto e = p.extension();
  return e == ".cc" || e == ".h" || e == ".cpp" || e == ".hpp";
}

bool IsTestOrTool(const fs::path& p) {
  std::string name = p.filename().string();
  return name.find("_test.cc") != std::string::npos || p.string().find("/fuzz/") != std::string::npos;
}

TEST(ReadPathTest, OnlyTheExecutorStartsProcesses) {
  const RE2 spawn(R"(\b(fork|vfork|execv|execve|execvp|execvpe|execl|execlp|execle|fexecve|posix_spawnp?|popen|system|uv_spawn|clone3?)\s*\()");
  int scanned = 0;
  std::vector<std::string> offenders;
  bool executor_spawns = false;
  for (const std::string& dir : kReadPath) {
    if (!fs::exists(kRoot / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
      if (!entry.is_regular_file() || !IsSource(entry.path()) || IsTestOrTool(entry.path())) {
        continue;
      }
      ++scanned;
      std::string text = Slurp(entry.path());
      std::string what;
      if (!RE2::PartialMatch(text, spawn, &what)) continue;
      if (fs::relative(entry.path(), kRoot) == "guard/run.cc") {
        executor_spawns = true;
      } else {
        offenders.push_back(fs::relative(entry.path(), kRoot).string() + " calls " + what);
      }
    }
  }
  EXPECT_GT(scanned, 5);
  EXPECT_TRUE(executor_spawns) << "guard/run.cc no longer spawns: did the executor move?";
  for (const std::string& o : offenders) ADD_FAILURE() << o;
}

TEST(ReadPathTest, TheLiveHarnessIsNotLinkedIntoTheReadPath) {
  for (const std::string& dir : kLinkedIntoReadPath) {
    if (!fs::exists(kRoot / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
      if (!entry.is_regular_file()) continue;
      std::string name = entry.path().filename().string();
      if (name != "CMakeLists.txt" && !IsSource(entry.path())) continue;
      std::string text = Slurp(entry.path());
      EXPECT_EQ(text.find("scenarios/live"), std::string::npos) << entry.path();
      EXPECT_EQ(text.find("scenarios_live"), std::string::npos) << entry.path();
    }
  }
}

}  // namespace

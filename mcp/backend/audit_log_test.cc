#include "mcp/backend/audit_log.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mcp/test_temp_dir.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {
namespace {

using nlohmann::json;


std::vector<std::string> Lines(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "every line ends with a newline";
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Evidence SampleEvidence() {
  Evidence e;
  e.outcome = Evidence::Outcome::kOk;
  e.source = "live";
  e.evidence_time = "2026-11-30T13:14:37Z";
  e.argv = {"squeue", "--noheader"};
  e.exit_code = 0;
  e.out = "1234 train RUNNING\n";
  e.seconds = 0.0414;
  return e;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing_tools::MakeTempDir("audit"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(AuditLogTest, LinesAreJsonWithTheRequiredKeys) {
  const std::string path = dir_ + "/audit.jsonl";
  auto opened = AuditLog::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::unique_ptr<AuditLog> audit = std::move(opened).value();
  Evidence ok = SampleEvidence();
  Evidence timed_out = SampleEvidence();
  timed_out.outcome = Evidence::Outcome::kTimedOut;
  timed_out.exit_code = -1;
  timed_out.out.clear();
  timed_out.seconds = 20;
  Evidence cached = SampleEvidence();
  cached.cached = true;
  EXPECT_TRUE(audit->Record(AuditRecord("slurm_query", "queue", ok)));
  EXPECT_TRUE(audit->Record(AuditRecord("slurm_overview", "queue", timed_out)));
  EXPECT_TRUE(audit->Record(AuditRecord("slurm_query", "queue", cached)));

  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  std::vector<json> got;
  for (const std::string& line : lines) {
    json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    for (const char* key :
         {"time", "tool", "topic", "argv", "exit", "duration_ms", "cached", "bytes", "outcome"}) {
      EXPECT_TRUE(j.contains(key)) << key << " in " << line;
    }
    EXPECT_TRUE(std::regex_match(j["time"].get<std::string>(),
                                 std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
        << j["time"];
    got.push_back(j);
  }
  EXPECT_EQ(got[0]["tool"], "slurm_query");
  EXPECT_EQ(got[0]["topic"], "queue");
  EXPECT_EQ(got[0]["argv"], json::array({"squeue", "--noheader"}));
  EXPECT_EQ(got[0]["exit"], 0);
  EXPECT_EQ(got[0]["duration_ms"], 41);
  EXPECT_EQ(got[0]["cached"], false);
  EXPECT_EQ(got[0]["bytes"], 19);
  EXPECT_EQ(got[0]["outcome"], "ok");
  EXPECT_EQ(got[0]["source"], "live");
  EXPECT_EQ(got[0]["evidence_time"], "2026-11-30T13:14:37Z");
  EXPECT_EQ(got[1]["outcome"], "timed_out");
  EXPECT_EQ(got[1]["exit"], -1);
  EXPECT_EQ(got[1]["duration_ms"], 20000);
  EXPECT_EQ(got[2]["cached"], true);
}

TEST_F(AuditLogTest, AddsTimeOnlyWhenMissingAndAppends) {
  const std::string path = dir_ + "/audit.jsonl";
  {
    auto audit = AuditLog::Open(path);
    ASSERT_TRUE(audit.ok());
    EXPECT_TRUE((*audit)->Record(json{{"tool", "a"}}));
    EXPECT_TRUE((*audit)->Record(json{{"tool", "b"}, {"time", "given"}}));
    EXPECT_FALSE((*audit)->Record(json::array({1, 2})));
  }
  {
    auto audit = AuditLog::Open(path);  // a second open appends
    ASSERT_TRUE(audit.ok());
    EXPECT_TRUE((*audit)->Record(json{{"tool", "c"}}));
  }
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(json::parse(lines[0]).contains("time"));
  EXPECT_EQ(json::parse(lines[1])["time"], "given");
  EXPECT_EQ(json::parse(lines[2])["tool"], "c");
}

TEST_F(AuditLogTest, NewlinesAndInvalidUtf8StayInsideOneLine) {
  const std::string path = dir_ + "/audit.jsonl";
  auto opened = AuditLog::Open(path);
  ASSERT_TRUE(opened.ok());
  std::unique_ptr<AuditLog> audit = std::move(opened).value();
  EXPECT_TRUE(audit->Record(json{{"tool", "x"}, {"note", "two\nlines \xff\xfe bad"}}));
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 1u);
  json j = json::parse(lines[0], nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << lines[0];
  EXPECT_NE(j["note"].get<std::string>().find("two\nlines"), std::string::npos);
}

TEST_F(AuditLogTest, ConcurrentWritersProduceWholeLines) {
  const std::string path = dir_ + "/audit.jsonl";
  auto opened = AuditLog::Open(path);
  ASSERT_TRUE(opened.ok());
  std::unique_ptr<AuditLog> audit = std::move(opened).value();
  constexpr int kThreads = 8;
  constexpr int kEach = 300;
  const std::string payload(6000, 'x');  // well over PIPE_BUF and stdio buffers
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        audit->Record(json{{"tool", "t" + std::to_string(t)}, {"seq", i}, {"payload", payload}});
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kThreads * kEach));
  std::set<std::pair<std::string, int>> seen;
  for (const std::string& line : lines) {
    json j = json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line.substr(0, 200);
    EXPECT_EQ(j["payload"].get<std::string>().size(), payload.size());
    seen.emplace(j["tool"].get<std::string>(), j["seq"].get<int>());
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kEach));
}

// Runs body with fd `target` redirected to a file; returns what was written to it.
std::string Capture(int target, const std::string& file, const std::function<void()>& body) {
  fflush(nullptr);
  int saved = ::dup(target);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, target);
  ::close(fd);
  body();
  fflush(nullptr);
  ::dup2(saved, target);
  ::close(saved);
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_F(AuditLogTest, StderrLogWritesToStderrNotStdout) {
  std::string out;
  std::string err = Capture(STDERR_FILENO, dir_ + "/err", [&] {
    out = Capture(STDOUT_FILENO, dir_ + "/out", [&] {
      auto audit = AuditLog::Stderr();
      EXPECT_TRUE(audit->Record(json{{"tool", "slurm_overview"}}));
    });
  });
  EXPECT_EQ(out, "");
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back(), '\n');
  EXPECT_EQ(json::parse(err)["tool"], "slurm_overview");
}

TEST_F(AuditLogTest, RefusesThisProcessStdout) {
  base::Status status;
  Capture(STDOUT_FILENO, dir_ + "/out",
          [&] { status = AuditLog::Open("/proc/self/fd/1").status(); });
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "audit log /proc/self/fd/1 is this process's stdout, which carries MCP messages");
}

TEST_F(AuditLogTest, OpenFailureNamesThePath) {
  auto opened = AuditLog::Open(dir_ + "/no/such/dir/audit.jsonl");
  EXPECT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), base::Status::Code::kIoError);
  EXPECT_EQ(opened.status().message(), "cannot open audit log " + dir_ +
                                           "/no/such/dir/audit.jsonl: No such file or directory");
}

}  // namespace
}  // namespace slurm_rca::mcp

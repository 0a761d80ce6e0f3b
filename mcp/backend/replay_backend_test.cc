#include "mcp/backend/replay_backend.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mcp/test_temp_dir.h"
#include "nlohmann/json.hpp"

namespace slurm_rca::mcp {
namespace {

using nlohmann::json;
using Outcome = Evidence::Outcome;

constexpr char kTimeoutCause[] =
    "sacct timed out after 20 s; a hang is itself evidence (no output is not 'no rows')";


void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  ASSERT_TRUE(f.good()) << path;
}

json ReadEntry(std::vector<std::string> argv, const std::string& outcome, int exit_code,
               const std::string& out_file, const std::string& err_file, double duration_ms,
               const std::string& cause = "") {
  return json{{"argv", argv},
              {"exit_code", exit_code},
              {"outcome", outcome},
              {"duration_ms", duration_ms},
              {"timed_out", outcome == "timed_out"},
              {"stdout_file", out_file},
              {"stderr_file", err_file},
              {"cause", cause}};
}

// Two snapshots: before (0 s) the accounting database froze and after (60 s).
json GoodManifest() {
  return json{
      {"format", "slurm-rca-evidence/1"},
      {"slurm_version", "22.05.8"},
      {"scenario", "db-freeze"},
      {"recorded_at", "2026-11-30T13:00:00Z"},
      {"snapshots",
       json::array(
           {json{{"offset_seconds", 0},
                 {"taken_at", "2026-11-30T13:00:00Z"},
                 {"reads",
                  json::array(
                      {ReadEntry({"sinfo"}, "ok", 0, "reads/0/sinfo.out", "reads/empty", 31),
                       ReadEntry({"sacct", "-a"}, "ok", 0, "reads/0/sacct.out", "reads/empty", 88),
                       ReadEntry({"log", "slurmctld"}, "ok", 0, "reads/0/slurmctld.log",
                                 "reads/empty", 1)})}},
            json{{"offset_seconds", 60.5},
                 {"taken_at", "2026-11-30T13:01:00.500Z"},
                 {"reads",
                  json::array(
                      {ReadEntry({"sinfo"}, "ok", 0, "reads/1/sinfo.out", "reads/empty", 40),
                       ReadEntry({"sacct", "-a"}, "timed_out", -1, "reads/1/sacct.out",
                                 "reads/empty", 20000, kTimeoutCause),
                       ReadEntry(
                           {"squeue"}, "failed", 1, "reads/empty", "reads/1/squeue.err", 12,
                           "squeue exited 1: squeue: error: Unable to contact slurm "
                           "controller. The read failed; this is not an empty result.")})}}})}};
}

class ReplayBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_tools::MakeTempDir("replay");
    WriteFile(dir_ + "/reads/empty", "");
    WriteFile(dir_ + "/reads/0/sinfo.out", "node1 idle\n");
    WriteFile(dir_ + "/reads/0/sacct.out", "1001 COMPLETED\n");
    WriteFile(dir_ + "/reads/0/slurmctld.log", "a\nb\nc\nd\n");
    WriteFile(dir_ + "/reads/1/sinfo.out", "node1 down\n");
    WriteFile(dir_ + "/reads/1/sacct.out", "partial\n");
    WriteFile(dir_ + "/reads/1/squeue.err", "squeue: error: Unable to contact slurm controller\n");
    WriteManifest(GoodManifest());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteManifest(const json& m) { WriteFile(dir_ + "/manifest.json", m.dump(2)); }

  std::unique_ptr<ReplayBackend> Open() {
    auto b = ReplayBackend::Open(dir_);
    EXPECT_TRUE(b.ok()) << b.status().message();
    return b.ok() ? std::move(b).value() : nullptr;
  }

  // Open must fail on a manifest changed by `edit`, with an error holding every `expected`.
  void ExpectOpenFails(const std::function<void(json&)>& edit,
                       const std::vector<std::string>& expected) {
    json m = GoodManifest();
    edit(m);
    WriteManifest(m);
    auto b = ReplayBackend::Open(dir_);
    EXPECT_FALSE(b.ok());
    const std::string& error = b.status().message();
    for (const std::string& e : expected) {
      EXPECT_NE(error.find(e), std::string::npos) << "want \"" << e << "\" in: " << error;
    }
  }

  std::string dir_;
};

TEST_F(ReplayBackendTest, OpensAndServesTheLastSnapshotByDefault) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->Label(), "replay");
  EXPECT_EQ(replay->slurm_version(), "22.05.8");
  EXPECT_EQ(replay->scenario(), "db-freeze");
  EXPECT_EQ(replay->recorded_at(), "2026-11-30T13:00:00Z");
  ASSERT_EQ(replay->snapshots().size(), 2u);
  EXPECT_EQ(replay->selected(), 1);

  Evidence e = replay->Read({"sinfo"});
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_EQ(e.source, "replay");
  EXPECT_EQ(e.out, "node1 down\n");
  EXPECT_EQ(e.evidence_time, "2026-11-30T13:01:00.500Z");
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_DOUBLE_EQ(e.seconds, 0.040);
  EXPECT_FALSE(e.cached);
  EXPECT_EQ(e.argv, std::vector<std::string>{"sinfo"});
}

TEST_F(ReplayBackendTest, ReadinessListsNoProgramAndSaysUnknown) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  ASSERT_TRUE(replay->Read({"sinfo"}).ok());  // a replayed read is no read of a program
  EXPECT_TRUE(replay->LastReads().empty());
  const std::string ready = ReadinessJson(*replay);
  EXPECT_NE(ready.find(R"("backend":"replay")"), std::string::npos) << ready;
  EXPECT_NE(ready.find(R"("programs":[])"), std::string::npos) << ready;
  EXPECT_NE(ready.find(R"("slurm":"unknown")"), std::string::npos) << ready;
}

TEST_F(ReplayBackendTest, OffsetsSelectTheLatestSnapshotAtOrBefore) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  replay->SetOffset(0);
  EXPECT_EQ(replay->Read({"sinfo"}).out, "node1 idle\n");
  EXPECT_EQ(replay->Read({"sinfo"}).evidence_time, "2026-11-30T13:00:00Z");
  replay->SetOffset(60.4);
  EXPECT_EQ(replay->Read({"sinfo"}).out, "node1 idle\n");
  replay->SetOffset(60.5);
  EXPECT_EQ(replay->Read({"sinfo"}).out, "node1 down\n");
  replay->SetOffset(1e9);
  EXPECT_EQ(replay->selected(), 1);

  replay->SetOffset(-1);
  EXPECT_EQ(replay->selected(), -1);
  Evidence before = replay->Read({"sinfo"});
  EXPECT_EQ(before.outcome, Outcome::kUnavailable);
  EXPECT_NE(before.cause.find("no snapshot of this bundle was taken at or before offset -1 s"),
            std::string::npos)
      << before.cause;
}

TEST_F(ReplayBackendTest, TheEvidenceVersionChangesWithEveryOffsetOnly) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  const std::optional<std::int64_t> first = replay->EvidenceVersion();
  ASSERT_TRUE(first.has_value()) << "recorded evidence does not change by itself";
  replay->Read({"sinfo"});
  EXPECT_EQ(replay->EvidenceVersion(), first);
  std::set<std::int64_t> seen = {*first};
  for (double offset : {0.0, 60.5, 0.0, 0.0, -1.0}) {
    replay->SetOffset(offset);
    const std::optional<std::int64_t> now = replay->EvidenceVersion();
    ASSERT_TRUE(now.has_value());
    // Even back at an offset seen before: an answer kept at the old value is never reused.
    EXPECT_TRUE(seen.insert(*now).second) << "offset " << offset;
    EXPECT_EQ(replay->EvidenceVersion(), now);
  }
}

TEST_F(ReplayBackendTest, RecordedTimeoutReplaysAsTimedOutWithItsCause) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  Evidence e = replay->Read({"sacct", "-a"});
  EXPECT_EQ(e.outcome, Outcome::kTimedOut);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.cause, kTimeoutCause);
  EXPECT_EQ(e.exit_code, -1);
  EXPECT_DOUBLE_EQ(e.seconds, 20.0);
  EXPECT_EQ(e.out, "partial\n");  // what it printed before the hang, as recorded

  replay->SetOffset(0);
  EXPECT_EQ(replay->Read({"sacct", "-a"}).outcome, Outcome::kOk);
}

TEST_F(ReplayBackendTest, RecordedFailureReplaysWithStderrAndExitCode) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  Evidence e = replay->Read({"squeue"});
  EXPECT_EQ(e.outcome, Outcome::kFailed);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(e.err, "squeue: error: Unable to contact slurm controller\n");
  EXPECT_NE(e.cause.find("this is not an empty result"), std::string::npos);
}

TEST_F(ReplayBackendTest, UnrecordedArgvIsUnavailableNeverEmpty) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  Evidence e = replay->Read({"sinfo", "-N"});
  EXPECT_EQ(e.outcome, Outcome::kUnavailable);
  EXPECT_EQ(e.source, "replay");
  EXPECT_TRUE(e.out.empty());
  EXPECT_NE(e.cause.find("not recorded in this bundle (recorded: `sacct -a`, `sinfo`, `squeue`)"),
            std::string::npos)
      << e.cause;

  // Recorded at another offset only: says where.
  replay->SetOffset(0);
  Evidence elsewhere = replay->Read({"squeue"});
  EXPECT_EQ(elsewhere.outcome, Outcome::kUnavailable);
  EXPECT_NE(elsewhere.cause.find("not recorded in this bundle at offset 0 s (it is recorded at "
                                 "60.5 s)"),
            std::string::npos)
      << elsewhere.cause;
}

TEST_F(ReplayBackendTest, ReadLogServesTheRecordedLogRead) {
  auto replay = Open();
  ASSERT_TRUE(replay);
  replay->SetOffset(0);
  Evidence e = replay->ReadLog("slurmctld", 2);
  ASSERT_EQ(e.outcome, Outcome::kOk) << e.cause;
  EXPECT_EQ(e.out, "c\nd\n");
  EXPECT_EQ(e.argv, (std::vector<std::string>{"log", "slurmctld"}));
  EXPECT_EQ(replay->ReadLog("slurmctld", 0).out, "a\nb\nc\nd\n");
  EXPECT_EQ(replay->ReadLog("slurmdbd", 10).outcome, Outcome::kUnavailable);
  replay->SetOffset(61);
  EXPECT_EQ(replay->ReadLog("slurmctld", 10).outcome, Outcome::kUnavailable);
}

TEST_F(ReplayBackendTest, MissingManifestOrBadJsonFails) {
  auto nowhere = ReplayBackend::Open(dir_ + "/nowhere");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.status().message(), dir_ + "/nowhere/manifest.json: cannot open (is " + dir_ +
                                            "/nowhere an evidence bundle?)");
  EXPECT_EQ(nowhere.status().code(), base::Status::Code::kIoError);

  WriteFile(dir_ + "/manifest.json", "{\"format\": ");
  auto bad_json = ReplayBackend::Open(dir_);
  ASSERT_FALSE(bad_json.ok());
  EXPECT_NE(bad_json.status().message().find("manifest.json: not valid JSON"), std::string::npos)
      << bad_json.status().message();
  EXPECT_EQ(bad_json.status().code(), base::Status::Code::kInvalidArgument);

  // A number no double holds: the JSON library throws out_of_range, which once escaped Open.
  WriteFile(dir_ + "/manifest.json", "{\"format\": 1e999}");
  auto huge = ReplayBackend::Open(dir_);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("manifest.json: not valid JSON"), std::string::npos)
      << huge.status().message();
}

// A file that cannot be read is an io error; a manifest that is read but wrong, an invalid
// argument. Either way the message is the whole story, as the callers print it.
TEST_F(ReplayBackendTest, TheStatusSaysWhetherAFileWasUnreadableOrWrong) {
  json m = GoodManifest();
  m["snapshots"][0]["reads"][0]["stdout_file"] = "reads/gone.out";
  WriteManifest(m);
  auto unreadable = ReplayBackend::Open(dir_);
  ASSERT_FALSE(unreadable.ok());
  EXPECT_EQ(unreadable.status().code(), base::Status::Code::kIoError);
  EXPECT_EQ(unreadable.status().ToString(), "io error: " + unreadable.status().message());

  m = GoodManifest();
  m["snapshots"][0]["reads"][0]["exit_code"] = 2;
  WriteManifest(m);
  auto wrong = ReplayBackend::Open(dir_);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), base::Status::Code::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(),
            dir_ +
                "/manifest.json: snapshots[0].reads[0].exit_code: an ok read must have exit "
                "code 0, got 2");
}

TEST_F(ReplayBackendTest, MalformedManifestsFailWithTheFieldNamed) {
  ExpectOpenFails([](json& m) { m.erase("slurm_version"); },
                  {"manifest.json: slurm_version: missing"});
  ExpectOpenFails([](json& m) { m["format"] = "slurm-rca-evidence/3"; },
                  {"format: \"slurm-rca-evidence/3\" is not slurm-rca-evidence/1 or "
                   "slurm-rca-evidence/2"});
  ExpectOpenFails([](json& m) { m["trials"] = {{"count", 3}}; },
                  {"trials: is a field of slurm-rca-evidence/2"});
  ExpectOpenFails([](json& m) { m["recorded_at"] = "yesterday"; },
                  {"recorded_at: \"yesterday\" is not an ISO 8601 UTC time"});
  ExpectOpenFails([](json& m) { m["snapshots"] = json::array(); },
                  {"snapshots: must hold at least one snapshot"});
  ExpectOpenFails([](json& m) { m["extra"] = 1; }, {"extra: unknown field (allowed: "});
  ExpectOpenFails([](json& m) { m["profile"] = "dirty"; },
                  {"profile: \"dirty\" is not clean, busy or large"});
  ExpectOpenFails([](json& m) { m["seed"] = -1; }, {"seed: expected a non-negative integer"});
  ExpectOpenFails([](json& m) { m["snapshots"][0].erase("taken_at"); },
                  {"snapshots[0].taken_at: missing"});
  ExpectOpenFails([](json& m) { m["snapshots"][1]["offset_seconds"] = 0; },
                  {"snapshots[1].offset_seconds: 0 s is not after the previous snapshot's 0 s"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][1]["exit_code"] = "0"; },
                  {"snapshots[0].reads[1].exit_code: expected an integer, got string"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["argv"] = "sinfo"; },
                  {"snapshots[0].reads[0].argv: expected an array of strings, got string"});
  ExpectOpenFails(
      [](json& m) {
        m["snapshots"][0]["reads"][0]["argv"] = json::array({"sinfo", 1});
      },
      {"snapshots[0].reads[0].argv[1]: expected a string, got integer"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["outcome"] = "fine"; },
                  {"snapshots[0].reads[0].outcome: \"fine\" is not one of ok, failed"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["exit_code"] = 2; },
                  {"snapshots[0].reads[0].exit_code: an ok read must have exit code 0"});
  ExpectOpenFails([](json& m) { m["snapshots"][1]["reads"][1]["timed_out"] = false; },
                  {"snapshots[1].reads[1].timed_out: false contradicts outcome \"timed_out\""});
  ExpectOpenFails(
      [](json& m) { m["snapshots"][1]["reads"][1]["cause"] = ""; },
      {"snapshots[1].reads[1].cause: a read with outcome \"timed_out\" needs its cause"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["duration_ms"] = -1; },
                  {"snapshots[0].reads[0].duration_ms: must not be negative"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0].erase("stderr_file"); },
                  {"snapshots[0].reads[0].stderr_file: missing"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["stdout_file"] = "reads/gone.out"; },
                  {"snapshots[0].reads[0].stdout_file: cannot read ", "reads/gone.out"});
  ExpectOpenFails(
      [](json& m) { m["snapshots"][0]["reads"][0]["stdout_file"] = "../../etc/passwd"; },
      {"snapshots[0].reads[0].stdout_file: \"../../etc/passwd\" must not leave the bundle"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["stdout_file"] = "/etc/passwd"; },
                  {"stdout_file: \"/etc/passwd\" must be relative to the bundle"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][1]["argv"] = json::array({"sinfo"}); },
                  {"snapshots[0].reads[1].argv: \"sinfo\" is recorded twice in this snapshot"});
  ExpectOpenFails([](json& m) { m["snapshots"][0]["reads"][0]["stdout"] = "x"; },
                  {"snapshots[0].reads[0].stdout: unknown field"});
}

TEST_F(ReplayBackendTest, OptionalFieldsAreAccepted) {
  json m = GoodManifest();
  m.erase("scenario");
  m["generator"] = "rca-bench record";
  m["snapshots"][0]["reads"][0]["stdout_truncated"] = true;
  m["snapshots"][0]["reads"][0]["topic"] = "nodes";
  WriteManifest(m);
  auto replay = Open();
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->scenario(), "");
  EXPECT_EQ(replay->profile(), "");
  replay->SetOffset(0);
  EXPECT_TRUE(replay->Read({"sinfo"}).out_truncated);
}

TEST_F(ReplayBackendTest, TheRecordingsBackgroundIsRead) {
  json m = GoodManifest();
  m["profile"] = "busy";
  m["seed"] = 7;
  WriteManifest(m);
  auto replay = Open();
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->profile(), "busy");
}

}  // namespace
}  // namespace slurm_rca::mcp

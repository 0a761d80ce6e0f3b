// The transcript: the events a run writes, their fields, flushing per line, and time to
// hypothesis computed from the file the way the grader computes it.
#include "agents/llm/transcript.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agents/llm/loop.h"
#include "grader/transcript_times.h"
#include "agents/llm/scripted_backend.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Time to hypothesis as the grader reads it (grader/transcript_times.h, the one implementation);
// nullopt when the transcript has no valid submit, and a test failure when it is malformed.
std::optional<double> GraderTime(const std::string& text) {
  base::Result<std::optional<grader::HarnessTime>> t = grader::ReadTranscript(text, "t.jsonl");
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok() || !*t) return std::nullopt;
  return (*t)->seconds;
}

std::vector<Json> Events(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(Json::parse(line));
  return out;
}

class EchoTools : public ToolSet {
 public:
  std::vector<ToolSpec> Specs() const override { return {{"echo", "", {{"type", "object"}}}}; }
  ToolResult Call(const std::string&, const Json& args) override { return {args.dump(), false}; }
};

class TranscriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "transcript_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(TranscriptTest, ARunWritesEveryEventWithItsFields) {
  Result<std::unique_ptr<Backend>> b = MakeScriptedBackend(Json::parse(R"({"replies": [
    {"text": "checking", "tool_calls": [{"name": "echo", "arguments": {"a": 1}}]},
    {"tool_calls": [{"name": "submit_diagnosis", "arguments": {"root_cause": "nowhere", "confidence": 0.5}}]},
    {"tool_calls": [{"name": "submit_diagnosis", "arguments": {"root_cause": "auth.munge", "confidence": 0.5}}]}]})"),
                                                           "s");
  ASSERT_TRUE(b.ok());
  const std::string path = dir_ + "/S01.jsonl";
  Result<std::unique_ptr<Transcript>> t = Transcript::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EchoTools tools;
  AgentSpec spec;
  spec.name = "B";
  RunResult r = RunAgent(**b, tools, spec, "jobs pend on node1", t->get());
  ASSERT_TRUE(r.finished);
  EXPECT_TRUE((*t)->status().ok());

  std::vector<Json> events = Events(ReadFile(path));  // flushed: readable while t is open
  std::vector<std::string> names;
  double last_t = 0;
  for (const Json& e : events) {
    names.push_back(e["event"]);
    EXPECT_EQ(e["agent"], "B");
    ASSERT_TRUE(e["t"].is_number_float()) << e.dump();
    EXPECT_GE(e["t"].get<double>(), last_t);
    last_t = e["t"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"start", "ticket", "model_turn", "tool_call",
                                             "tool_result", "model_turn", "tool_call", "submit",
                                             "model_turn", "tool_call", "submit", "end"}));
  const Json& start = events[0];
  EXPECT_EQ(start["backend"], "scripted:s");
  EXPECT_EQ(start["budget"]["max_turns"], 30);
  EXPECT_EQ(start["ts"].get<std::string>().size(), 20u);  // 2026-01-01T00:00:00Z
  EXPECT_EQ(events[1]["text"], "jobs pend on node1");
  const Json& turn = events[2];
  EXPECT_EQ(turn["turn"], 1);
  EXPECT_EQ(turn["text"], "checking");
  EXPECT_EQ(turn["attempts"], 1);
  for (const char* k : {"duration_s", "input_tokens", "output_tokens"}) {
    EXPECT_TRUE(turn[k].is_number()) << k;
  }
  EXPECT_EQ(turn["tool_calls"][0]["name"], "echo");
  EXPECT_EQ(turn["tool_calls"][0]["arguments"], Json({{"a", 1}}));
  EXPECT_EQ(events[3]["id"], turn["tool_calls"][0]["id"]);
  const Json& result = events[4];
  EXPECT_EQ(result["bytes"], 7);  // {"a":1}
  EXPECT_EQ(result["is_error"], false);
  EXPECT_EQ(result["text"], "{\"a\":1}");
  EXPECT_EQ(events[7]["valid"], false);
  EXPECT_NE(events[7]["error"].get<std::string>().find("'nowhere'"), std::string::npos);
  EXPECT_EQ(events[10]["valid"], true);
  EXPECT_EQ(events[10]["answer"]["root_cause"], "auth.munge");
  const Json& end = events.back();
  EXPECT_EQ(end["reason"], "submitted");
  EXPECT_EQ(end["turns"], 3);
  EXPECT_EQ(end["tool_calls"], 3);
  EXPECT_EQ(end["input_tokens"], r.usage.input_tokens);
  EXPECT_EQ(end["output_tokens"], r.usage.output_tokens);

  // Time to hypothesis: the grader's reading of the file gives the run's own figure.
  std::optional<double> tth = GraderTime(ReadFile(path));
  ASSERT_TRUE(tth.has_value());
  ASSERT_TRUE(r.time_to_hypothesis_s.has_value());
  EXPECT_DOUBLE_EQ(*tth, *r.time_to_hypothesis_s);
  EXPECT_DOUBLE_EQ(*tth, events[10]["t"].get<double>() - events[1]["t"].get<double>());
}

TEST_F(TranscriptTest, SpecialistsWriteUnderTheirOwnName) {
  std::ostringstream out;
  Transcript t(&out);
  Result<std::unique_ptr<Backend>> b = MakeScriptedBackend(Json::parse(R"({"replies": [
    {"when_tool": "report_findings", "tool_calls": [{"name": "report_findings", "arguments": {"findings": "f"}}]},
    {"when_tool": "submit_diagnosis", "tool_calls": [{"name": "submit_diagnosis", "arguments": {"root_cause": "auth.munge", "confidence": 0.9}}]}]})"),
                                                           "s");
  ASSERT_TRUE(b.ok());
  NoTools none;
  AgentSpec supervisor;
  supervisor.name = "supervisor";
  AgentSpec logs;
  logs.name = "logs";
  logs.finish = Finish::kReport;
  t.Write("supervisor", "ticket", {{"text", "outer"}});
  RunResult s = RunAgent(**b, none, logs, "inner", &t);
  RunResult top = RunAgent(**b, none, supervisor, "outer", &t);
  EXPECT_EQ(s.end_reason, "reported");
  EXPECT_EQ(top.end_reason, "submitted");
  std::set<std::string> agents;
  for (const Json& e : Events(out.str())) agents.insert(e["agent"].get<std::string>());
  EXPECT_EQ(agents, (std::set<std::string>{"supervisor", "logs"}));
  EXPECT_TRUE(GraderTime(out.str()).has_value());
}

TEST_F(TranscriptTest, OpenFailsOnAnUnwritablePath) {
  Result<std::unique_ptr<Transcript>> t = Transcript::Open(dir_ + "/no/such/dir/x.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Status::Code::kIoError);
  EXPECT_NE(t.status().message().find("/no/such/dir/x.jsonl"), std::string::npos);
}

TEST_F(TranscriptTest, WriteKeepsReservedKeysAndReplacesBadUtf8) {
  std::ostringstream out;
  Transcript t(&out);
  double at = t.Write("a", "tool_result", {{"t", 99}, {"event", "forged"}, {"text", "\xff ok"}});
  std::vector<Json> e = Events(out.str());
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0]["event"], "tool_result");
  EXPECT_DOUBLE_EQ(e[0]["t"].get<double>(), at);
  EXPECT_LT(at, 99);
  EXPECT_NE(e[0]["text"].get<std::string>().find(" ok"), std::string::npos);
}

}  // namespace
}  // namespace slurm_rca::agents

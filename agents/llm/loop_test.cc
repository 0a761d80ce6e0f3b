// The agent loop with the scripted back-end: finish tools, vocabulary checks, nudges, unknown
// tools, budgets, back-end failures.
#include "agents/llm/loop.h"

#include <gtest/gtest.h>

#include <sstream>

#include "agents/llm/scripted_backend.h"
#include "scenarios/vocabulary.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace {

using Json = nlohmann::json;

class CountingTools : public ToolSet {
 public:
  std::vector<ToolSpec> Specs() const override {
    return {{"slurm_query", "Reads a topic.", {{"type", "object"}}}};
  }
  ToolResult Call(const std::string& name, const Json& args) override {
    ++calls;
    if (args.value("topic", "") == "fail") return {"topic failed", true};
    return {std::string(5000, 'x'), false};
  }
  int calls = 0;
};

std::unique_ptr<Backend> Script(const std::string& text) {
  Result<std::unique_ptr<Backend>> b = MakeScriptedBackend(Json::parse(text), "test");
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? std::move(b).value() : nullptr;
}

std::vector<Json> Events(const std::string& text) {
  std::vector<Json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(Json::parse(line));
  return out;
}

TEST(LoopTest, SubmitEndsTheRunWithTheDiagnosis) {
  auto b = Script(R"({"replies": [
    {"tool_calls": [{"name": "slurm_query", "arguments": {"topic": "queue"}}]},
    {"tool_calls": [{"name": "submit_diagnosis", "arguments": {
      "root_cause": "db.mysql", "confidence": 0.75, "ruled_out": ["auth.munge"],
      "actions_proposed": ["restart:db.mysql"], "rationale": "dbd cannot reach mysql"}},
      {"name": "slurm_query", "arguments": {"topic": "never run"}}]}]})");
  ASSERT_TRUE(b);
  CountingTools tools;
  RunResult r = RunAgent(*b, tools, AgentSpec{}, "jobs pend", nullptr);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.end_reason, "submitted");
  EXPECT_EQ(r.diagnosis.root_cause, "db.mysql");
  EXPECT_DOUBLE_EQ(r.diagnosis.confidence, 0.75);
  EXPECT_EQ(r.diagnosis.ruled_out, std::vector<std::string>{"auth.munge"});
  EXPECT_EQ(r.diagnosis.actions_proposed, std::vector<std::string>{"restart:db.mysql"});
  EXPECT_EQ(r.diagnosis.rationale, "dbd cannot reach mysql");
  EXPECT_EQ(tools.calls, 1);  // the call after the valid submit is not run
  EXPECT_EQ(r.turns, 2);
  EXPECT_EQ(r.tool_calls, 2);
  ASSERT_TRUE(r.time_to_hypothesis_s.has_value());
  EXPECT_GE(*r.time_to_hypothesis_s, 0);
  EXPECT_LE(*r.time_to_hypothesis_s, r.wall_s);
}

TEST(LoopTest, NoToolCallGetsANudgeAndCountsAsATurn) {
  auto b = Script(R"({"replies": [{"text": "I think it is the database."},
    {"tool_calls": [{"name": "submit_diagnosis",
                     "arguments": {"root_cause": "unknown", "confidence": 0}}]}]})");
  ASSERT_TRUE(b);
  NoTools tools;
  std::ostringstream out;
  Transcript t(&out);
  RunResult r = RunAgent(*b, tools, AgentSpec{}, "ticket", &t);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.turns, 2);
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
  int nudges = 0;
  for (const Json& e : Events(out.str())) {
    if (e["event"] == "nudge") {
      ++nudges;
      EXPECT_NE(e["text"].get<std::string>().find("submit_diagnosis"), std::string::npos);
    }
  }
  EXPECT_EQ(nudges, 1);
}

TEST(LoopTest, ScriptExhaustedRunsTheTurnBudgetOut) {
  auto b = Script(R"({"replies": []})");
  ASSERT_TRUE(b);
  NoTools tools;
  AgentSpec spec;
  spec.budget.max_turns = 4;
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "budget:turns");
  EXPECT_EQ(r.turns, 4);
}

TEST(LoopTest, UnknownToolIsAToolErrorNotACall) {
  auto b = Script(R"({"replies": [
    {"tool_calls": [{"name": "rm_rf", "arguments": {}}]},
    {"tool_calls": [{"name": "slurm_query", "arguments": {"topic": "fail"}}]},
    {"tool_calls": [{"name": "submit_diagnosis",
                     "arguments": {"root_cause": "auth.munge", "confidence": 0.5}}]}]})");
  ASSERT_TRUE(b);
  CountingTools tools;
  std::ostringstream out;
  Transcript t(&out);
  RunResult r = RunAgent(*b, tools, AgentSpec{}, "ticket", &t);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(tools.calls, 1);
  std::vector<Json> results;
  for (const Json& e : Events(out.str())) {
    if (e["event"] == "tool_result") results.push_back(e);
  }
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["name"], "rm_rf");
  EXPECT_EQ(results[0]["is_error"], true);
  EXPECT_NE(results[0]["text"].get<std::string>().find("no tool named 'rm_rf'"),
            std::string::npos);
  EXPECT_EQ(results[1]["is_error"], true);
  EXPECT_EQ(results[1]["text"], "topic failed");
}

TEST(LoopTest, ToolResultTextIsCutInTheTranscriptButNotForTheModel) {
  auto b = Script(R"({"replies": [
    {"tool_calls": [{"name": "slurm_query", "arguments": {"topic": "queue"}}]}]})");
  ASSERT_TRUE(b);
  CountingTools tools;
  std::ostringstream out;
  Transcript t(&out);
  AgentSpec spec;
  spec.budget.max_turns = 2;
  RunResult r = RunAgent(*b, tools, spec, "ticket", &t);
  // Turn 2's input counts the whole 5000-character result.
  EXPECT_GT(r.usage.input_tokens, 5000 / 4);
  bool seen = false;
  for (const Json& e : Events(out.str())) {
    if (e["event"] != "tool_result") continue;
    seen = true;
    EXPECT_EQ(e["bytes"], 5000);
    EXPECT_EQ(e["text"].get<std::string>().size(), 4096u);
  }
  EXPECT_TRUE(seen);
}

TEST(LoopTest, WallBudget) {
  auto b = Script(R"({"replies": []})");
  ASSERT_TRUE(b);
  NoTools tools;
  AgentSpec spec;
  spec.budget.max_wall_s = 0;
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "budget:wall");
  EXPECT_EQ(r.turns, 0);
}

class FailingBackend : public Backend {
 public:
  std::string Describe() const override { return "failing"; }
  Result<Reply> Complete(const std::vector<Message>&, const std::vector<ToolSpec>&) override {
    return Status::Unavailable("HTTP 503 (after 5 attempts)");
  }
};

TEST(LoopTest, BackendErrorEndsTheRunWithItsReason) {
  FailingBackend b;
  NoTools tools;
  std::ostringstream out;
  Transcript t(&out);
  RunResult r = RunAgent(b, tools, AgentSpec{}, "ticket", &t);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "backend: unavailable: HTTP 503 (after 5 attempts)");
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
  std::vector<Json> events = Events(out.str());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["event"], "end");
  EXPECT_EQ(events.back()["reason"], r.end_reason);
}

TEST(LoopTest, ReportFindingsForSpecialists) {
  auto b = Script(R"({"replies": [
    {"tool_calls": [{"name": "report_findings", "arguments": {"findings": "x", "suspects": ["nope"]}}]},
    {"tool_calls": [{"name": "report_findings",
                     "arguments": {"findings": "mysql refuses connections", "suspects": ["db.mysql"]}}]}]})");
  ASSERT_TRUE(b);
  CountingTools tools;
  AgentSpec spec;
  spec.name = "logs";
  spec.finish = Finish::kReport;
  std::ostringstream out;
  Transcript t(&out);
  RunResult r = RunAgent(*b, tools, spec, "look at the logs", &t);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.end_reason, "reported");
  EXPECT_EQ(r.report, "mysql refuses connections");
  EXPECT_EQ(r.suspects, std::vector<std::string>{"db.mysql"});
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
  EXPECT_FALSE(r.time_to_hypothesis_s.has_value());
  std::vector<bool> valid;
  for (const Json& e : Events(out.str())) {
    EXPECT_EQ(e["agent"], "logs");
    EXPECT_NE(e["event"], "submit");  // a specialist never writes submit events
    if (e["event"] == "report") valid.push_back(e["valid"]);
  }
  EXPECT_EQ(valid, (std::vector<bool>{false, true}));
}

TEST(LoopTest, SubmitDiagnosisSpecIsTheVocabulary) {
  ToolSpec spec = SubmitDiagnosisSpec();
  EXPECT_EQ(spec.name, "submit_diagnosis");
  const Json& ids = spec.input_schema["properties"]["root_cause"]["enum"];
  ASSERT_EQ(ids.size(), scenarios::Components().size());
  for (const scenarios::Component& c : scenarios::Components()) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), std::string(c.id)), ids.end()) << c.id;
  }
  const Json& ruled = spec.input_schema["properties"]["ruled_out"]["items"]["enum"];
  EXPECT_EQ(ruled.size(), ids.size() - 1);
  EXPECT_EQ(std::find(ruled.begin(), ruled.end(), "unknown"), ruled.end());
}

// Table of arguments and the error each must give (or "" for valid).
TEST(LoopTest, ParseDiagnosisChecksTheVocabularyAndTypes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"root_cause": "db.mysql", "confidence": 1})", ""},
      {R"({"root_cause": "unknown", "confidence": 0, "ruled_out": [], "actions_proposed": []})",
       ""},
      {R"({"root_cause": "auth.munge", "confidence": 0.3, "rationale": null})", ""},
      {R"([])", "arguments must be an object"},
      {R"({"confidence": 0.5})", "root_cause must be a string"},
      {R"({"root_cause": 3, "confidence": 0.5})", "root_cause must be a string"},
      {R"({"root_cause": "mysql", "confidence": 0.5})", "'mysql' is not a component"},
      {R"({"root_cause": "db.mysql"})", "confidence must be a number"},
      {R"({"root_cause": "db.mysql", "confidence": "high"})", "confidence must be a number"},
      {R"({"root_cause": "db.mysql", "confidence": -0.1})", "outside [0, 1]"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "ruled_out": "auth.munge"})",
       "ruled_out must be an array"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "ruled_out": ["unknown"]})",
       "'unknown' is not a component that can be ruled out"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "actions_proposed": ["reboot:db.mysql"]})",
       "actions_proposed"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "actions_proposed": [1]})",
       "actions_proposed must be an array of strings"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "rationale": 5})",
       "rationale must be a string"},
      {R"({"root_cause": "db.mysql", "confidence": 0.5, "cause": "x"})", "unknown argument 'cause'"},
  };
  for (const auto& [text, error] : cases) {
    Result<Diagnosis> d = ParseDiagnosis(Json::parse(text));
    if (error.empty()) {
      EXPECT_TRUE(d.ok()) << text << ": " << d.status().ToString();
    } else {
      ASSERT_FALSE(d.ok()) << text;
      EXPECT_NE(d.status().message().find(error), std::string::npos)
          << text << " -> " << d.status().message();
    }
  }
}

}  // namespace
}  // namespace slurm_rca::agents

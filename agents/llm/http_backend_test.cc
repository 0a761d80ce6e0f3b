// Both HTTP back-ends against FakeModelServer (a test double on 127.0.0.1): tool calls round
// trip, retries on 429 and 5xx, no retry on other 4xx, malformed replies as error values, an
// answer outside the vocabulary sent back as a tool error, budgets, request shapes, and HTTPS
// with a throwaway self-signed certificate. No real model is called.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/llm/backend.h"
#include "agents/llm/fake_model_server.h"
#include "agents/llm/http_backends.h"
#include "agents/llm/loop.h"
#include "agents/llm/transcript.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// The process environment, as rca-bench's main passes it (the tests set and unset variables).
std::optional<std::string> FromProcess(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

constexpr char kKeyEnv[] = "SLURM_RCA_LLM_TEST_KEY";
constexpr char kKey[] = "sk-test-123";

// Echo: one tool that returns its argument, and counts its calls.
class EchoTools : public ToolSet {
 public:
  std::vector<ToolSpec> Specs() const override {
    return {{"echo", "Returns its text.",
             {{"type", "object"},
              {"properties", {{"text", {{"type", "string"}}}}},
              {"required", {"text"}}}}};
  }
  ToolResult Call(const std::string& name, const Json& args) override {
    ++calls;
    return {"echo: " + args.value("text", std::string("?")), false};
  }
  int calls = 0;
};

ToolCall Submit(const std::string& id, const std::string& cause, double confidence) {
  return {id, "submit_diagnosis", {{"root_cause", cause}, {"confidence", confidence}}};
}

class HttpBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    setenv(kKeyEnv, kKey, 1);
    ASSERT_TRUE(server_.ok());
  }
  bool openai() const { return GetParam() == "openai"; }

  BackendConfig Config(const std::string& base_url = "") {
    BackendConfig c;
    c.kind = GetParam();
    c.model = "test-model";
    c.api_key_env = kKeyEnv;
    c.base_url = !base_url.empty() ? base_url
                 : openai()       ? server_.base_url() + "/v1"
                                  : server_.base_url();
    c.backoff_initial_s = 0.001;
    c.max_retries = 3;
    c.timeout_s = 10;
    return c;
  }
  std::unique_ptr<Backend> Make(const BackendConfig& c) {
    Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(b).value() : nullptr;
  }
  std::string Body(const std::string& text, const std::vector<ToolCall>& calls, int in = 10,
                   int out = 5) {
    return openai() ? FakeModelServer::OpenAiReply(text, calls, in, out)
                    : FakeModelServer::AnthropicReply(text, calls, in, out);
  }
  void EnqueueReply(const std::string& text, const std::vector<ToolCall>& calls, int in = 10,
             int out = 5) {
    server_.Enqueue({200, Body(text, calls, in, out)});
  }
  std::string ExpectedPath() const { return openai() ? "/v1/chat/completions" : "/v1/messages"; }

  std::vector<Message> Conversation() {
    return {{Message::Role::kSystem, "You are terse."}, {Message::Role::kUser, "Hello"}};
  }

  FakeModelServer server_;
};

INSTANTIATE_TEST_SUITE_P(Kinds, HttpBackendTest, ::testing::Values("openai", "anthropic"));

TEST_P(HttpBackendTest, CompleteParsesTextToolCallsAndUsage) {
  EnqueueReply("Checking.", {{"c1", "echo", {{"text", "hi"}}}}, 123, 45);
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  Result<Reply> r = b->Complete(Conversation(), tools.Specs());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "Checking.");
  ASSERT_EQ(r->tool_calls.size(), 1u);
  EXPECT_EQ(r->tool_calls[0].id, "c1");
  EXPECT_EQ(r->tool_calls[0].name, "echo");
  EXPECT_EQ(r->tool_calls[0].arguments, Json({{"text", "hi"}}));
  EXPECT_EQ(r->usage.input_tokens, 123);
  EXPECT_EQ(r->usage.output_tokens, 45);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(r->stop_reason, openai() ? "tool_calls" : "tool_use");
}

// The prompt cache as each API reports it: OpenAI's cached_tokens is part of prompt_tokens;
// Anthropic's cache reads and writes come beside input_tokens and are added to it. The model the
// server says it ran is kept, and the transcript records all of it per turn and per run.
TEST_P(HttpBackendTest, CachedTokensAndServedModelAreRecorded) {
  if (openai()) {
    server_.Enqueue(
        {200, FakeModelServer::OpenAiReply("", {{"c1", "echo", {{"text", "a"}}}}, 1000, 20, 0)});
    server_.Enqueue(
        {200, FakeModelServer::OpenAiReply("", {Submit("c2", "db.mysql", 0.5)}, 1100, 30, 896)});
  } else {
    server_.Enqueue({200, FakeModelServer::AnthropicReply("", {{"c1", "echo", {{"text", "a"}}}},
                                                          100, 20, 0, 900)});
    server_.Enqueue({200, FakeModelServer::AnthropicReply("", {Submit("c2", "db.mysql", 0.5)}, 200,
                                                          30, 900, 0)});
  }
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  AgentSpec spec;
  spec.system = "Diagnose.";
  std::stringstream lines;
  Transcript transcript(&lines);
  RunResult r = RunAgent(*b, tools, spec, "jobs pend", &transcript);
  ASSERT_TRUE(r.finished) << r.end_reason;
  EXPECT_EQ(r.usage.output_tokens, 50);
  if (openai()) {
    EXPECT_EQ(r.usage.input_tokens, 2100);
    EXPECT_EQ(r.usage.cached_input_tokens, 896);
    EXPECT_EQ(r.usage.cache_creation_input_tokens, 0);
  } else {
    EXPECT_EQ(r.usage.input_tokens, 100 + 900 + 200 + 900);
    EXPECT_EQ(r.usage.cached_input_tokens, 900);
    EXPECT_EQ(r.usage.cache_creation_input_tokens, 900);
  }
  std::vector<Json> turns;
  Json end;
  std::string line;
  while (std::getline(lines, line)) {
    Json j = Json::parse(line);
    if (j["event"] == "model_turn") turns.push_back(j);
    if (j["event"] == "end") end = j;
  }
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0]["model"], "fake");
  EXPECT_EQ(turns[1]["cached_input_tokens"], openai() ? 896 : 900);
  EXPECT_EQ(turns[0]["cache_creation_input_tokens"], openai() ? 0 : 900);
  EXPECT_EQ(end["cached_input_tokens"], r.usage.cached_input_tokens);
  EXPECT_EQ(end["cache_creation_input_tokens"], r.usage.cache_creation_input_tokens);
  EXPECT_EQ(end["input_tokens"], r.usage.input_tokens);
}

// The temperature the requests carry, and no seed.
TEST_P(HttpBackendTest, SamplingSentIsWhatTheRequestCarries) {
  EnqueueReply("Hi.", {});
  BackendConfig c = Config();
  c.temperature = 0.25;
  auto b = Make(c);
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->Complete(Conversation(), {}).ok());
  EXPECT_EQ(server_.requests()[0].json["temperature"], 0.25);
  EXPECT_EQ(b->SamplingSent(), Json({{"temperature", 0.25}, {"seed", "not sent"}}));
  EXPECT_FALSE(server_.requests()[0].json.contains("seed"));
}

TEST_P(HttpBackendTest, RequestShape) {
  EnqueueReply("Hi.", {});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  ASSERT_TRUE(b->Complete(Conversation(), tools.Specs()).ok());
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  const auto& q = reqs[0];
  EXPECT_EQ(q.path, ExpectedPath());
  ASSERT_FALSE(q.json.is_discarded()) << q.body;
  EXPECT_EQ(q.json["model"], "test-model");
  EXPECT_EQ(q.json["max_tokens"], 4096);
  EXPECT_NE(q.Header("Content-Type").find("application/json"), std::string::npos);
  ASSERT_TRUE(q.json["tools"].is_array());
  ASSERT_EQ(q.json["tools"].size(), 1u);
  if (openai()) {
    EXPECT_EQ(q.Header("Authorization"), std::string("Bearer ") + kKey);
    EXPECT_EQ(q.Header("x-api-key"), "");
    EXPECT_EQ(q.json["tools"][0]["type"], "function");
    EXPECT_EQ(q.json["tools"][0]["function"]["name"], "echo");
    EXPECT_EQ(q.json["tools"][0]["function"]["parameters"]["required"][0], "text");
    ASSERT_EQ(q.json["messages"].size(), 2u);
    EXPECT_EQ(q.json["messages"][0], Json({{"role", "system"}, {"content", "You are terse."}}));
    EXPECT_EQ(q.json["messages"][1], Json({{"role", "user"}, {"content", "Hello"}}));
  } else {
    EXPECT_EQ(q.Header("x-api-key"), kKey);
    EXPECT_EQ(q.Header("Authorization"), "");
    EXPECT_EQ(q.Header("anthropic-version"), kAnthropicVersion);
    // The stable prefix is marked for prompt caching: the system block and the last tool.
    EXPECT_EQ(q.json["system"], Json::array({{{"type", "text"},
                                              {"text", "You are terse."},
                                              {"cache_control", {{"type", "ephemeral"}}}}}));
    EXPECT_EQ(q.json["tools"][0]["cache_control"], Json({{"type", "ephemeral"}}));
    EXPECT_EQ(q.json["tools"][0]["name"], "echo");
    EXPECT_EQ(q.json["tools"][0]["input_schema"]["required"][0], "text");
    ASSERT_EQ(q.json["messages"].size(), 1u);
    EXPECT_EQ(q.json["messages"][0]["role"], "user");
    EXPECT_EQ(q.json["messages"][0]["content"][0]["text"], "Hello");
  }
}

// The whole loop over HTTP: a tool call, its result sent back in the API's shape, a submit.
TEST_P(HttpBackendTest, ToolCallsRoundTripThroughTheLoop) {
  EnqueueReply("Let me look.", {{"c1", "echo", {{"text", "ping"}}}});
  EnqueueReply("", {Submit("c2", "db.mysql", 0.7)});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  AgentSpec spec;
  spec.system = "Diagnose.";
  RunResult r = RunAgent(*b, tools, spec, "jobs pend", nullptr);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.end_reason, "submitted");
  EXPECT_EQ(r.diagnosis.root_cause, "db.mysql");
  EXPECT_DOUBLE_EQ(r.diagnosis.confidence, 0.7);
  EXPECT_EQ(r.turns, 2);
  EXPECT_EQ(r.tool_calls, 2);
  EXPECT_EQ(tools.calls, 1);
  EXPECT_EQ(r.usage.input_tokens, 20);
  EXPECT_EQ(r.usage.output_tokens, 10);

  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  const Json& tools_offered = reqs[0].json["tools"];
  ASSERT_EQ(tools_offered.size(), 2u);  // echo + submit_diagnosis
  const Json& m = reqs[1].json["messages"];
  if (openai()) {
    ASSERT_EQ(m.size(), 4u);  // system, user, assistant with tool_calls, tool
    EXPECT_EQ(tools_offered[1]["function"]["name"], "submit_diagnosis");
    EXPECT_EQ(m[2]["role"], "assistant");
    EXPECT_EQ(m[2]["content"], "Let me look.");
    EXPECT_EQ(m[2]["tool_calls"][0]["id"], "c1");
    EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "echo");
    EXPECT_EQ(Json::parse(m[2]["tool_calls"][0]["function"]["arguments"].get<std::string>()),
              Json({{"text", "ping"}}));
    EXPECT_EQ(m[3], Json({{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "echo: ping"}}));
  } else {
    ASSERT_EQ(m.size(), 3u);  // user, assistant (text + tool_use), user (tool_result)
    EXPECT_EQ(tools_offered[1]["name"], "submit_diagnosis");
    EXPECT_EQ(m[1]["role"], "assistant");
    EXPECT_EQ(m[1]["content"][0], Json({{"type", "text"}, {"text", "Let me look."}}));
    EXPECT_EQ(m[1]["content"][1], Json({{"type", "tool_use"},
                                        {"id", "c1"},
                                        {"name", "echo"},
                                        {"input", {{"text", "ping"}}}}));
    EXPECT_EQ(m[2]["role"], "user");
    EXPECT_EQ(m[2]["content"][0], Json({{"type", "tool_result"},
                                        {"tool_use_id", "c1"},
                                        {"content", "echo: ping"}}));
  }
}

TEST_P(HttpBackendTest, RetriesAfter429ThenSucceeds) {
  server_.Enqueue({429, R"({"error":"slow down"})", {{"Retry-After", "0"}}});
  EnqueueReply("ok", {});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(r->text, "ok");
  EXPECT_EQ(server_.requests().size(), 2u);
}

TEST_P(HttpBackendTest, RetriesAfter500ThenSucceeds) {
  server_.Enqueue({500, "internal"});
  server_.Enqueue({503, "busy"});
  EnqueueReply("ok", {});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_P(HttpBackendTest, RetryAfterIsCapped) {
  server_.Enqueue({429, "{}", {{"Retry-After", "30"}}});
  EnqueueReply("ok", {});
  BackendConfig c = Config();
  c.backoff_max_s = 0.05;
  auto b = Make(c);
  ASSERT_TRUE(b);
  auto start = std::chrono::steady_clock::now();
  Result<Reply> r = b->Complete(Conversation(), {});
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->attempts, 2);
  EXPECT_LT(s, 5.0);
}

TEST_P(HttpBackendTest, GivesUpAfterMaxRetries) {
  for (int i = 0; i < 4; ++i) server_.Enqueue({502, "bad gateway"});
  EnqueueReply("never reached", {});
  auto b = Make(Config());  // max_retries 3: 4 attempts
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("502"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("4 attempts"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(server_.requests().size(), 4u);
  EXPECT_EQ(server_.pending(), 1u);
}

TEST_P(HttpBackendTest, NoRetryOnOther4xx) {
  server_.Enqueue({401, R"({"error":"bad key"})"});
  EnqueueReply("never reached", {});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kHttpError);
  EXPECT_NE(r.status().message().find("401"), std::string::npos);
  EXPECT_NE(r.status().message().find("bad key"), std::string::npos);
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_P(HttpBackendTest, MalformedRepliesAreErrorValues) {
  std::vector<std::string> bodies = {"not json", "[1,2]", "{}", R"({"choices": []})",
                                     R"({"content": "text"})"};
  if (openai()) {
    bodies.push_back(R"({"choices":[{"message":{"role":"assistant","tool_calls":[
        {"id":"c","type":"function","function":{"name":"echo","arguments":"[1]"}}]}}]})");
    bodies.push_back(R"({"choices":[{"message":{"role":"assistant","tool_calls":[
        {"id":"c","type":"function","function":{"name":"echo","arguments":"{not json"}}]}}]})");
    bodies.push_back(R"({"choices":[{"message":{"tool_calls":[{"id":"c","function":{}}]}}]})");
    bodies.push_back(R"({"choices":[{"message":{"content": 7}}]})");
    bodies.push_back(R"({"choices":[7]})");
    bodies.push_back(R"({"error": {"message": "model not found"}})");
  } else {
    bodies.push_back(R"({"content":[{"type":"tool_use","id":"c","name":"echo","input":"x"}]})");
    bodies.push_back(R"({"content":[{"type":"tool_use","name":"echo","input":{}}]})");
    bodies.push_back(R"({"content":[{"type":"text"}]})");
    bodies.push_back(R"({"content":[{"text":"no type"}]})");
    bodies.push_back(R"({"type": "error", "error": {"type": "overloaded_error"}})");
  }
  auto b = Make(Config());
  ASSERT_TRUE(b);
  for (const std::string& body : bodies) {
    server_.Enqueue({200, body});
    Result<Reply> r = b->Complete(Conversation(), {});
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), Status::Code::kMalformedReply) << body;
  }
  EXPECT_EQ(server_.requests().size(), bodies.size());  // not retried
}

TEST_P(HttpBackendTest, MalformedReplyEndsTheRunAsBackendError) {
  server_.Enqueue({200, "{\"garbage\": true"});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  RunResult r = RunAgent(*b, tools, AgentSpec{}, "ticket", nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
  EXPECT_EQ(r.diagnosis.confidence, 0);
  EXPECT_EQ(r.end_reason.rfind("backend: malformed reply", 0), 0u) << r.end_reason;
}

TEST_P(HttpBackendTest, AnswerOutsideVocabularyIsSentBackAndTheModelRetries) {
  EnqueueReply("", {Submit("s1", "the database", 0.9)});
  EnqueueReply("", {Submit("s2", "db.mysql", 1.5)});
  EnqueueReply("", {Submit("s3", "db.mysql", 0.9)});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  std::ostringstream out;
  Transcript transcript(&out);
  RunResult r = RunAgent(*b, tools, AgentSpec{}, "ticket", &transcript);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.diagnosis.root_cause, "db.mysql");
  EXPECT_EQ(r.turns, 3);
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 3u);
  const Json& last = reqs[1].json["messages"].back();
  if (openai()) {
    EXPECT_EQ(last["role"], "tool");
    EXPECT_EQ(last["tool_call_id"], "s1");
    std::string content = last["content"];
    EXPECT_EQ(content.rfind("ERROR: ", 0), 0u) << content;
    EXPECT_NE(content.find("'the database' is not a component"), std::string::npos) << content;
  } else {
    const Json& block = last["content"][0];
    EXPECT_EQ(block["type"], "tool_result");
    EXPECT_EQ(block["tool_use_id"], "s1");
    EXPECT_EQ(block["is_error"], true);
    EXPECT_NE(block["content"].get<std::string>().find("'the database' is not a component"),
              std::string::npos);
  }
  // Two invalid submits then a valid one, all recorded.
  std::istringstream lines(out.str());
  std::string line;
  std::vector<bool> valid;
  while (std::getline(lines, line)) {
    Json j = Json::parse(line);
    if (j["event"] == "submit") valid.push_back(j["valid"]);
  }
  EXPECT_EQ(valid, (std::vector<bool>{false, false, true}));
}

TEST_P(HttpBackendTest, TurnBudgetRunsOut) {
  for (int i = 0; i < 5; ++i) EnqueueReply("", {{"c" + std::to_string(i), "echo", {{"text", "x"}}}});
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  AgentSpec spec;
  spec.budget.max_turns = 3;
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "budget:turns");
  EXPECT_EQ(r.turns, 3);
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
  EXPECT_EQ(r.diagnosis.confidence, 0);
  EXPECT_FALSE(r.time_to_hypothesis_s.has_value());
  EXPECT_EQ(server_.requests().size(), 3u);
}

TEST_P(HttpBackendTest, TokenBudgetRunsOut) {
  for (int i = 0; i < 5; ++i) {
    EnqueueReply("", {{"c" + std::to_string(i), "echo", {{"text", "x"}}}}, 100, 50);
  }
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EchoTools tools;
  AgentSpec spec;
  spec.budget.max_tokens = 400;  // 150 a turn: 450 after three
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "budget:tokens");
  EXPECT_EQ(r.turns, 3);
  EXPECT_EQ(r.usage.input_tokens, 300);
  EXPECT_EQ(r.usage.output_tokens, 150);
  EXPECT_EQ(r.diagnosis.root_cause, "unknown");
}

// The wall budget is the back-end's deadline: a retry wait that would pass it is not made.
TEST_P(HttpBackendTest, WallBudgetCutsRetryWaits) {
  server_.Enqueue({503, "busy", {{"Retry-After", "30"}}});
  BackendConfig c = Config();
  c.backoff_max_s = 60;
  auto b = Make(c);
  ASSERT_TRUE(b);
  NoTools tools;
  AgentSpec spec;
  spec.budget.max_wall_s = 1.0;
  auto start = std::chrono::steady_clock::now();
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.end_reason, "budget:wall");
  EXPECT_LT(s, 5.0);
  // The same through Complete: the status says why.
  server_.Enqueue({503, "busy", {{"Retry-After", "30"}}});
  b->SetDeadline(std::chrono::steady_clock::now() + std::chrono::seconds(1));
  Result<Reply> cut = b->Complete({{Message::Role::kUser, "x"}}, {});
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), Status::Code::kDeadlineExceeded);
  EXPECT_NE(cut.status().message().find("HTTP 503"), std::string::npos);
  b->SetDeadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  Result<Reply> late = b->Complete({{Message::Role::kUser, "x"}}, {});
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("not sent"), std::string::npos);
  EXPECT_EQ(server_.requests().size(), 2u);
}

// A model slower than the wall budget: the request's timeout is cut to the deadline.
TEST_P(HttpBackendTest, WallBudgetCutsASlowRequest) {
  server_.Enqueue({200, Body("late", {}), {}, 2.0});
  auto b = Make(Config());  // timeout_s 10
  ASSERT_TRUE(b);
  NoTools tools;
  AgentSpec spec;
  spec.budget.max_wall_s = 0.3;
  auto start = std::chrono::steady_clock::now();
  RunResult r = RunAgent(*b, tools, spec, "ticket", nullptr);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.end_reason, "budget:wall");
  EXPECT_LT(s, 1.9);
  EXPECT_GE(r.wall_s, 0.2);
}

TEST_P(HttpBackendTest, DescribeNamesKindModelAndEndpoint) {
  auto b = Make(Config());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->Describe(), GetParam() + ":test-model@" + server_.base_url() +
                               (openai() ? "/v1" : ""));
}

TEST_P(HttpBackendTest, ConnectionRefusedIsAnErrorAfterRetries) {
  // A port nobody listens on: a fresh server's port, after that server is gone.
  int port;
  {
    FakeModelServer gone;
    port = gone.port();
  }
  BackendConfig c = Config("http://127.0.0.1:" + std::to_string(port));
  c.max_retries = 1;
  auto b = Make(c);
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(r.status().message().find("2 attempts"), std::string::npos) << r.status().ToString();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "llm_test.XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

TEST_P(HttpBackendTest, HttpsWithASelfSignedCertificate) {
  Result<TestCertificate> cert = MakeSelfSignedCertificate();
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  FakeModelServer tls(*cert);
  ASSERT_TRUE(tls.ok());
  EXPECT_EQ(tls.base_url().rfind("https://127.0.0.1:", 0), 0u);
  TempDir dir;
  const std::string ca = dir.Write("ca.pem", cert->cert_pem);

  BackendConfig c = Config(tls.base_url() + (openai() ? "/v1" : ""));
  c.ca_file = ca;
  tls.Enqueue({200, Body("over TLS", {{"c1", "echo", {{"text", "x"}}}})});
  auto b = Make(c);
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "over TLS");
  ASSERT_EQ(tls.requests().size(), 1u);
  EXPECT_EQ(tls.requests()[0].path, ExpectedPath());

  // Without the CA the certificate is not trusted: an error value, not retried.
  c.ca_file = "";
  tls.Enqueue({200, Body("must not be served", {})});
  auto untrusted = Make(c);
  ASSERT_TRUE(untrusted);
  Result<Reply> refused = untrusted->Complete(Conversation(), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("not trusted"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(tls.requests().size(), 1u);
}

// Configuration errors name what is wrong.
class MakeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("SLURM_RCA_LLM_UNSET_KEY"); }
};

TEST_F(MakeBackendTest, MissingKeyNamesTheVariable) {
  for (std::string kind : {"openai", "anthropic"}) {
    BackendConfig c{kind, "https://models.example.org/v1", "m", "SLURM_RCA_LLM_UNSET_KEY"};
    Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
    ASSERT_FALSE(b.ok()) << kind;
    EXPECT_EQ(b.status().code(), Status::Code::kInvalidArgument);
    EXPECT_NE(b.status().message().find("SLURM_RCA_LLM_UNSET_KEY"), std::string::npos)
        << b.status().ToString();
  }
}

TEST_F(MakeBackendTest, DefaultKeyVariablesAreNamed) {
  const char* saved_openai = std::getenv("OPENAI_API_KEY");
  const char* saved_anthropic = std::getenv("ANTHROPIC_API_KEY");
  if (saved_openai || saved_anthropic) GTEST_SKIP() << "a real key is set in this environment";
  Result<std::unique_ptr<Backend>> o =
      MakeBackend({"openai", "https://models.example.org/v1", "m"}, FromProcess);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("OPENAI_API_KEY"), std::string::npos);
  Result<std::unique_ptr<Backend>> a = MakeBackend({"anthropic", "", "m"}, FromProcess);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("ANTHROPIC_API_KEY"), std::string::npos);
}

TEST_F(MakeBackendTest, LocalOpenAiServerNeedsNoKey) {
  for (std::string url : {"http://127.0.0.1:8000/v1", "http://localhost:11434/v1"}) {
    Result<std::unique_ptr<Backend>> b =
        MakeBackend({"openai", url, "m", "SLURM_RCA_LLM_UNSET_KEY"}, FromProcess);
    EXPECT_TRUE(b.ok()) << url << ": " << b.status().ToString();
  }
  // Not for https, not for another host, not for Anthropic.
  EXPECT_FALSE(MakeBackend({"openai", "https://127.0.0.1:8000/v1", "m", "SLURM_RCA_LLM_UNSET_KEY"},
                           FromProcess)
                   .ok());
  EXPECT_FALSE(MakeBackend({"openai", "http://10.0.0.5:8000/v1", "m", "SLURM_RCA_LLM_UNSET_KEY"},
                           FromProcess)
                   .ok());
  EXPECT_FALSE(MakeBackend({"anthropic", "http://127.0.0.1:8000", "m", "SLURM_RCA_LLM_UNSET_KEY"},
                           FromProcess)
                   .ok());
}

TEST_F(MakeBackendTest, OpenAiBaseUrlDefaultsFromTheEnvironment) {
  setenv(kKeyEnv, kKey, 1);
  const char* saved = std::getenv("OPENAI_BASE_URL");
  std::string saved_value = saved ? saved : "";
  setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v9", 1);
  Result<std::unique_ptr<Backend>> b = MakeBackend({"openai", "", "m", kKeyEnv}, FromProcess);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)->Describe(), "openai:m@http://127.0.0.1:9/v9");
  unsetenv("OPENAI_BASE_URL");
  Result<std::unique_ptr<Backend>> d = MakeBackend({"openai", "", "m", kKeyEnv}, FromProcess);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->Describe(), "openai:m@https://api.openai.com:443/v1");
  Result<std::unique_ptr<Backend>> a = MakeBackend({"anthropic", "", "m", kKeyEnv}, FromProcess);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->Describe(), "anthropic:m@https://api.anthropic.com:443");
  if (saved) setenv("OPENAI_BASE_URL", saved_value.c_str(), 1);
}

TEST_F(MakeBackendTest, BadConfigurationsAreRefused) {
  setenv(kKeyEnv, kKey, 1);
  struct Case {
    BackendConfig config;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"gemini", "", "m", kKeyEnv}, "unknown back-end kind 'gemini'"},
      {{"openai", "ftp://x/v1", "m", kKeyEnv}, "scheme must be http or https"},
      {{"openai", "api.openai.com/v1", "m", kKeyEnv}, "has no scheme"},
      {{"openai", "https://:443/v1", "m", kKeyEnv}, "has no host"},
      {{"openai", "https://h:99999/v1", "m", kKeyEnv}, "port out of range"},
      {{"openai", "https://h:ab/v1", "m", kKeyEnv}, "is not a number"},
      {{"openai", "https://u:p@h/v1", "m", kKeyEnv}, "credentials in the URL"},
      {{"openai", "https://h/v1", "", kKeyEnv}, "no model given"},
      {{"anthropic", "https://h", "m", kKeyEnv, "/nonexistent/ca.pem"}, "cannot read ca_file"},
      {{"scripted"}, "no script path"},
  };
  BackendConfig seeded{"anthropic", "https://h", "m", kKeyEnv};
  seeded.seed = 7;
  cases.push_back({seeded, "the Messages API takes no seed"});
  BackendConfig unreadable;
  unreadable.kind = "scripted";
  unreadable.script = "/nonexistent/script.json";
  cases.push_back({unreadable, "cannot read script /nonexistent/script.json"});
  for (const Case& c : cases) {
    Result<std::unique_ptr<Backend>> b = MakeBackend(c.config, FromProcess);
    ASSERT_FALSE(b.ok()) << c.message;
    EXPECT_NE(b.status().message().find(c.message), std::string::npos)
        << "want '" << c.message << "', got " << b.status().ToString();
  }
}

// OpenAI reasoning models: max_completion_tokens instead of max_tokens, no temperature; learnt
// from the 400s and kept for later turns.
TEST(OpenAiQuirksTest, AdaptsToReasoningModelsOnce) {
  setenv(kKeyEnv, kKey, 1);
  FakeModelServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue({400, R"({"error": {"message": "Unsupported parameter: 'max_tokens' is not )"
                       R"(supported with this model. Use 'max_completion_tokens' instead."}})"});
  server.Enqueue({400, R"({"error": {"message": "Unsupported value: 'temperature' does not )"
                       R"(support 0 with this model. Only the default (1) value is supported."}})"});
  server.Enqueue({200, FakeModelServer::OpenAiReply("first", {})});
  server.Enqueue({200, FakeModelServer::OpenAiReply("second", {})});
  BackendConfig c{"openai", server.base_url() + "/v1", "o-model", kKeyEnv};
  c.max_tokens = 321;
  Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
  ASSERT_TRUE(b.ok());
  std::vector<Message> conv = {{Message::Role::kUser, "hi"}};
  Result<Reply> r = (*b)->Complete(conv, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "first");
  EXPECT_EQ(r->attempts, 3);
  Result<Reply> again = (*b)->Complete(conv, {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->attempts, 1);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].json["max_tokens"], 321);
  EXPECT_TRUE(reqs[0].json.contains("temperature"));
  EXPECT_EQ(reqs[1].json["max_completion_tokens"], 321);
  EXPECT_FALSE(reqs[1].json.contains("max_tokens"));
  EXPECT_TRUE(reqs[1].json.contains("temperature"));
  for (size_t i : {2u, 3u}) {
    EXPECT_EQ(reqs[i].json["max_completion_tokens"], 321);
    EXPECT_FALSE(reqs[i].json.contains("temperature"));
  }
  EXPECT_EQ((*b)->SamplingSent()["temperature"], "not sent");
  // Any other 400 is returned at once.
  server.Enqueue({400, R"({"error": {"message": "context length exceeded"}})"});
  Result<Reply> refused = (*b)->Complete(conv, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Status::Code::kHttpError);
  EXPECT_EQ(server.requests().size(), 5u);
}

// A configured seed goes with every request and into the header; a server that answers 400 naming
// it gets the same request without it, and every later one, and the header then says "not sent".
TEST(OpenAiSeedTest, SentWhenConfiguredAndDroppedWhenRefused) {
  setenv(kKeyEnv, kKey, 1);
  FakeModelServer server;
  ASSERT_TRUE(server.ok());
  BackendConfig c{"openai", server.base_url() + "/v1", "m", kKeyEnv};
  c.seed = 42;
  std::vector<Message> conv = {{Message::Role::kUser, "hi"}};
  {
    server.Enqueue({200, FakeModelServer::OpenAiReply("seeded", {})});
    Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ASSERT_TRUE((*b)->Complete(conv, {}).ok());
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(server.requests()[0].json["seed"], 42);
    EXPECT_EQ((*b)->SamplingSent(), Json({{"temperature", 0}, {"seed", 42}}));
  }
  server.Enqueue({400, R"({"error": {"message": "Unrecognized request argument supplied: seed"}})"});
  server.Enqueue({200, FakeModelServer::OpenAiReply("first", {})});
  server.Enqueue({200, FakeModelServer::OpenAiReply("second", {})});
  Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
  ASSERT_TRUE(b.ok());
  Result<Reply> r = (*b)->Complete(conv, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "first");
  EXPECT_EQ(r->attempts, 2);
  ASSERT_TRUE((*b)->Complete(conv, {}).ok());
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[1].json["seed"], 42);
  EXPECT_FALSE(reqs[2].json.contains("seed"));
  EXPECT_FALSE(reqs[3].json.contains("seed"));
  EXPECT_EQ((*b)->SamplingSent()["seed"], "not sent");
  // Without a seed configured, a 400 naming "seed" is not a quirk: returned at once.
  BackendConfig plain{"openai", server.base_url() + "/v1", "m", kKeyEnv};
  Result<std::unique_ptr<Backend>> p = MakeBackend(plain, FromProcess);
  ASSERT_TRUE(p.ok());
  server.Enqueue({400, R"({"error": {"message": "bad seed"}})"});
  EXPECT_FALSE((*p)->Complete(conv, {}).ok());
  EXPECT_EQ(server.requests().size(), 5u);
}

// OpenAI caches a prompt's longest previously seen prefix automatically: the bytes the back-end
// sends for the stable prefix (system message, tools) must not change across turns or tasks, and
// each turn's messages must extend the previous turn's byte for byte.
TEST(OpenAiPrefixTest, StablePrefixIsByteIdenticalAcrossTurnsAndTasks) {
  setenv(kKeyEnv, kKey, 1);
  FakeModelServer server;
  ASSERT_TRUE(server.ok());
  for (int task = 0; task < 2; ++task) {
    server.Enqueue({200, FakeModelServer::OpenAiReply("Look.", {{"c1", "echo", {{"text", "a"}}}})});
    server.Enqueue({200, FakeModelServer::OpenAiReply("", {{"c2", "echo", {{"text", "b"}}}})});
    server.Enqueue({200, FakeModelServer::OpenAiReply("", {Submit("c3", "db.mysql", 0.5)})});
  }
  BackendConfig c{"openai", server.base_url() + "/v1", "o-model", kKeyEnv};
  Result<std::unique_ptr<Backend>> b = MakeBackend(c, FromProcess);
  ASSERT_TRUE(b.ok());
  EchoTools tools;
  AgentSpec spec;
  spec.system = "Diagnose. \u00e9 \"quoted\"";
  ASSERT_TRUE(RunAgent(**b, tools, spec, "jobs pend", nullptr).finished);
  ASSERT_TRUE(RunAgent(**b, tools, spec, "nodes down", nullptr).finished);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 6u);
  // The body's keys are serialized in sorted order: max_tokens, messages, ..., tools.
  auto messages_so_far = [](const std::string& body) {
    size_t end = body.find("],\"model\":");
    EXPECT_NE(end, std::string::npos) << body;
    return body.substr(0, end);
  };
  auto system_prefix = [](const std::string& body) {
    const std::string marker = "\"role\":\"system\"}";
    size_t at = body.find(marker);
    EXPECT_NE(at, std::string::npos) << body;
    return body.substr(0, at + marker.size());
  };
  auto tools_bytes = [](const std::string& body) {
    size_t at = body.find("\"tools\":");
    EXPECT_NE(at, std::string::npos) << body;
    return body.substr(at);
  };
  const std::string prefix = system_prefix(reqs[0].body);
  EXPECT_EQ(prefix.rfind("{\"max_tokens\":4096,\"messages\":[{\"content\":\"Diagnose.", 0), 0u)
      << prefix;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(reqs[i].body.rfind(prefix, 0), 0u) << "request " << i << " changes the system prefix";
    EXPECT_EQ(tools_bytes(reqs[i].body), tools_bytes(reqs[0].body)) << "request " << i;
    if (i % 3 != 0) {  // a later turn of the same task extends the previous turn's messages
      EXPECT_EQ(reqs[i].body.rfind(messages_so_far(reqs[i - 1].body), 0), 0u) << "request " << i;
    }
  }
  EXPECT_NE(messages_so_far(reqs[3].body), messages_so_far(reqs[0].body));  // another ticket
}

// Fields the loop does not need may have odd types without making the reply malformed (and
// nothing throws on them).
TEST(ParseReplyTest, OddTypesInUnusedFieldsAreTolerated) {
  Result<Reply> a = ParseAnthropicReply(
      R"({"type": 7, "content": [{"type": "text", "text": "x"}], "usage": 1, "stop_reason": 3})");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->text, "x");
  EXPECT_EQ(a->usage.input_tokens, 0);
  Result<Reply> o = ParseOpenAiReply(
      R"({"choices": [{"message": {"content": "y"}, "finish_reason": 1}], "usage": {"prompt_tokens": "9"}})");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->text, "y");
  EXPECT_EQ(o->usage.input_tokens, 0);
  // OpenAI-compatible servers that send arguments as an object, or as "", are accepted.
  Result<Reply> obj = ParseOpenAiReply(R"({"choices": [{"message": {"tool_calls": [
      {"function": {"name": "a", "arguments": {"k": 1}}},
      {"id": "x", "function": {"name": "b", "arguments": ""}}]}}]})");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  ASSERT_EQ(obj->tool_calls.size(), 2u);
  EXPECT_EQ(obj->tool_calls[0].id, "call_0");
  EXPECT_EQ(obj->tool_calls[0].arguments, Json({{"k", 1}}));
  EXPECT_EQ(obj->tool_calls[1].arguments, Json::object());
}

TEST(ParseUrlTest, SplitsSchemeHostPortAndPrefix) {
  Result<Endpoint> e = ParseUrl("https://api.example.org/v1/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->scheme, "https");
  EXPECT_EQ(e->host, "api.example.org");
  EXPECT_EQ(e->port, 443);
  EXPECT_EQ(e->path_prefix, "/v1");
  Result<Endpoint> v6 = ParseUrl("http://[::1]:8080");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 8080);
  EXPECT_EQ(v6->path_prefix, "");
  EXPECT_TRUE(v6->IsLoopback());
  EXPECT_EQ(v6->ToString(), "http://[::1]:8080");
  EXPECT_FALSE(ParseUrl("http://h/v1?x=1").ok());
}

}  // namespace
}  // namespace slurm_rca::agents

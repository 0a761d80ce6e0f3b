// The scripted back-end: selection by when_tool, statelessness, exhaustion, its token count, and
// the script errors it refuses.
#include "agents/llm/scripted_backend.h"

#include <gtest/gtest.h>

namespace slurm_rca::agents {

using base::Result;

namespace {

using Json = nlohmann::json;

std::unique_ptr<Backend> Make(const Json& script) {
  Result<std::unique_ptr<Backend>> b = MakeScriptedBackend(script, "test");
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? std::move(b).value() : nullptr;
}

std::vector<ToolSpec> Tools(std::vector<std::string> names) {
  std::vector<ToolSpec> out;
  for (auto& n : names) out.push_back({n, "", {{"type", "object"}}});
  return out;
}

// A conversation with `assistant_turns` assistant messages already in it.
std::vector<Message> Conversation(int assistant_turns) {
  std::vector<Message> c = {{Message::Role::kUser, "ticket"}};
  for (int i = 0; i < assistant_turns; ++i) {
    c.push_back({Message::Role::kAssistant, "a"});
    c.push_back({Message::Role::kUser, "u"});
  }
  return c;
}

const Json kScript = Json::parse(R"({"replies": [
  {"when_tool": "ask_logs", "text": "supervisor asks logs",
   "tool_calls": [{"name": "ask_logs", "arguments": {"question": "errors?"}}]},
  {"when_tool": "report_findings", "text": "specialist reports",
   "tool_calls": [{"name": "report_findings", "arguments": {"findings": "db down"}}]},
  {"when_tool": "ask_logs",
   "tool_calls": [{"name": "submit_diagnosis", "id": "final",
                   "arguments": {"root_cause": "db.mysql", "confidence": 0.8}}]}
]})");

TEST(ScriptedBackendTest, WhenToolSelectsAmongEligibleEntries) {
  auto b = Make(kScript);
  ASSERT_TRUE(b);
  // The supervisor (offered ask_logs) sees entries 0 and 2; the specialist only entry 1.
  Result<Reply> s0 = b->Complete(Conversation(0), Tools({"ask_logs", "submit_diagnosis"}));
  ASSERT_TRUE(s0.ok());
  EXPECT_EQ(s0->text, "supervisor asks logs");
  ASSERT_EQ(s0->tool_calls.size(), 1u);
  EXPECT_EQ(s0->tool_calls[0].name, "ask_logs");
  EXPECT_EQ(s0->tool_calls[0].id, "call_0_0");
  EXPECT_EQ(s0->tool_calls[0].arguments, Json({{"question", "errors?"}}));

  Result<Reply> specialist = b->Complete(Conversation(0), Tools({"report_findings"}));
  ASSERT_TRUE(specialist.ok());
  EXPECT_EQ(specialist->text, "specialist reports");
  EXPECT_EQ(specialist->tool_calls[0].name, "report_findings");

  Result<Reply> s1 = b->Complete(Conversation(1), Tools({"ask_logs", "submit_diagnosis"}));
  ASSERT_TRUE(s1.ok());
  ASSERT_EQ(s1->tool_calls.size(), 1u);
  EXPECT_EQ(s1->tool_calls[0].name, "submit_diagnosis");
  EXPECT_EQ(s1->tool_calls[0].id, "final");
  EXPECT_EQ(s1->stop_reason, "tool_use");
}

TEST(ScriptedBackendTest, StatelessAcrossConversations) {
  auto b = Make(kScript);
  ASSERT_TRUE(b);
  // Two conversations interleaved get the same replies as each alone would.
  auto tools = Tools({"ask_logs"});
  Result<Reply> a0 = b->Complete(Conversation(0), tools);
  Result<Reply> b0 = b->Complete(Conversation(0), tools);
  Result<Reply> a1 = b->Complete(Conversation(1), tools);
  Result<Reply> a0_again = b->Complete(Conversation(0), tools);
  ASSERT_TRUE(a0.ok() && b0.ok() && a1.ok() && a0_again.ok());
  EXPECT_EQ(a0->text, "supervisor asks logs");
  EXPECT_EQ(b0->text, a0->text);
  EXPECT_EQ(a0_again->text, a0->text);
  EXPECT_EQ(a1->tool_calls[0].name, "submit_diagnosis");
}

TEST(ScriptedBackendTest, ExhaustedScriptRepliesWithTextOnly) {
  auto b = Make(kScript);
  ASSERT_TRUE(b);
  Result<Reply> r = b->Complete(Conversation(1), Tools({"report_findings"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, kScriptExhausted);
  EXPECT_TRUE(r->tool_calls.empty());
  Result<Reply> none = b->Complete(Conversation(0), {});  // no entry without when_tool
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->text, kScriptExhausted);
}

TEST(ScriptedBackendTest, UsageIsCharactersOverFour) {
  auto b = Make(Json::parse(R"({"replies": [{"text": "abcdefgh"},
      {"tool_calls": [{"name": "t", "arguments": {"k": "v"}}]}]})"));
  ASSERT_TRUE(b);
  std::vector<Message> c = {{Message::Role::kUser, "12345"}};  // 5 chars: 2 tokens
  Result<Reply> r = b->Complete(c, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->usage.input_tokens, 2);
  EXPECT_EQ(r->usage.output_tokens, 2);  // 8 chars
  c.push_back({Message::Role::kAssistant, "abcdefgh"});
  Result<Reply> t = b->Complete(c, {});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->usage.input_tokens, 4);   // 13 chars
  EXPECT_EQ(t->usage.output_tokens, 3);  // {"k":"v"} = 9 chars
}

TEST(ScriptedBackendTest, BadScriptsAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"([])", "expected {\"replies\""},
      {R"({"replies": {}})", "expected {\"replies\""},
      {R"({"replies": [], "extra": 1})", "unknown key 'extra'"},
      {R"({"replies": [7]})", "replies[0] is not an object"},
      {R"({"replies": [{"txt": "x"}]})", "unknown key 'txt'"},
      {R"({"replies": [{"text": 1}]})", "text is not a string"},
      {R"({"replies": [{"tool_calls": [{"arguments": {}}]}]})", "a tool call without a name"},
      {R"({"replies": [{"tool_calls": [{"name": "x", "arguments": [1]}]}]})",
       "arguments of x are not an object"},
      {R"({"replies": [{"tool_calls": [{"name": "x", "args": {}}]}]})",
       "unknown tool-call key 'args'"},
  };
  for (const auto& [text, message] : cases) {
    Result<std::unique_ptr<Backend>> b = MakeScriptedBackend(Json::parse(text), "s.json");
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_NE(b.status().message().find(message), std::string::npos)
        << text << " -> " << b.status().ToString();
  }
}

}  // namespace
}  // namespace slurm_rca::agents

// ParseMessage: every malformed input gets the right JSON-RPC code, and the id is echoed when it
// can be read.
#include "mcp/protocol/jsonrpc.h"

#include <gtest/gtest.h>

#include <string>

namespace slurm_rca::mcp {
namespace {

struct BadCase {
  std::string text;
  int code;
  Json id;  // expected id in the error response
};

TEST(JsonRpcTest, MalformedInputGetsTheRightCode) {
  const std::vector<BadCase> cases = {
      {"", kParseError, nullptr},
      {"{", kParseError, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", kParseError, nullptr},
      {"not json", kParseError, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} trailing", kParseError, nullptr},
      {"{'jsonrpc':'2.0'}", kParseError, nullptr},
      {"{\"a\":\"\xff\xfe\"}", kParseError, nullptr},                         // invalid UTF-8
      {std::string(200, '[') + std::string(200, ']'), kParseError, nullptr},  // too deep
      {"1e999", kParseError, nullptr},                                        // overflows a double
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"n\":-1e400}}", kParseError,
       nullptr},
      // Batches were removed in 2025-06-18.
      {"[]", kInvalidRequest, nullptr},
      {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", kInvalidRequest, nullptr},
      // Not an object.
      {"1", kInvalidRequest, nullptr},
      {"\"ping\"", kInvalidRequest, nullptr},
      {"null", kInvalidRequest, nullptr},
      {"true", kInvalidRequest, nullptr},
      // jsonrpc missing or wrong; the id is still echoed.
      {"{\"id\":7,\"method\":\"ping\"}", kInvalidRequest, 7},
      {"{\"jsonrpc\":\"1.0\",\"id\":\"a\",\"method\":\"ping\"}", kInvalidRequest, "a"},
      {"{\"jsonrpc\":2.0,\"id\":7,\"method\":\"ping\"}", kInvalidRequest, 7},
      // Bad id types: null, fractional, boolean, object, array.
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", kInvalidRequest, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", kInvalidRequest, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", kInvalidRequest, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", kInvalidRequest, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", kInvalidRequest, nullptr},
      // Bad method.
      {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}", kInvalidRequest, 3},
      {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\"}", kInvalidRequest, 3},
      {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":null}", kInvalidRequest, 3},
      {"{\"jsonrpc\":\"2.0\",\"id\":3}", kInvalidRequest, 3},
      {"{\"jsonrpc\":\"2.0\"}", kInvalidRequest, nullptr},
      // Bad params.
      {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":5}", kInvalidRequest, 4},
      {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":\"x\"}", kInvalidRequest, 4},
      {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":null}", kInvalidRequest, 4},
      {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":true}", kInvalidRequest,
       nullptr},
      // Bad responses.
      {"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{},\"error\":{}}", kInvalidRequest, 5},
      {"{\"jsonrpc\":\"2.0\",\"result\":{}}", kInvalidRequest, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":\"bad\"}", kInvalidRequest, 5},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    ParsedMessage p = ParseMessage(c.text);
    ASSERT_FALSE(p.ok());
    ASSERT_TRUE(p.error.is_object());
    EXPECT_EQ(p.error["jsonrpc"], "2.0");
    EXPECT_EQ(p.error["error"]["code"], c.code);
    EXPECT_TRUE(p.error["error"]["message"].is_string());
    EXPECT_FALSE(p.error["error"]["message"].get<std::string>().empty());
    ASSERT_TRUE(p.error.contains("id"));
    EXPECT_EQ(p.error["id"], c.id);
    EXPECT_FALSE(p.error.contains("result"));
    // The error itself must serialize to one line.
    EXPECT_EQ(Serialize(p.error).find('\n'), std::string::npos);
  }
}

TEST(JsonRpcTest, BatchMessageNamesTheRevision) {
  ParsedMessage p = ParseMessage("[1,2]");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error["error"]["message"], "batches are not supported (removed in MCP 2025-06-18)");
}

TEST(JsonRpcTest, RequestsAndNotifications) {
  ParsedMessage p =
      ParseMessage(R"({"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x"}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kRequest);
  EXPECT_EQ(p.message->id, "abc");
  EXPECT_EQ(p.message->method, "tools/call");
  EXPECT_EQ(p.message->params["name"], "x");

  p = ParseMessage(R"({"jsonrpc":"2.0","id":-12,"method":"ping"})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kRequest);
  EXPECT_EQ(p.message->id, -12);
  EXPECT_TRUE(p.message->params.is_null());

  p = ParseMessage(R"({"jsonrpc":"2.0","id":0,"method":"ping","params":[]})");
  ASSERT_TRUE(p.ok());  // array params are JSON-RPC; the server refuses them per method
  EXPECT_TRUE(p.message->params.is_array());

  p = ParseMessage(" {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r\n");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kNotification);
  EXPECT_TRUE(p.message->id.is_null());
  EXPECT_EQ(p.message->method, "notifications/initialized");
}

TEST(JsonRpcTest, ResponsesFromTheClientParse) {
  ParsedMessage p = ParseMessage(R"({"jsonrpc":"2.0","id":9,"result":{}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kResponse);
  EXPECT_EQ(p.message->id, 9);
  EXPECT_EQ(p.message->result, Json::object());

  p = ParseMessage(R"({"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"no"}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kResponse);
  EXPECT_EQ(p.message->error["code"], -32601);

  // An error response may carry id null: its sender could not read our id.
  p = ParseMessage(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.message->kind, Message::Kind::kResponse);
}

TEST(JsonRpcTest, Builders) {
  EXPECT_EQ(MakeResult(1, Json::object()), Json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
  EXPECT_EQ(Serialize(MakeResult(1, Json::object())), R"({"id":1,"jsonrpc":"2.0","result":{}})");
  EXPECT_EQ(MakeError("a", kMethodNotFound, "nope"),
            Json::parse(R"({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"nope"}})"));
  EXPECT_EQ(MakeError(nullptr, kInvalidParams, "bad", {{"k", 1}})["error"]["data"]["k"], 1);
  EXPECT_EQ(MakeNotification("notifications/progress", {{"progress", 1}}),
            Json::parse(R"({"jsonrpc":"2.0","method":"notifications/progress",
                            "params":{"progress":1}})"));
  EXPECT_FALSE(MakeNotification("notifications/initialized", nullptr).contains("params"));
}

TEST(JsonRpcTest, AResultSerializedOnceIsWrittenAsSerializeWouldWriteIt) {
  const Json result = {
      {"content", Json::array({{{"type", "text"}, {"text", "[replay] nodes\n{\"rows\":[]}"}}})},
      {"structuredContent",
       {{"rows", Json::array()}, {"total_rows", 0}, {"zeta", "\xe2\x82\xac"}}}};
  for (const Json& id : {Json(1), Json(-7), Json(123456789012345), Json("a\"b\\c\n"),
                         Json("\xe2\x82\xac"), Json(nullptr)}) {
    EXPECT_EQ(SerializeResult(id, Serialize(result)), Serialize(MakeResult(id, result)))
        << id.dump();
  }
}

TEST(JsonRpcTest, SerializeIsOneLineAndSurvivesBadUtf8) {
  Json j = {{"text", "line one\nline two"}, {"bad", std::string("\xff\xfe")}};
  std::string s = Serialize(j);
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_TRUE(Json::accept(s));
}

TEST(JsonRpcTest, IdValidity) {
  EXPECT_TRUE(IsValidId(1));
  EXPECT_TRUE(IsValidId(-1));
  EXPECT_TRUE(IsValidId("x"));
  EXPECT_FALSE(IsValidId(nullptr));
  EXPECT_FALSE(IsValidId(1.5));
  EXPECT_FALSE(IsValidId(true));
  EXPECT_FALSE(IsValidId(Json::object()));
}

}  // namespace
}  // namespace slurm_rca::mcp

// Server::Handle: lifecycle, negotiation, ping, logging, tools/list, tools/call, progress and
// cancellation, with fake tools (no transport).
#include "mcp/protocol/server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mcp/protocol/test_tools.h"

namespace slurm_rca::mcp {
namespace {

Message Parse(const Json& j) {
  ParsedMessage p = ParseMessage(Serialize(j));
  EXPECT_TRUE(p.ok()) << Serialize(j);
  return p.ok() ? *p.message : Message{};
}

Message Request(const Json& id, const std::string& method, Json params = nullptr) {
  Json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) j["params"] = params;
  return Parse(j);
}

Message Notification(const std::string& method, Json params = nullptr) {
  return Parse(MakeNotification(method, std::move(params)));
}

Json InitParams(const std::string& version) {
  return {{"protocolVersion", version},
          {"capabilities", Json::object()},
          {"clientInfo", {{"name", "test"}, {"version", "1"}}}};
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : server_(testing_tools::Options()) {}

  // Handles one message, collecting notifications.
  std::optional<Json> Send(const Message& m) {
    return server_.Handle(m, session_, [this](const Json& n) { notes_.push_back(n); });
  }

  Json Initialize(const std::string& version = "2025-11-25") {
    std::optional<Json> r = Send(Request(0, "initialize", InitParams(version)));
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(Send(Notification("notifications/initialized")), std::nullopt);
    return r.value_or(Json());
  }

  static int Code(const std::optional<Json>& r) {
    if (!r || !r->contains("error")) return 0;
    return (*r)["error"]["code"].get<int>();
  }

  Server server_;
  Session session_;
  std::vector<Json> notes_;
};

TEST_F(ServerTest, InitializeAnswersWithCapabilitiesAndServerInfo) {
  std::optional<Json> r = Send(Request(1, "initialize", InitParams("2025-11-25")));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["id"], 1);
  const Json& result = (*r)["result"];
  EXPECT_EQ(result["protocolVersion"], "2025-11-25");
  EXPECT_EQ(result["capabilities"]["tools"]["listChanged"], false);
  EXPECT_EQ(result["capabilities"]["logging"], Json::object());
  EXPECT_FALSE(result["capabilities"].contains("resources"));
  EXPECT_EQ(result["serverInfo"]["name"], "slurm-mcp-test");
  EXPECT_EQ(result["serverInfo"]["title"], "Test server");
  EXPECT_EQ(result["serverInfo"]["version"], "9.9.9");
  EXPECT_EQ(result["instructions"], "Use the fake tools.");
  EXPECT_TRUE(session_.initialize_answered);
  EXPECT_FALSE(session_.initialized);
  EXPECT_EQ(session_.client_info["name"], "test");

  EXPECT_EQ(Send(Notification("notifications/initialized")), std::nullopt);
  EXPECT_TRUE(session_.initialized);

  // A second initialize on the same session is refused.
  EXPECT_EQ(Code(Send(Request(2, "initialize", InitParams("2025-11-25")))), kInvalidRequest);
  EXPECT_EQ(session_.protocol_version, "2025-11-25");
  EXPECT_TRUE(notes_.empty());
}

TEST_F(ServerTest, InstructionsOmittedWhenEmpty) {
  ServerOptions options = testing_tools::Options();
  options.instructions.clear();
  Server server(options);
  Session session;
  std::optional<Json> r =
      server.Handle(Request(1, "initialize", InitParams("2025-11-25")), session, nullptr);
  ASSERT_TRUE(r);
  EXPECT_FALSE((*r)["result"].contains("instructions"));
}

TEST(ServerNegotiationTest, SupportedVersionsAreEchoedOthersGetTheNewest) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"},
      {"1999-01-01", "2025-11-25"}, {"2026-07-28", "2025-11-25"}, {"2024-11-05", "2025-11-25"},
  };
  Server server(testing_tools::Options());
  for (const auto& [requested, expected] : cases) {
    Session session;
    std::optional<Json> r =
        server.Handle(Request(1, "initialize", InitParams(requested)), session, nullptr);
    ASSERT_TRUE(r) << requested;
    EXPECT_EQ((*r)["result"]["protocolVersion"], expected) << requested;
    EXPECT_EQ(session.protocol_version, expected);
  }
}

TEST_F(ServerTest, InitializeParamsAreValidated) {
  EXPECT_EQ(Code(Send(Request(1, "initialize"))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(1, "initialize", Json::array()))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(1, "initialize", {{"protocolVersion", 20251125}}))), kInvalidParams);
  Json bad = InitParams("2025-11-25");
  bad["clientInfo"] = "me";
  EXPECT_EQ(Code(Send(Request(1, "initialize", bad))), kInvalidParams);
  EXPECT_FALSE(session_.initialize_answered);  // none of these initialized the session
}

TEST_F(ServerTest, EarlyRequestsAreRefusedAtOnce) {
  auto start = std::chrono::steady_clock::now();
  // A 2026-07-28 dual-era client probes first and falls back to initialize on any error.
  std::optional<Json> r = Send(Request("d", "server/discover", Json::object()));
  EXPECT_EQ(Code(r), kMethodNotFound);
  EXPECT_EQ((*r)["id"], "d");
  EXPECT_EQ(Code(Send(Request(2, "tools/list"))), kInvalidRequest);
  EXPECT_EQ(Code(Send(Request(3, "tools/call", {{"name", "echo"}}))), kInvalidRequest);
  EXPECT_EQ(Code(Send(Request(4, "logging/setLevel", {{"level", "debug"}}))), kInvalidRequest);
  // ping is allowed before initialize.
  r = Send(Request(5, "ping"));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"], Json::object());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));

  Initialize();
  EXPECT_EQ(Code(Send(Request(6, "tools/list"))), 0);
}

TEST_F(ServerTest, PingAnswersAnEmptyObject) {
  Initialize();
  std::optional<Json> r = Send(Request(7, "ping"));
  ASSERT_TRUE(r);
  EXPECT_TRUE((*r)["result"].is_object());
  EXPECT_TRUE((*r)["result"].empty());
  EXPECT_EQ(Serialize(*r), R"({"id":7,"jsonrpc":"2.0","result":{}})");
}

TEST_F(ServerTest, UnknownMethodsAndNotifications) {
  Initialize();
  std::optional<Json> r = Send(Request(8, "resources/list"));
  EXPECT_EQ(Code(r), kMethodNotFound);
  EXPECT_EQ((*r)["id"], 8);
  EXPECT_EQ(Send(Notification("notifications/whatever", {{"x", 1}})), std::nullopt);
  EXPECT_EQ(Send(Notification("notifications/roots/list_changed")), std::nullopt);
  // A response from the client needs nothing back.
  EXPECT_EQ(Send(Parse(Json::parse(R"({"jsonrpc":"2.0","id":99,"result":{}})"))), std::nullopt);
  EXPECT_TRUE(notes_.empty());
}

TEST_F(ServerTest, SetLevelAcceptsRfc5424LevelsOnly) {
  Initialize();
  for (const char* level :
       {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}) {
    std::optional<Json> r = Send(Request(1, "logging/setLevel", {{"level", level}}));
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["result"], Json::object()) << level;
    EXPECT_EQ(session_.log_level, level);
  }
  EXPECT_EQ(Code(Send(Request(2, "logging/setLevel", {{"level", "verbose"}}))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(3, "logging/setLevel", {{"level", "INFO"}}))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(4, "logging/setLevel", {{"level", 3}}))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(5, "logging/setLevel", Json::object()))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(6, "logging/setLevel"))), kInvalidParams);
  EXPECT_EQ(session_.log_level, "emergency");
}

TEST_F(ServerTest, LogMessagesRespectTheSessionLevel) {
  Initialize();
  ASSERT_TRUE(Send(Request(1, "logging/setLevel", {{"level", "warning"}})));
  std::optional<Json> r = Send(Request(2, "tools/call", {{"name", "log"}}));
  ASSERT_TRUE(r);
  // The tool logs at debug, info, warning and error; only the last two pass.
  ASSERT_EQ(notes_.size(), 2u);
  for (const Json& n : notes_) {
    EXPECT_EQ(n["method"], "notifications/message");
    EXPECT_EQ(n["params"]["logger"], "slurm-mcp");
    EXPECT_TRUE(n["params"].contains("data"));
  }
  EXPECT_EQ(notes_[0]["params"]["level"], "warning");
  EXPECT_EQ(notes_[1]["params"]["level"], "error");
  EXPECT_EQ(notes_[1]["params"]["data"]["what"], "error");
}

TEST_F(ServerTest, ToolsListShape) {
  Initialize();
  std::optional<Json> r = Send(Request(1, "tools/list"));
  ASSERT_TRUE(r);
  const Json& tools = (*r)["result"]["tools"];
  ASSERT_TRUE(tools.is_array());
  EXPECT_FALSE((*r)["result"].contains("nextCursor"));
  const std::vector<Tool>& registered = server_.tools();
  ASSERT_EQ(tools.size(), registered.size());
  const std::regex name_re("^[a-zA-Z0-9_-]{1,64}$");
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const Json& t = tools[i];
    SCOPED_TRACE(t.dump());
    EXPECT_EQ(t["name"], registered[i].name);  // in registration order
    EXPECT_TRUE(std::regex_match(t["name"].get<std::string>(), name_re));
    EXPECT_TRUE(t["description"].is_string());
    EXPECT_FALSE(t["description"].get<std::string>().empty());
    ASSERT_TRUE(t["inputSchema"].is_object());
    EXPECT_EQ(t["inputSchema"]["type"], "object");
    EXPECT_EQ(t["annotations"]["readOnlyHint"], true);
    if (registered[i].output_schema.is_null()) {
      EXPECT_FALSE(t.contains("outputSchema"));
    } else {
      EXPECT_EQ(t["outputSchema"], registered[i].output_schema);
    }
  }
  EXPECT_EQ(tools[0]["title"], "Echo");
  // Schemas survive verbatim ($schema, $defs, additionalProperties).
  EXPECT_EQ(tools[0]["inputSchema"], registered[0].input_schema);

  // A single page: any cursor is invalid; an explicit null is no cursor.
  EXPECT_EQ(Code(Send(Request(2, "tools/list", {{"cursor", "abc"}}))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(3, "tools/list", {{"cursor", nullptr}}))), 0);
  EXPECT_EQ(Code(Send(Request(4, "tools/list", Json::array()))), kInvalidParams);
}

TEST_F(ServerTest, DescribeFillsAMissingInputSchema) {
  Tool t;
  t.name = "bare";
  t.description = "d";
  Json d = t.Describe();
  EXPECT_EQ(d["inputSchema"], Json::parse(R"({"type":"object","additionalProperties":false})"));
  EXPECT_FALSE(d.contains("outputSchema"));
  EXPECT_FALSE(d.contains("annotations"));
  EXPECT_FALSE(d.contains("title"));
}

TEST_F(ServerTest, CallToolSuccessCarriesStructuredContent) {
  Initialize();
  std::optional<Json> r =
      Send(Request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}));
  ASSERT_TRUE(r);
  const Json& result = (*r)["result"];
  EXPECT_FALSE(result.contains("isError"));
  EXPECT_EQ(result["content"][0]["type"], "text");
  EXPECT_EQ(result["content"][0]["text"], "hi");
  EXPECT_EQ(result["structuredContent"]["echo"], "hi");

  // Absent arguments are an empty object.
  r = Send(Request(2, "tools/call", {{"name", "echo"}}));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["result"]["structuredContent"]["echo"], "");
}

TEST_F(ServerTest, CallToolProtocolErrors) {
  Initialize();
  std::optional<Json> r = Send(Request(1, "tools/call", {{"name", "nope"}}));
  EXPECT_EQ(Code(r), kInvalidParams);
  EXPECT_EQ((*r)["error"]["message"], "Unknown tool: nope");
  EXPECT_EQ((*r)["id"], 1);
  EXPECT_EQ(Code(Send(Request(2, "tools/call"))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(3, "tools/call", Json::array({"echo"})))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(4, "tools/call", {{"name", 5}}))), kInvalidParams);
  EXPECT_EQ(Code(Send(Request(5, "tools/call", {{"name", "echo"}, {"arguments", "x"}}))),
            kInvalidParams);
  EXPECT_EQ(Code(Send(Request(6, "tools/call", {{"name", "echo"}, {"arguments", {1, 2}}}))),
            kInvalidParams);
  EXPECT_EQ(Code(Send(Request(7, "tools/call", {{"name", "echo"}, {"_meta", 1}}))), kInvalidParams);
  EXPECT_EQ(
      Code(Send(Request(8, "tools/call", {{"name", "echo"}, {"_meta", {{"progressToken", 1.5}}}}))),
      kInvalidParams);
  // The messages say what was wrong.
  r = Send(Request(9, "tools/call", {{"name", "echo"}, {"arguments", "x"}}));
  EXPECT_NE((*r)["error"]["message"].get<std::string>().find("arguments"), std::string::npos);
}

TEST_F(ServerTest, ErrorResultsNeverCarryStructuredContent) {
  Initialize();
  // The fake tool sets both is_error and structured; the server must drop the latter.
  std::optional<Json> r = Send(Request(1, "tools/call", {{"name", "fail"}}));
  ASSERT_TRUE(r);
  const Json& result = (*r)["result"];
  EXPECT_EQ(result["isError"], true);
  EXPECT_FALSE(result.contains("structuredContent"));
  EXPECT_EQ(result["content"][0]["text"], "the fake tool failed");
}

TEST_F(ServerTest, AThrowingToolBecomesAnErrorResult) {
  Initialize();
  std::optional<Json> r = Send(Request(1, "tools/call", {{"name", "throws"}}));
  ASSERT_TRUE(r);
  const Json& result = (*r)["result"];
  EXPECT_EQ(result["isError"], true);
  EXPECT_FALSE(result.contains("structuredContent"));
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("boom"), std::string::npos);
}

TEST_F(ServerTest, ProgressNotificationsCarryTheToken) {
  Initialize();
  for (const Json& token : {Json("tok-1"), Json(42)}) {
    notes_.clear();
    std::optional<Json> r = Send(
        Request(1, "tools/call", {{"name", "progress"}, {"_meta", {{"progressToken", token}}}}));
    ASSERT_TRUE(r);
    EXPECT_FALSE((*r)["result"].contains("isError"));
    // The tool reports 1, 2, 2 (dropped: not increasing), 1.5 (dropped), 3.
    ASSERT_EQ(notes_.size(), 3u) << Json(notes_).dump();
    double last = -1;
    for (const Json& n : notes_) {
      EXPECT_EQ(n["method"], "notifications/progress");
      EXPECT_EQ(n["params"]["progressToken"], token);
      EXPECT_EQ(n["params"]["total"], 3);
      EXPECT_GT(n["params"]["progress"].get<double>(), last);
      last = n["params"]["progress"].get<double>();
    }
    EXPECT_EQ(notes_[0]["params"]["message"], "step 1");
  }
  // Without a token, no progress is sent.
  notes_.clear();
  ASSERT_TRUE(Send(Request(2, "tools/call", {{"name", "progress"}})));
  EXPECT_TRUE(notes_.empty());
}

TEST_F(ServerTest, CancellationSuppressesTheResponse) {
  Initialize();
  std::optional<Json> reply = Json("not yet");
  std::thread call([&] {
    reply = server_.Handle(Request("slow-1", "tools/call", {{"name", "slow"}}), session_,
                           [](const Json&) {});
  });
  testing_tools::WaitForSlowStart();
  EXPECT_EQ(
      Send(Notification("notifications/cancelled", {{"requestId", "slow-1"}, {"reason", "test"}})),
      std::nullopt);
  call.join();
  EXPECT_EQ(reply, std::nullopt);
  EXPECT_TRUE(session_.cancelled.empty());  // the finished request's entry is gone

  // A cancellation that arrives before the call starts also means no response, without running.
  EXPECT_EQ(Send(Notification("notifications/cancelled", {{"requestId", 77}})), std::nullopt);
  EXPECT_EQ(Send(Request(77, "tools/call", {{"name", "echo"}})), std::nullopt);

  // Unknown or malformed cancellations are ignored, and other calls still answer.
  EXPECT_EQ(Send(Notification("notifications/cancelled", {{"requestId", nullptr}})), std::nullopt);
  EXPECT_EQ(Send(Notification("notifications/cancelled")), std::nullopt);
  EXPECT_TRUE(Send(Request(78, "tools/call", {{"name", "echo"}})).has_value());
}

TEST_F(ServerTest, ToolsSeeCancellationThroughTheContext) {
  Initialize();
  std::optional<Json> reply;
  std::thread call([&] {
    reply = server_.Handle(Request(5, "tools/call", {{"name", "slow"}}), session_, nullptr);
  });
  testing_tools::WaitForSlowStart();
  auto sent = std::chrono::steady_clock::now();
  Send(Notification("notifications/cancelled", {{"requestId", 5}}));
  call.join();
  // The slow tool stops within a poll interval of the cancellation, not at its 10 s limit.
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(2));
  EXPECT_EQ(reply, std::nullopt);
}

}  // namespace
}  // namespace slurm_rca::mcp

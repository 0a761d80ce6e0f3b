// Server::Handle: lifecycle, negotiation, ping, logging, tools/list, tools/call, progress and
// cancellation, with fake tools (no transport).
#include "mcp/protocol/server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
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

// HandleSerialized writes what Handle answers, byte for byte, for every kind of message; a tool
// result that came serialized is written from its bytes.
TEST(ServerSerializedTest, TheLineIsWhatHandleAnswersSerialized) {
  ServerOptions options = testing_tools::Options();
  ToolResult reused;
  reused.content.push_back({{"type", "text"}, {"text", "one answer\n{\"n\":1}"}});
  reused.structured = Json{{"n", 1}};
  reused.serialized = std::make_shared<const std::string>(SerializeToolResult(reused));
  options.tools.push_back({"reused", "", "An answer serialized once.", Json::object(), nullptr,
                           nullptr, [reused](const Json&, ToolContext&) { return reused; }});
  ToolResult wrong = reused;
  wrong.serialized = std::make_shared<const std::string>(R"({"content":[],"from":"bytes"})");
  options.tools.push_back({"bytes", "", "Bytes that differ from its fields.", Json::object(),
                           nullptr, nullptr, [wrong](const Json&, ToolContext&) { return wrong; }});
  Server server(options);
  Session by_json;
  Session by_line;
  auto none = [](const Json&) {};
  const std::vector<Message> messages = {
      Request(1, "tools/list"),  // before initialize: an error
      Request(2, "initialize", InitParams("2025-06-18")),
      Notification("notifications/initialized"),
      Request("three", "ping"),
      Request(4, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "h\u00e9\"llo\n"}}}}),
      Request(5, "tools/call", {{"name", "fail"}}),
      Request(6, "tools/call", {{"name", "throws"}}),
      Request(7, "tools/call", {{"name", "nope"}}),
      Request(8, "tools/call", {{"name", "reused"}}),
      Request("nine", "tools/call", {{"name", "reused"}}),
  };
  for (const Message& m : messages) {
    std::optional<Json> reply = server.Handle(m, by_json, none);
    std::optional<std::string> line = server.HandleSerialized(m, by_line, none);
    ASSERT_EQ(reply.has_value(), line.has_value()) << m.method;
    if (reply) {
      EXPECT_EQ(*line, Serialize(*reply)) << m.method;
    }
  }
  const Message bytes = Request(10, "tools/call", {{"name", "bytes"}});
  EXPECT_EQ(*server.HandleSerialized(bytes, by_line, none),
            R"({"id":10,"jsonrpc":"2.0","result":{"content":[],"from":"bytes"}})");
  EXPECT_EQ((*server.Handle(bytes, by_json, none))["result"]["structuredContent"]["n"], 1)
      << "Handle answers from the fields";
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


// ---- The 2026-07-28 era (stateless; the claim in params._meta) ----

Json Envelope(const std::string& version = "2026-07-28") {
  return {{kMetaProtocolVersion, version},
          {kMetaClientCapabilities, Json::object()},
          {kMetaClientInfo, {{"name", "modern-test"}, {"version", "1"}}}};
}

// params with the modern envelope merged in.
Json Modern(Json params = Json::object(), Json meta = Envelope()) {
  for (auto& [k, v] : meta.items()) params["_meta"][k] = v;
  return params;
}

// A server with everything the modern era can offer: tools, one resource, one prompt, one skill.
ServerOptions FullOptions() {
  ServerOptions options = testing_tools::Options();
  options.resources.push_back(Resource{.uri = "skill://probe/SKILL.md", .name = "probe",
                                       .text = "---\nname: probe\n---\n# Probe\n"});
  options.prompts.push_back(Prompt{
      .name = "probe",
      .title = "Probe",
      .description = "Probes.",
      .arguments = {{.name = "symptom", .description = "what is wrong", .required = true},
                    {.name = "node", .description = "", .required = false}},
      .render = [](const std::map<std::string, std::string>& args) {
        std::string text = "symptom=" + args.at("symptom");
        if (args.count("node")) text += " node=" + args.at("node");
        return Json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}});
      }});
  options.skills.push_back(SkillEntry{
      .uri = "skill://probe/SKILL.md",
      .frontmatter = {{"name", "probe"}, {"description", "Probes."}},
      .files = {{.uri = "skill://probe/SKILL.md", .digest = "sha256:00", .size = 24}}});
  return options;
}

class ModernTest : public ::testing::Test {
 protected:
  ModernTest() : server_(FullOptions()) {}

  std::optional<Json> Send(const Message& m) {
    return server_.Handle(m, session_, [this](const Json& n) { notes_.push_back(n); });
  }
  Json Result(const std::string& method, Json params = Json::object()) {
    std::optional<Json> r = Send(Request("m", method, Modern(std::move(params))));
    EXPECT_TRUE(r && r->contains("result")) << method << ": " << (r ? r->dump() : "none");
    return r ? (*r)["result"] : Json();
  }
  static int Code(const std::optional<Json>& r) {
    return r && r->contains("error") ? (*r)["error"]["code"].get<int>() : 0;
  }

  Server server_;
  Session session_;
  std::vector<Json> notes_;
};

TEST_F(ModernTest, DiscoverNeedsNoHandshakeAndDescribesTheServer) {
  const Json d = Result("server/discover");
  EXPECT_EQ(d["supportedVersions"], Json::array({"2026-07-28"}));
  EXPECT_EQ(d["capabilities"]["tools"], Json::object());
  EXPECT_EQ(d["capabilities"]["resources"], Json::object());
  EXPECT_EQ(d["capabilities"]["prompts"], Json::object());
  EXPECT_EQ(d["capabilities"]["extensions"][kSkillsExtension], Json::object());
  EXPECT_EQ(d["instructions"], "Use the fake tools.");
  EXPECT_EQ(d["_meta"][kMetaServerInfo]["name"], "slurm-mcp-test");
  EXPECT_EQ(d["_meta"][kMetaServerInfo]["version"], "9.9.9");
  EXPECT_FALSE(d.contains("serverInfo"));  // in _meta, not the body (spec PR #3002)
  EXPECT_EQ(d["resultType"], "complete");
  EXPECT_EQ(d["ttlMs"], 3'600'000);
  EXPECT_EQ(d["cacheScope"], "public");
  EXPECT_FALSE(session_.initialize_answered);  // stateless: the session was not touched
}

TEST_F(ModernTest, ExtensionsAndCapabilitiesFollowWhatTheServerHas) {
  Server bare(testing_tools::Options());
  Session session;
  std::optional<Json> r =
      bare.Handle(Request(1, "server/discover", Modern()), session, nullptr);
  ASSERT_TRUE(r);
  const Json& caps = (*r)["result"]["capabilities"];
  EXPECT_FALSE(caps.contains("resources"));
  EXPECT_FALSE(caps.contains("prompts"));
  EXPECT_FALSE(caps.contains("extensions"));
  for (const char* method : {"resources/list", "prompts/list", "skills/list"}) {
    EXPECT_EQ(Code(bare.Handle(Request(2, method, Modern()), session, nullptr)), kMethodNotFound)
        << method;
  }
}

TEST_F(ModernTest, AMalformedEnvelopeIsInvalidParams) {
  Json no_caps = Envelope();
  no_caps.erase(kMetaClientCapabilities);
  Json caps_not_object = Envelope();
  caps_not_object[kMetaClientCapabilities] = "none";
  Json version_not_string = Envelope();
  version_not_string[kMetaProtocolVersion] = 20260728;
  Json bad_level = Envelope();
  bad_level[kMetaLogLevel] = "loud";
  Json info_not_object = Envelope();
  info_not_object[kMetaClientInfo] = "me";
  for (const Json& meta : {no_caps, caps_not_object, version_not_string, bad_level, info_not_object}) {
    std::optional<Json> r = Send(Request(7, "tools/list", Modern(Json::object(), meta)));
    EXPECT_EQ(Code(r), kInvalidParams) << meta.dump();
    EXPECT_EQ((*r)["id"], 7);
  }
  // clientInfo is optional: a request without it is served.
  Json no_info = Envelope();
  no_info.erase(kMetaClientInfo);
  EXPECT_TRUE((*Send(Request(8, "tools/list", Modern(Json::object(), no_info)))).contains("result"));
}

TEST_F(ModernTest, AnUnservedRevisionNamesTheSupportedOnes) {
  for (const char* version : {"v999.0.0", "2025-11-25", "2026-07-29"}) {
    std::optional<Json> r = Send(Request(3, "tools/list", Modern(Json::object(), Envelope(version))));
    ASSERT_EQ(Code(r), kUnsupportedProtocolVersion) << version;
    EXPECT_EQ((*r)["error"]["data"]["supported"], Json::array({"2026-07-28"}));
    EXPECT_EQ((*r)["error"]["data"]["requested"], version);
    EXPECT_EQ((*r)["id"], 3);
  }
}

TEST_F(ModernTest, RemovedAndUnknownMethodsAreMethodNotFound) {
  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe",
                             "resources/unsubscribe", "completion/complete", "nope"}) {
    std::optional<Json> r = Send(Request(4, method, Modern()));
    EXPECT_EQ(Code(r), kMethodNotFound) << method;
  }
  EXPECT_FALSE(session_.initialize_answered);  // a modern initialize does not start a session
}

TEST_F(ModernTest, EveryResultCarriesResultTypeAndServerInfoListsCarryCacheHints) {
  for (const char* method : {"tools/list", "resources/list", "resources/templates/list",
                             "prompts/list", "skills/list"}) {
    const Json r = Result(method);
    EXPECT_EQ(r["resultType"], "complete") << method;
    EXPECT_EQ(r["_meta"][kMetaServerInfo]["name"], "slurm-mcp-test") << method;
    EXPECT_EQ(r["cacheScope"], "public") << method;
    EXPECT_EQ(r["ttlMs"], 3'600'000) << method;
  }
  const Json read = Result("resources/read", {{"uri", "skill://probe/SKILL.md"}});
  EXPECT_EQ(read["cacheScope"], "public");
  EXPECT_EQ(read["contents"][0]["text"], "---\nname: probe\n---\n# Probe\n");
  // A tool's answer is live cluster state: no cache hint, ever.
  const Json call = Result("tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  EXPECT_EQ(call["resultType"], "complete");
  EXPECT_EQ(call["_meta"][kMetaServerInfo]["version"], "9.9.9");
  EXPECT_EQ(call["structuredContent"]["echo"], "hi");
  EXPECT_FALSE(call.contains("ttlMs"));
  EXPECT_FALSE(call.contains("cacheScope"));
  const Json prompt = Result("prompts/get", {{"name", "probe"}, {"arguments", {{"symptom", "x"}}}});
  EXPECT_FALSE(prompt.contains("ttlMs"));
}

TEST_F(ModernTest, AMissingResourceIsInvalidParamsNotTheLegacyCode) {
  std::optional<Json> r =
      Send(Request(5, "resources/read", Modern({{"uri", "test://nonexistent-resource"}})));
  EXPECT_EQ(Code(r), kInvalidParams);
  EXPECT_EQ((*r)["error"]["data"]["uri"], "test://nonexistent-resource");
  // The same read in a 2025 session keeps -32002.
  Session legacy;
  server_.Handle(Request(0, "initialize", InitParams("2025-11-25")), legacy, nullptr);
  EXPECT_EQ(Code(server_.Handle(Request(6, "resources/read", {{"uri", "test://nonexistent"}}),
                                legacy, nullptr)),
            kResourceNotFound);
}

TEST_F(ModernTest, LogMessagesOnlyWhenTheRequestNamesALevel) {
  Result("tools/call", {{"name", "log"}});
  EXPECT_TRUE(notes_.empty()) << notes_.size() << " unsolicited log messages";
  Json meta = Envelope();
  meta[kMetaLogLevel] = "warning";
  std::optional<Json> r = Send(Request(9, "tools/call", Modern({{"name", "log"}}, meta)));
  ASSERT_TRUE(r && r->contains("result"));
  std::vector<std::string> levels;
  for (const Json& n : notes_) levels.push_back(n["params"]["level"]);
  EXPECT_EQ(levels, (std::vector<std::string>{"warning", "error"}));
}

TEST_F(ModernTest, ProgressStillFlows) {
  std::optional<Json> r =
      Send(Request(10, "tools/call", Modern({{"name", "progress"}, {"_meta", {{"progressToken", "p"}}}})));
  ASSERT_TRUE(r && r->contains("result")) << (r ? r->dump() : "");
  ASSERT_FALSE(notes_.empty());
  EXPECT_EQ(notes_[0]["method"], "notifications/progress");
  EXPECT_EQ(notes_[0]["params"]["progressToken"], "p");
}

TEST_F(ModernTest, PromptsInBothEras) {
  const Json list = Result("prompts/list");
  ASSERT_EQ(list["prompts"].size(), 1u);
  EXPECT_EQ(list["prompts"][0]["name"], "probe");
  EXPECT_EQ(list["prompts"][0]["arguments"][0],
            (Json{{"name", "symptom"}, {"description", "what is wrong"}, {"required", true}}));
  const Json got = Result("prompts/get", {{"name", "probe"}, {"arguments", {{"symptom", "slow"}, {"node", "n1"}}}});
  EXPECT_EQ(got["description"], "Probes.");
  EXPECT_EQ(got["messages"][0]["content"]["text"], "symptom=slow node=n1");

  // Errors: unknown prompt, missing or undeclared argument, non-string value.
  const std::vector<Json> bad = {
      {{"name", "nope"}, {"arguments", {{"symptom", "x"}}}},
      {{"name", "probe"}},
      {{"name", "probe"}, {"arguments", {{"node", "n1"}}}},
      {{"name", "probe"}, {"arguments", {{"symptom", "x"}, {"extra", "y"}}}},
      {{"name", "probe"}, {"arguments", {{"symptom", 3}}}},
      {{"name", 3}},
  };
  for (const Json& params : bad) {
    EXPECT_EQ(Code(Send(Request(11, "prompts/get", Modern(params)))), kInvalidParams) << params;
  }

  // The legacy era offers the same prompts after initialize, and declares them.
  Session legacy;
  std::optional<Json> init =
      server_.Handle(Request(0, "initialize", InitParams("2025-11-25")), legacy, nullptr);
  EXPECT_EQ((*init)["result"]["capabilities"]["prompts"], (Json{{"listChanged", false}}));
  std::optional<Json> r = server_.Handle(
      Request(12, "prompts/get", {{"name", "probe"}, {"arguments", {{"symptom", "s"}}}}), legacy,
      nullptr);
  ASSERT_TRUE(r && r->contains("result"));
  EXPECT_EQ((*r)["result"]["messages"][0]["content"]["text"], "symptom=s");
  EXPECT_FALSE((*r)["result"].contains("resultType"));  // legacy results are as they were
  EXPECT_EQ(Code(server_.Handle(Request(13, "prompts/get", {{"name", "probe"}}), legacy, nullptr)),
            kInvalidParams);
}

TEST_F(ModernTest, SkillsListAndGet) {
  const Json list = Result("skills/list");
  ASSERT_EQ(list["skills"].size(), 1u);
  EXPECT_EQ(list["skills"][0]["uri"], "skill://probe/SKILL.md");
  EXPECT_EQ(list["skills"][0]["frontmatter"]["name"], "probe");
  EXPECT_EQ(list["skills"][0]["resources"][0]["size"], 24);
  const Json got = Result("skills/get", {{"uri", "skill://probe/SKILL.md"}});
  EXPECT_EQ(got["skill"], list["skills"][0]);
  EXPECT_EQ(got["cacheScope"], "public");
  std::optional<Json> r = Send(Request(14, "skills/get", Modern({{"uri", "skill://nope/SKILL.md"}})));
  EXPECT_EQ(Code(r), kInvalidParams);
  EXPECT_EQ((*r)["error"]["data"]["uri"], "skill://nope/SKILL.md");
  // Not a legacy method.
  Session legacy;
  server_.Handle(Request(0, "initialize", InitParams("2025-11-25")), legacy, nullptr);
  EXPECT_EQ(Code(server_.Handle(Request(15, "skills/list"), legacy, nullptr)), kMethodNotFound);
}

TEST_F(ModernTest, ALegacySessionAndModernRequestsInterleave) {
  // One Session, as on one stdio connection: a 2025 handshake, modern requests between legacy
  // ones, and neither era's answer changes the other's.
  ASSERT_TRUE(Send(Request(0, "initialize", InitParams("2025-06-18"))));
  EXPECT_EQ(Send(Notification("notifications/initialized")), std::nullopt);
  EXPECT_EQ(Result("tools/list")["resultType"], "complete");
  std::optional<Json> legacy = Send(Request(1, "tools/list"));
  ASSERT_TRUE(legacy && legacy->contains("result"));
  EXPECT_FALSE((*legacy)["result"].contains("resultType"));
  EXPECT_FALSE((*legacy)["result"].contains("_meta"));
  EXPECT_EQ(session_.protocol_version, "2025-06-18");
  // logging/setLevel of the session does not make modern calls log.
  Send(Request(2, "logging/setLevel", {{"level", "debug"}}));
  Result("tools/call", {{"name", "log"}});
  EXPECT_TRUE(notes_.empty());
  Send(Request(3, "tools/call", {{"name", "log"}}));
  EXPECT_EQ(notes_.size(), 4u);  // the legacy call logs at all four levels
}

TEST_F(ModernTest, CancellationReachesAModernCallByItsId) {
  std::optional<Json> reply;
  std::thread call([&] {
    reply = server_.Handle(Request("c1", "tools/call", Modern({{"name", "slow"}})), session_, nullptr);
  });
  ASSERT_TRUE(testing_tools::WaitForSlowStart());
  Send(Notification("notifications/cancelled", Modern({{"requestId", "c1"}})));
  call.join();
  EXPECT_EQ(reply, std::nullopt);
}

// A modern result is decorated (resultType, serverInfo) after the tool answers, so a tool's
// serialized bytes are not written for it: HandleSerialized writes the decorated result.
TEST(ServerSerializedTest, AModernResultIsDecoratedEvenWhenTheToolSerializedIt) {
  ServerOptions options = testing_tools::Options();
  ToolResult reused;
  reused.content.push_back({{"type", "text"}, {"text", "one answer"}});
  reused.structured = Json{{"n", 1}};
  reused.serialized = std::make_shared<const std::string>(SerializeToolResult(reused));
  options.tools.push_back({"reused", "", "An answer serialized once.", Json::object(), nullptr,
                           nullptr, [reused](const Json&, ToolContext&) { return reused; }});
  Server server(options);
  Session a;
  Session b;
  const Message call = Request(1, "tools/call", Modern({{"name", "reused"}}));
  std::optional<Json> reply = server.Handle(call, a, nullptr);
  ASSERT_TRUE(reply && reply->contains("result"));
  EXPECT_EQ((*reply)["result"]["resultType"], "complete");
  EXPECT_EQ(server.HandleSerialized(call, b, nullptr), Serialize(*reply));
}

// A tool may share an answer it gives to many calls (ToolResult::shared) instead of copying it
// into each result: both eras, Handle and HandleSerialized, answer it byte for byte as they
// answer the same result held, errors too, and the shared answer is left as it was.
TEST(ServerSerializedTest, ASharedAnswerIsAnsweredAsTheSameAnswerHeld) {
  ServerOptions options = testing_tools::Options();
  auto answer = std::make_shared<ToolResult>();
  answer->content.push_back({{"type", "text"}, {"text", "one answer\n{\"n\":1}"}});
  answer->structured = Json{{"n", 1}};
  answer->serialized = std::make_shared<const std::string>(SerializeToolResult(*answer));
  auto error = std::make_shared<ToolResult>();
  error->is_error = true;
  error->content.push_back({{"type", "text"}, {"text", "NO EVIDENCE (unavailable): not kept"}});
  // A copy of each binding: clang 14 refuses a lambda that captures a structured binding.
  for (const auto& [name, binding] : {std::pair("answer", answer), std::pair("error", error)}) {
    std::shared_ptr<ToolResult> kept = binding;
    options.tools.push_back({std::string("held_") + name, "", "A copy.", Json::object(), nullptr,
                             nullptr, [kept](const Json&, ToolContext&) { return *kept; }});
    options.tools.push_back({std::string("shared_") + name, "", "Shared.", Json::object(), nullptr,
                             nullptr, [kept = std::shared_ptr<const ToolResult>(kept)](
                                          const Json&, ToolContext&) { return SharedResult(kept); }});
  }
  Server server(options);
  Session legacy;
  ASSERT_TRUE(server.Handle(Request(0, "initialize", InitParams("2025-11-25")), legacy, nullptr));
  server.Handle(Notification("notifications/initialized"), legacy, nullptr);
  Session modern;
  for (const char* name : {"answer", "error"}) {
    const Json held = {{"name", std::string("held_") + name}};
    const Json shared = {{"name", std::string("shared_") + name}};
    for (int round = 0; round < 2; ++round) {
      EXPECT_EQ(server.HandleSerialized(Request(1, "tools/call", shared), legacy, nullptr),
                server.HandleSerialized(Request(1, "tools/call", held), legacy, nullptr))
          << name;
      EXPECT_EQ(server.Handle(Request(2, "tools/call", shared), legacy, nullptr),
                server.Handle(Request(2, "tools/call", held), legacy, nullptr))
          << name;
      const std::optional<std::string> modern_line =
          server.HandleSerialized(Request(3, "tools/call", Modern(shared)), modern, nullptr);
      ASSERT_TRUE(modern_line) << name;
      EXPECT_NE(modern_line->find(R"("resultType":"complete")"), std::string::npos) << name;
      EXPECT_EQ(modern_line,
                server.HandleSerialized(Request(3, "tools/call", Modern(held)), modern, nullptr))
          << name;
    }
  }
  EXPECT_EQ(*server.HandleSerialized(Request(4, "tools/call", {{"name", "shared_answer"}}),
                                     legacy, nullptr),
            R"({"id":4,"jsonrpc":"2.0","result":)" + *answer->serialized + "}")
      << "the legacy line splices the shared bytes";
  EXPECT_EQ(SerializeToolResult(*answer), *answer->serialized) << "the shared answer is intact";
  EXPECT_EQ(error->content.size(), 1u);
}

}  // namespace
}  // namespace slurm_rca::mcp

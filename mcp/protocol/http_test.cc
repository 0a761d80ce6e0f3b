// Tests of the Streamable HTTP transport against a server with fake tools, on an ephemeral
// loopback port, driven with httplib::Client (and once with the project's MCP client).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mcp/protocol/client.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {

using base::Result;

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr const char* kBoth = "application/json, text/event-stream";

std::vector<Tool> FakeTools() {
  Tool echo;
  echo.name = "echo";
  echo.description = "Returns its text.";
  echo.input_schema = {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}};
  echo.run = [](const Json& args, ToolContext&) {
    ToolResult r;
    const std::string text = args.value("text", "");
    r.content = Json::array({{{"type", "text"}, {"text", text}}});
    r.structured = Json{{"text", text}};
    return r;
  };

  // Reports progress once per step and sleeps `ms` per step; stops early when cancelled.
  Tool slow;
  slow.name = "slow";
  slow.description = "Sleeps in steps, reporting progress.";
  slow.input_schema = {{"type", "object"}};
  slow.run = [](const Json& args, ToolContext& context) {
    const int steps = args.value("steps", 3);
    const int ms = args.value("ms", 100);
    int done = 0;
    for (; done < steps && !context.Cancelled(); ++done) {
      context.Progress(done + 1, steps, "step " + std::to_string(done + 1));
      std::this_thread::sleep_for(milliseconds(ms));
    }
    ToolResult r;
    r.content = Json::array({{{"type", "text"}, {"text", "done " + std::to_string(done)}}});
    return r;
  };

  Tool logger;
  logger.name = "logger";
  logger.description = "Logs twice, then answers.";
  logger.input_schema = {{"type", "object"}};
  logger.run = [](const Json&, ToolContext& context) {
    context.Log("info", "first");
    context.Log("info", "second");
    ToolResult r;
    r.content = Json::array({{{"type", "text"}, {"text", "logged"}}});
    return r;
  };
  return {echo, slow, logger};
}

Json Request(int id, const std::string& method, Json params = Json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

Json InitializeRequest(const std::string& version = "2025-11-25") {
  return Request(0, "initialize",
                 {{"protocolVersion", version},
                  {"capabilities", Json::object()},
                  {"clientInfo", {{"name", "http_test"}, {"version", "0"}}}});
}

struct SseEvent {
  Json data;
  Clock::time_point at;  // when the chunk holding its end arrived
};

// Splits an SSE body into the JSON of its "data:" lines, one per event.
std::vector<Json> ParseSse(const std::string& body) {
  std::vector<Json> out;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find("\n\n", start);
    if (end == std::string::npos) end = body.size();
    const std::string event = body.substr(start, end - start);
    std::size_t data = event.find("data: ");
    if (data != std::string::npos) {
      out.push_back(Json::parse(event.substr(data + 6, event.find('\n', data) - data - 6)));
    }
    start = end + 2;
  }
  return out;
}

class HttpTest : public ::testing::Test {
 protected:
  void TearDown() override {
    client_.reset();  // an idle keep-alive connection would hold Stop() for its timeout
    if (transport_) transport_->Stop();
  }

  void StartServer(HttpOptions options = {}) {
    // Two event threads, as slurm-mcp runs on a multi-core machine: connections are served at
    // once (and ThreadSanitizer sees it); http_limits_test runs the one-thread loop.
    options.event_threads = 2;
    server_ = std::make_unique<Server>(ServerOptions{.tools = FakeTools(), .resources = resources_});
    transport_ = std::make_unique<HttpTransport>(*server_, options);
    base::Result<int> started = transport_->Start();
    ASSERT_TRUE(started.ok()) << started.status().message();
    port_ = *started;
    ASSERT_GT(port_, 0);
  }

  std::unique_ptr<httplib::Client> NewClient() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // else Nagle and delayed ACKs cost 40 ms a request
    c->set_read_timeout(30, 0);
    return c;
  }

  httplib::Client& client() {
    if (!client_) client_ = NewClient();
    return *client_;
  }

  // Headers of a request in the current session.
  httplib::Headers Headers(httplib::Headers extra = {}, bool with_session = true) {
    httplib::Headers h = {{"Accept", kBoth}};
    if (with_session && !session_id_.empty()) h.emplace("Mcp-Session-Id", session_id_);
    if (token_) h.emplace("Authorization", "Bearer " + *token_);
    for (auto& [k, v] : extra) {
      h.erase(k);
      h.emplace(k, v);
    }
    return h;
  }

  httplib::Result PostJson(const Json& body, httplib::Headers extra = {},
                           bool with_session = true) {
    return client().Post(options_path_.c_str(), Headers(std::move(extra), with_session),
                         body.dump(), "application/json");
  }

  httplib::Result PostRaw(httplib::Client& c, const std::string& body,
                          httplib::Headers extra = {}) {
    return c.Post(options_path_.c_str(), Headers(std::move(extra)), body, "application/json");
  }

  // initialize + notifications/initialized; remembers the session id.
  void Handshake() {
    httplib::Result r = PostJson(InitializeRequest(), {}, false);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    session_id_ = r->get_header_value("Mcp-Session-Id");
    r = PostJson({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 202) << r->body;
  }

  // Body of a 200 JSON response.
  Json Call(const Json& request, httplib::Headers extra = {}) {
    httplib::Result r = PostJson(request, std::move(extra));
    EXPECT_TRUE(r);
    if (!r) return nullptr;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
    return Json::parse(r->body, nullptr, false);
  }

  bool Pings(httplib::Client& c) {
    httplib::Result r = PostRaw(c, Request(99, "ping").dump());
    return r && r->status == 200 &&
           Json::parse(r->body, nullptr, false)["result"] == Json::object();
  }

  std::unique_ptr<Server> server_;
  std::vector<Resource> resources_;  // served by the next StartServer()
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
  std::string session_id_;
  std::optional<std::string> token_;
  std::string options_path_ = "/mcp";
};

void ExpectIdLessError(const httplib::Result& r, int status) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  const Json body = Json::parse(r->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << r->body;
  EXPECT_EQ(body["jsonrpc"], "2.0");
  EXPECT_FALSE(body.contains("id")) << r->body;
  EXPECT_TRUE(body["error"]["code"].is_number_integer()) << r->body;
  EXPECT_TRUE(body["error"]["message"].is_string()) << r->body;
}

TEST_F(HttpTest, HandshakeIssuesSessionAndNegotiatesVersion) {
  StartServer();
  httplib::Result r = PostJson(InitializeRequest(), {}, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  const std::string id = r->get_header_value("Mcp-Session-Id");
  EXPECT_GE(id.size(), 32u);  // 128 bits or more, hex
  for (char c : id) EXPECT_TRUE(c >= 0x21 && c <= 0x7e) << id;
  const Json body = Json::parse(r->body);
  EXPECT_EQ(body["id"], 0);
  EXPECT_EQ(body["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(transport_->session_count(), 1u);

  session_id_ = id;
  r = PostJson({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_TRUE(r->body.empty());

  // A second initialize opens a second, different session.
  r = PostJson(InitializeRequest("2025-06-18"), {}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(Json::parse(r->body)["result"]["protocolVersion"], "2025-06-18");
  EXPECT_NE(r->get_header_value("Mcp-Session-Id"), id);
  EXPECT_EQ(transport_->session_count(), 2u);
}

TEST_F(HttpTest, FailedInitializeOpensNoSession) {
  StartServer();
  httplib::Result r = PostJson(Request(0, "initialize", {{"capabilities", 1}}), {}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(Json::parse(r->body).contains("error"));
  EXPECT_FALSE(r->has_header("Mcp-Session-Id"));
  EXPECT_EQ(transport_->session_count(), 0u);
}

TEST_F(HttpTest, Ping) {
  StartServer();
  Handshake();
  const Json body = Call(Request(1, "ping"));
  EXPECT_EQ(body["id"], 1);
  EXPECT_EQ(body["result"], Json::object());
}

TEST_F(HttpTest, ToolsList) {
  StartServer();
  Handshake();
  const Json body = Call(Request(2, "tools/list"));
  ASSERT_TRUE(body["result"]["tools"].is_array()) << body;
  std::vector<std::string> names;
  for (const Json& t : body["result"]["tools"]) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "slow", "logger"}));
}

TEST_F(HttpTest, ToolsCallAnswersJson) {
  StartServer();
  Handshake();
  const Json body =
      Call(Request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}}));
  EXPECT_EQ(body["id"], 3);
  EXPECT_EQ(body["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(body["result"]["structuredContent"]["text"], "hi");
}

TEST_F(HttpTest, ToolsCallWithProgressTokenStreamsSse) {
  StartServer();
  Handshake();
  httplib::Request req;
  req.method = "POST";
  req.path = "/mcp";
  // Clients such as the TypeScript SDK ask for compression; a compressed stream would be
  // buffered by the compressor and arrive all at the end.
  req.headers = Headers({{"Content-Type", "application/json"}, {"Accept-Encoding", "gzip, br"}});
  req.body = Request(4, "tools/call",
                     {{"name", "slow"},
                      {"arguments", {{"steps", 4}, {"ms", 100}}},
                      {"_meta", {{"progressToken", "tok"}}}})
                 .dump();
  std::string body;
  std::vector<std::pair<std::size_t, Clock::time_point>> arrivals;  // body size after each chunk
  req.content_receiver = [&](const char* data, std::size_t n, uint64_t, uint64_t) {
    body.append(data, n);
    arrivals.emplace_back(body.size(), Clock::now());
    return true;
  };
  httplib::Result r = client().send(req);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_FALSE(r->has_header("Content-Encoding"));

  const std::vector<Json> events = ParseSse(body);
  ASSERT_EQ(events.size(), 5u) << body;  // four progress notifications, then the response
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(events[i]["method"], "notifications/progress") << events[i];
    EXPECT_EQ(events[i]["params"]["progressToken"], "tok");
    EXPECT_EQ(events[i]["params"]["progress"], i + 1);
    EXPECT_EQ(events[i]["params"]["total"], 4);
  }
  EXPECT_EQ(events[4]["id"], 4);
  EXPECT_EQ(events[4]["result"]["content"][0]["text"], "done 4");
  EXPECT_TRUE(body.size() >= 2 && body.substr(body.size() - 2) == "\n\n");

  // Streamed live: the first progress event arrived well before the response.
  ASSERT_GE(arrivals.size(), 2u);
  const std::size_t first_event_end = body.find("\n\n") + 2;
  Clock::time_point first_at = arrivals.back().second;
  for (auto& [size, at] : arrivals) {
    if (size >= first_event_end) {
      first_at = at;
      break;
    }
  }
  EXPECT_GE(arrivals.back().second - first_at, milliseconds(200));
}

TEST_F(HttpTest, ProgressTokenWithoutSseAcceptGetsJson) {
  StartServer();
  Handshake();
  const Json body = Call(Request(5, "tools/call",
                                 {{"name", "slow"},
                                  {"arguments", {{"steps", 2}, {"ms", 1}}},
                                  {"_meta", {{"progressToken", 7}}}}),
                         {{"Accept", "application/json"}});
  EXPECT_EQ(body["result"]["content"][0]["text"], "done 2");
}

TEST_F(HttpTest, LoggingCallAnswersBufferedSseOnlyWhenAccepted) {
  StartServer();
  Handshake();
  const Json call = Request(6, "tools/call", {{"name", "logger"}});
  httplib::Result r = PostJson(call);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<Json> events = ParseSse(r->body);
  ASSERT_EQ(events.size(), 3u) << r->body;
  EXPECT_EQ(events[0]["method"], "notifications/message");
  EXPECT_EQ(events[0]["params"]["data"], "first");
  EXPECT_EQ(events[1]["params"]["data"], "second");
  EXPECT_EQ(events[2]["result"]["content"][0]["text"], "logged");

  const Json body = Call(call, {{"Accept", "application/json"}});
  EXPECT_EQ(body["result"]["content"][0]["text"], "logged");
}

TEST_F(HttpTest, NotificationAndClientResponseGet202) {
  StartServer();
  Handshake();
  httplib::Result r =
      PostJson({{"jsonrpc", "2.0"}, {"method", "notifications/roots/list_changed"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_TRUE(r->body.empty());
  r = PostJson({{"jsonrpc", "2.0"}, {"id", "s1"}, {"result", Json::object()}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  EXPECT_TRUE(r->body.empty());
}

TEST_F(HttpTest, GetIs405WithAllow) {
  StartServer();
  Handshake();
  httplib::Result r = client().Get("/mcp", Headers({{"Accept", "text/event-stream"}}));
  ExpectIdLessError(r, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST, DELETE");
  // Still usable afterwards.
  EXPECT_TRUE(Pings(client()));
}

TEST_F(HttpTest, ReadinessIsAGetOutsideMcpBehindTheSameChecks) {
  std::atomic<int> asked{0};  // written on a server thread
  StartServer({.token = "s3cret-token", .ready = [&asked] {
                 ++asked;
                 return std::string(R"({"ready":true,"slurm":"unknown"})");
               }});
  // The token, as for the endpoint; nothing is computed for a refused probe.
  ExpectIdLessError(client().Get("/ready"), 401);
  ExpectIdLessError(client().Get("/ready", {{"Host", "evil.example.com"}}), 403);
  EXPECT_EQ(asked, 0);
  token_ = "s3cret-token";
  httplib::Result r = client().Get("/ready", Headers());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(r->body, R"({"ready":true,"slurm":"unknown"})");
  EXPECT_EQ(asked, 1);
  r = client().Post("/ready", Headers(), "{}", "application/json");
  ExpectIdLessError(r, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET");
  // The MCP endpoint is unchanged beside it.
  Handshake();
  EXPECT_TRUE(Pings(client()));
}

TEST_F(HttpTest, NoReadinessRouteUnlessAsked) {
  StartServer();
  ExpectIdLessError(client().Get("/ready", Headers()), 404);
}

TEST(HttpStartTest, ReadinessPathMustDifferFromTheEndpoint) {
  Server server(ServerOptions{});
  HttpTransport t(server, {.ready = [] { return std::string("{}"); }, .ready_path = "/mcp"});
  base::Result<int> r = t.Start();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("readiness path"), std::string::npos)
      << r.status().message();
}

TEST_F(HttpTest, OtherPathIs404) {
  StartServer();
  httplib::Result r = client().Post("/other", Headers(), "{}", "application/json");
  ExpectIdLessError(r, 404);
}

TEST_F(HttpTest, EvilHostIs403) {
  StartServer();
  Handshake();
  for (const char* host : {"evil.example.com", "evil.example.com:80", "localhost.evil.com",
                           "127.0.0.1.evil.com", "user@127.0.0.1", "[::2]:80", "127.0.0.1:80x"}) {
    httplib::Result r = PostJson(Request(1, "ping"), {{"Host", host}});
    ExpectIdLessError(r, 403);
  }
  // Every method is screened, not only POST.
  ExpectIdLessError(client().Get("/mcp", Headers({{"Host", "evil.example.com"}})), 403);
  ExpectIdLessError(client().Delete("/mcp", Headers({{"Host", "evil.example.com"}})), 403);
  EXPECT_EQ(transport_->session_count(), 1u);
}

TEST_F(HttpTest, LoopbackHostsWithAnyPortAccepted) {
  StartServer();
  Handshake();
  for (const std::string& host :
       std::vector<std::string>{"localhost", "LOCALHOST:1", "127.0.0.1:" + std::to_string(port_),
                                "[::1]", "[::1]:8080"}) {
    httplib::Result r = PostJson(Request(1, "ping"), {{"Host", host}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << host;
  }
}

TEST_F(HttpTest, EvilOriginIs403) {
  StartServer();
  Handshake();
  for (const char* origin :
       {"http://evil.example.com", "https://evil.example.com:443", "null",
        "http://localhost.evil.com", "http://127.0.0.1@evil.com", "file://", "127.0.0.1"}) {
    // The conformance check sends an evil Origin with a good Host.
    httplib::Result r = PostJson(Request(1, "ping"), {{"Origin", origin}});
    ExpectIdLessError(r, 403);
  }
}

TEST_F(HttpTest, LoopbackOriginAccepted) {
  StartServer();
  Handshake();
  const std::string port = std::to_string(port_);
  for (const std::string& origin :
       std::vector<std::string>{"http://127.0.0.1:" + port, "http://localhost:" + port,
                                "https://localhost", "http://[::1]:" + port}) {
    httplib::Result r = PostJson(Request(1, "ping"), {{"Origin", origin}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << origin << " " << r->body;
  }
}

TEST_F(HttpTest, BearerToken) {
  StartServer({.token = "s3cret-token"});
  // Missing.
  httplib::Result r = PostJson(InitializeRequest(), {}, false);
  ExpectIdLessError(r, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer realm=\"slurm-mcp\"");
  EXPECT_EQ(r->body.find("s3cret"), std::string::npos);
  // Wrong, same length; wrong, other lengths; wrong scheme.
  for (const char* auth : {"Bearer s3cret-tokeN", "Bearer s3cret", "Bearer s3cret-token-and-more",
                           "Bearer ", "Basic s3cret-token", "s3cret-token"}) {
    r = PostJson(InitializeRequest(), {{"Authorization", auth}}, false);
    ExpectIdLessError(r, 401);
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer realm=\"slurm-mcp\"") << auth;
  }
  // GET and DELETE are authenticated too.
  ExpectIdLessError(client().Get("/mcp"), 401);
  // Right.
  token_ = "s3cret-token";
  Handshake();
  EXPECT_TRUE(Pings(client()));
  r = PostJson(Request(1, "ping"), {{"Authorization", "bearer s3cret-token"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);  // the scheme is case-insensitive
}

// OAuth's hook (slurm-mcp wires mcp/auth into it): what it refuses is refused with its status and
// challenge before the body is read; the metadata and readiness routes need no token; a session
// belongs to the principal that opened it. Here the "tokens" are names the fake authorizer knows.
TEST_F(HttpTest, AuthorizeHookDecidesAndASessionIsItsPrincipals) {
  std::atomic<int> asked{0};
  HttpOptions options;
  options.authorize = [&asked](std::optional<std::string_view> header, const Message*) {
    ++asked;
    AuthOutcome o;
    if (!header) {
      o.status = 401;
      o.www_authenticate = "Bearer resource_metadata=\"http://h/.well-known/oauth-protected-resource/mcp\"";
      o.message = "a token is required";
    } else if (*header == "Bearer alice" || *header == "Bearer bob") {
      o.principal = std::string(header->substr(7));
      o.scopes = {"slurm:read"};
    } else if (*header == "Bearer down") {
      o.status = 503;
      o.message = "the issuer's keys are not available";
    } else {
      o.status = 401;
      o.www_authenticate = "Bearer error=\"invalid_token\"";
      o.message = "invalid token";
    }
    return o;
  };
  options.resource_metadata = R"({"resource":"http://h/mcp"})";
  options.ready = [] { return std::string(R"({"ready":true})"); };
  StartServer(options);
  httplib::Result r = PostJson(InitializeRequest(), {}, false);
  ExpectIdLessError(r, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"),
            "Bearer resource_metadata=\"http://h/.well-known/oauth-protected-resource/mcp\"");
  r = PostJson(InitializeRequest(), {{"Authorization", "Bearer mallory"}}, false);
  ExpectIdLessError(r, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer error=\"invalid_token\"");
  ExpectIdLessError(PostJson(InitializeRequest(), {{"Authorization", "Bearer down"}}, false), 503);
  // Public routes: asked nothing of the authorizer.
  const int before = asked;
  for (const char* path : {"/.well-known/oauth-protected-resource",
                           "/.well-known/oauth-protected-resource/mcp"}) {
    r = client().Get(path);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->body, R"({"resource":"http://h/mcp"})");
  }
  r = client().Post("/.well-known/oauth-protected-resource", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  r = client().Get("/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(asked, before);
  // alice opens a session; bob's token cannot use it; alice's can.
  token_ = "alice";
  Handshake();
  EXPECT_TRUE(Pings(client()));
  token_ = "bob";
  ExpectIdLessError(PostJson(Request(2, "ping")), 404);
  token_ = "alice";
  EXPECT_TRUE(Pings(client()));
}

// The client's token source (an OAuth client's expiring tokens): a request refused with 401 is
// sent once more with a fresh token, in the same session; a source that fails is the error.
TEST_F(HttpTest, AClientTokenSourceIsAskedForAFreshTokenAfterA401) {
  std::atomic<bool> expired{false};
  HttpOptions options;
  options.authorize = [&expired](std::optional<std::string_view> header, const Message*) {
    AuthOutcome o;
    const bool fresh = header && *header == "Bearer fresh";
    const bool stale_ok = header && *header == "Bearer first" && !expired;
    if (fresh || stale_ok) {
      o.principal = "alice";
      return o;
    }
    o.status = 401;
    o.www_authenticate = "Bearer error=\"invalid_token\"";
    o.message = "expired";
    return o;
  };
  StartServer(options);
  std::vector<bool> asked;
  std::string current = "first";  // what an OAuth client keeps until it is refused
  auto source = [&asked, &current](bool refresh) -> base::Result<std::string> {
    asked.push_back(refresh);
    if (refresh) current = "fresh";
    return current;
  };
  Client c(std::make_unique<HttpClientTransport>("127.0.0.1", port_, "/mcp", source));
  ASSERT_TRUE(c.Initialize("http_test", "0").ok());
  ASSERT_TRUE(c.Ping().ok());
  const std::size_t before = asked.size();
  EXPECT_EQ(std::count(asked.begin(), asked.end(), true), 0) << "no refresh while the token holds";
  expired = true;  // the first token expires: the next request is refused once, then retried
  Result<ToolCallResult> echo = c.CallTool("echo", {{"text", "after refresh"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->Text(), "after refresh");
  EXPECT_EQ(std::count(asked.begin() + static_cast<long>(before), asked.end(), true), 1);

  // A source that cannot give a token: the request fails with its reason, nothing is sent.
  Client broken(std::make_unique<HttpClientTransport>(
      "127.0.0.1", port_, "/mcp",
      [](bool) -> base::Result<std::string> { return base::Status::Unavailable("issuer down"); }));
  Result<InitializeResult> init = broken.Initialize("http_test", "0");
  ASSERT_FALSE(init.ok());
  EXPECT_NE(init.status().message().find("no access token: issuer down"), std::string::npos)
      << init.status().ToString();
}

TEST(HttpStartTest, OAuthAllowsAnotherAddressAndExcludesTheSharedToken) {
  Server server(ServerOptions{.tools = FakeTools()});
  auto allow = [](std::optional<std::string_view>, const Message*) { return AuthOutcome{}; };
  {
    HttpTransport t(server, HttpOptions{.token = "s3cret-token", .authorize = allow});
    base::Result<int> r = t.Start();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "a shared bearer token and OAuth are exclusive");
  }
  {
    // Tokens off loopback over plain HTTP: refused, whichever kind.
    HttpTransport t(server, HttpOptions{.host = "198.18.0.1", .authorize = allow});
    base::Result<int> r = t.Start();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "refusing to take bearer tokens on 198.18.0.1 over plain HTTP: give a TLS "
              "certificate and key, or say that a reverse proxy in front terminates TLS");
    HttpTransport shared(server, HttpOptions{.host = "198.18.0.1", .token = "s3cret-token-16by"});
    r = shared.Start();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("over plain HTTP"), std::string::npos);
  }
  {
    // A proxy terminates TLS: past the check, to the bind (198.18.0.1 is on no interface here:
    // nothing listens).
    HttpTransport t(server, HttpOptions{.host = "198.18.0.1",
                                        .authorize = allow,
                                        .tls_terminated_by_proxy = true});
    base::Result<int> r = t.Start();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "cannot bind 198.18.0.1:0");
  }
  {
    HttpTransport t(server, HttpOptions{.host = "198.18.0.1"});
    base::Result<int> r = t.Start();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("refusing to serve"), std::string::npos);
  }
}

TEST_F(HttpTest, HostIsCheckedBeforeToken) {
  StartServer({.token = "t"});
  ExpectIdLessError(PostJson(Request(1, "ping"), {{"Host", "evil.example.com"}}), 403);
}

TEST(ConstantTimeEqualsTest, ComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcabc", "abc"));  // a repeat of the secret is no match
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST_F(HttpTest, OversizeBodyIs413) {
  StartServer({.max_body_bytes = 1024});
  Handshake();
  const std::string big =
      Request(1, "tools/call",
              {{"name", "echo"}, {"arguments", {{"text", std::string(2000, 'x')}}}})
          .dump();
  ExpectIdLessError(PostRaw(client(), big), 413);
  // Chunked, with no Content-Length to refuse up front.
  httplib::Result r = client().Post(
      "/mcp", Headers(),
      [&](std::size_t offset, httplib::DataSink& sink) {
        sink.write(big.data() + offset, std::min<std::size_t>(100, big.size() - offset));
        if (offset + 100 >= big.size()) sink.done();
        return true;
      },
      "application/json");
  ExpectIdLessError(r, 413);
  // At the limit is fine; and the server still answers.
  Json fits = Request(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", ""}}}});
  std::string text(1024 - fits.dump().size(), 'y');
  fits["params"]["arguments"]["text"] = text;
  ASSERT_EQ(fits.dump().size(), 1024u);
  EXPECT_EQ(Call(fits)["result"]["content"][0]["text"], text);
  EXPECT_TRUE(Pings(client()));
}

TEST_F(HttpTest, ProtocolVersionHeader) {
  StartServer();
  Handshake();
  httplib::Result r = PostJson(Request(1, "ping"), {{"MCP-Protocol-Version", "1999-01-01"}});
  ExpectIdLessError(r, 400);
  EXPECT_NE(r->body.find("2025-11-25"), std::string::npos);  // lists what is supported
  for (const char* v : kProtocolVersions) {
    EXPECT_EQ(Call(Request(1, "ping"), {{"MCP-Protocol-Version", v}})["result"], Json::object());
  }
  // On initialize the header is not checked: the body negotiates.
  r = PostJson(InitializeRequest(), {{"MCP-Protocol-Version", "1999-01-01"}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpTest, MissingSessionIs400UnknownIs404) {
  StartServer();
  Handshake();
  ExpectIdLessError(PostJson(Request(1, "ping"), {}, false), 400);
  httplib::Result r = PostJson(Request(1, "ping"), {{"Mcp-Session-Id", "no-such-session"}});
  ExpectIdLessError(r, 404);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], -32001);
}

TEST_F(HttpTest, DeleteEndsSession) {
  StartServer();
  Handshake();
  httplib::Result r = client().Delete("/mcp", Headers());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(transport_->session_count(), 0u);
  ExpectIdLessError(PostJson(Request(1, "ping")), 404);
  ExpectIdLessError(client().Delete("/mcp", Headers()), 404);
  ExpectIdLessError(client().Delete("/mcp", Headers({}, false)), 400);
}

TEST_F(HttpTest, AcceptAndContentType) {
  StartServer();
  Handshake();
  for (const char* accept : {"text/event-stream", "text/html", "application/json;q=0", ""}) {
    ExpectIdLessError(PostJson(Request(1, "ping"), {{"Accept", accept}}), 406);
  }
  for (const char* accept : {"application/json", "*/*", "application/*",
                             "text/event-stream;q=0.9, Application/JSON; charset=utf-8"}) {
    EXPECT_EQ(Call(Request(1, "ping"), {{"Accept", accept}})["result"], Json::object()) << accept;
  }
  httplib::Result r = client().Post("/mcp", Headers(), Request(1, "ping").dump(), "text/plain");
  ExpectIdLessError(r, 415);
}

TEST_F(HttpTest, ParseErrorAndBatchAre400) {
  StartServer();
  Handshake();
  httplib::Result r = PostRaw(client(), "{not json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], -32700);
  r = PostRaw(client(), "[" + Request(1, "ping").dump() + "]");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], -32600);
}

TEST_F(HttpTest, StatelessModeNeedsNoSession) {
  StartServer({.sessions = false});
  httplib::Result r = PostJson(InitializeRequest(), {}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->has_header("Mcp-Session-Id"));
  EXPECT_EQ(transport_->session_count(), 0u);
  // Without initialize on this "connection": each request counts as initialized.
  const Json body =
      Call(Request(3, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "x"}}}}),
           {{"MCP-Protocol-Version", "2025-06-18"}});
  EXPECT_EQ(body["result"]["content"][0]["text"], "x");
  EXPECT_EQ(Call(Request(1, "ping"))["result"], Json::object());
  r = client().Delete("/mcp", Headers());
  ExpectIdLessError(r, 405);
  r = client().Get("/mcp", Headers());
  ExpectIdLessError(r, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
}

TEST_F(HttpTest, SessionCapEvictsLeastRecentlyUsed) {
  StartServer({.max_sessions = 3});
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    session_id_.clear();
    Handshake();
    ids.push_back(session_id_);
    if (i == 2) {
      // Touch the first so that the second is the least recently used.
      session_id_ = ids[0];
      EXPECT_TRUE(Pings(client()));
    }
  }
  EXPECT_EQ(transport_->session_count(), 3u);
  for (int i = 0; i < 4; ++i) {
    session_id_ = ids[i];
    httplib::Result r = PostJson(Request(1, "ping"));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, i == 1 ? 404 : 200) << i;
  }
}

TEST_F(HttpTest, SurvivesTenThousandMalformedBodies) {
  StartServer({.max_body_bytes = 4096});
  Handshake();
  std::mt19937 rng(20250611);
  const std::vector<std::string> seeds = {
      Request(1, "ping").dump(),
      Request(2, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hé"}}}}).dump(),
      Request(3, "tools/list").dump(),
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})",
      R"({"jsonrpc":"2.0","id":"x","result":{}})",
      InitializeRequest().dump(),
  };
  auto random_bytes = [&](std::size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xff);
    return s;
  };
  std::map<int, int> statuses;
  for (int i = 0; i < 10000; ++i) {
    std::string body;
    switch (i % 5) {
      case 0:
        body = random_bytes(rng() % 300);
        break;
      case 1: {  // a valid message with bytes flipped, inserted or removed
        body = seeds[rng() % seeds.size()];
        for (int k = 0, n = 1 + rng() % 4; k < n && !body.empty(); ++k) {
          const std::size_t at = rng() % body.size();
          switch (rng() % 3) {
            case 0:
              body[at] = static_cast<char>(rng() & 0xff);
              break;
            case 1:
              body.insert(at, 1, "{}[]\",:\\0"[rng() % 9]);
              break;
            default:
              body.erase(at, 1);
          }
        }
        break;
      }
      case 2:  // truncated
        body = seeds[rng() % seeds.size()];
        body.resize(rng() % body.size());
        break;
      case 3:  // deep or long
        body = rng() % 2 ? std::string(rng() % 5000, '[') : "\"" + std::string(rng() % 5000, 'a');
        break;
      default:  // well-formed JSON of the wrong shape
        body = Json{{"jsonrpc", rng() % 2 ? "2.0" : "1.0"},
                    {"id", rng() % 2 ? Json(nullptr) : Json(1.5)},
                    {"method", rng() % 2 ? Json(42) : Json("tools/call")},
                    {"params", rng() % 2 ? Json("str") : Json::array({1})}}
                   .dump();
    }
    httplib::Result r = PostRaw(client(), body);
    ASSERT_TRUE(r) << "request " << i << " failed: " << httplib::to_string(r.error());
    ++statuses[r->status];
    ASSERT_TRUE(r->status == 200 || r->status == 202 || r->status == 400 || r->status == 413)
        << i << ": " << r->status;
  }
  EXPECT_GT(statuses[400], 5000);
  EXPECT_TRUE(Pings(client()));
  auto fresh = NewClient();
  EXPECT_TRUE(Pings(*fresh));
}

TEST_F(HttpTest, SecondConnectionAnsweredWhileSlowToolRuns) {
  StartServer();
  Handshake();
  auto slow_client = NewClient();
  const Json call =
      Request(8, "tools/call", {{"name", "slow"}, {"arguments", {{"steps", 20}, {"ms", 100}}}});
  const Clock::time_point start = Clock::now();
  std::future<httplib::Result> slow =
      std::async(std::launch::async, [&] { return PostRaw(*slow_client, call.dump()); });
  std::this_thread::sleep_for(milliseconds(200));
  auto other = NewClient();
  const Clock::time_point ping_start = Clock::now();
  EXPECT_TRUE(Pings(*other));
  EXPECT_LT(Clock::now() - ping_start, milliseconds(1000));
  httplib::Result r = slow.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(Json::parse(r->body)["result"]["content"][0]["text"], "done 20");
  EXPECT_GE(Clock::now() - start, milliseconds(2000));
}

TEST_F(HttpTest, CancellationFromAnotherConnectionStopsTheCall) {
  StartServer();
  Handshake();
  auto slow_client = NewClient();
  const Json call =
      Request(9, "tools/call", {{"name", "slow"}, {"arguments", {{"steps", 100}, {"ms", 50}}}});
  const Clock::time_point start = Clock::now();
  std::future<httplib::Result> slow =
      std::async(std::launch::async, [&] { return PostRaw(*slow_client, call.dump()); });
  std::this_thread::sleep_for(milliseconds(200));
  httplib::Result c = PostJson(
      {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 9}}}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 202);
  httplib::Result r = slow.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);  // cancelled: no JSON-RPC response
  EXPECT_TRUE(r->body.empty());
  EXPECT_LT(Clock::now() - start, milliseconds(4000));
}

TEST_F(HttpTest, StartRefusesBadOptions) {
  Server server(ServerOptions{.tools = FakeTools()});
  {
    HttpTransport t(server, HttpOptions{.host = "0.0.0.0"});
    base::Result<int> r = t.Start();
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(),
              "refusing to serve 0.0.0.0 without a bearer token: only loopback addresses may run "
              "without one");
  }
  {
    HttpTransport t(server, HttpOptions{.token = ""});
    EXPECT_FALSE(t.Start().ok());
  }
  {
    HttpTransport t(server, HttpOptions{.path = "mcp"});
    EXPECT_FALSE(t.Start().ok());
  }
  {
    HttpTransport t(server, HttpOptions{});
    base::Result<int> r = t.Start();
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(t.Start().ok());  // once only
    HttpTransport clash(server, HttpOptions{.port = *r});
    base::Result<int> taken = clash.Start();
    EXPECT_FALSE(taken.ok());
    EXPECT_EQ(taken.status().message(), "cannot bind 127.0.0.1:" + std::to_string(*r));
    t.Stop();
    t.Stop();  // idempotent
  }
}

TEST_F(HttpTest, ServeBlocksUntilStop) {
  Server server(ServerOptions{.tools = FakeTools()});
  HttpTransport t(server, HttpOptions{.sessions = false});
  std::promise<int> bound;
  std::thread serving([&] {
    base::Result<int> r = t.Serve([&](int port) { bound.set_value(port); });
    EXPECT_TRUE(r.ok()) << r.status().message();
  });
  port_ = bound.get_future().get();
  {
    auto c = NewClient();
    EXPECT_TRUE(Pings(*c));
  }
  t.Stop();
  serving.join();
}

TEST_F(HttpTest, ProjectClientDrivesTransport) {
  StartServer();
  Client c(std::make_unique<HttpClientTransport>("127.0.0.1", port_));
  Result<InitializeResult> init = c.Initialize("http_test", "0");
  ASSERT_TRUE(init.ok()) << init.status().ToString();
  EXPECT_EQ(init->protocol_version, "2025-11-25");
  EXPECT_TRUE(c.Ping().ok());
  Result<std::vector<Json>> tools = c.ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  EXPECT_EQ(tools->size(), 3u);
  Result<ToolCallResult> echo = c.CallTool("echo", {{"text", "via client"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->Text(), "via client");
  std::vector<double> progress;
  Result<ToolCallResult> slow = c.CallTool(
      "slow", {{"steps", 3}, {"ms", 20}},
      [&](double p, std::optional<double>, const std::string&) { progress.push_back(p); });
  ASSERT_TRUE(slow.ok()) << slow.status().ToString();
  EXPECT_EQ(slow->Text(), "done 3");
  EXPECT_EQ(progress, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(transport_->session_count(), 1u);
  c.transport().Close();  // DELETE
  EXPECT_EQ(transport_->session_count(), 0u);
}


// ---- The 2026-07-28 era on HTTP: the detection ladder, headers, no sessions ----

Json ModernRequest(const Json& id, const std::string& method, Json params = Json::object(),
                   const std::string& version = "2026-07-28") {
  params["_meta"][kMetaProtocolVersion] = version;
  params["_meta"][kMetaClientCapabilities] = Json::object();
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// The headers a 2026-07-28 client sends with `request`.
httplib::Headers ModernHeaders(const Json& request) {
  httplib::Headers h = {{"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", request["method"].get<std::string>()}};
  const Json& params = request["params"];
  if (params.contains("name") && params["name"].is_string()) {
    h.emplace("Mcp-Name", params["name"].get<std::string>());
  }
  if (params.contains("uri")) h.emplace("Mcp-Name", params["uri"].get<std::string>());
  return h;
}

// The error of a modern refusal: the status, the code, and the request's id echoed.
void ExpectRpcError(const httplib::Result& r, int status, int code, const Json& id) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, status) << r->body;
  const Json body = Json::parse(r->body, nullptr, false);
  EXPECT_EQ(body["error"]["code"], code) << r->body;
  EXPECT_EQ(body["id"], id) << r->body;
  EXPECT_FALSE(r->has_header("Mcp-Session-Id"));
}

TEST_F(HttpTest, ModernRequestsNeedNoSessionAndGetNone) {
  StartServer();
  const Json discover = ModernRequest("d", "server/discover");
  httplib::Result r = PostJson(discover, ModernHeaders(discover), false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_FALSE(r->has_header("Mcp-Session-Id"));
  Json body = Json::parse(r->body);
  EXPECT_EQ(body["result"]["supportedVersions"], Json::array({"2026-07-28"}));
  EXPECT_EQ(body["result"]["resultType"], "complete");

  // A session id a modern request carries is ignored, not looked up (it names no session).
  const Json call = ModernRequest(1, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  httplib::Headers headers = ModernHeaders(call);
  headers.emplace("Mcp-Session-Id", "no-such-session");
  r = PostJson(call, headers, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  body = Json::parse(r->body);
  EXPECT_EQ(body["result"]["structuredContent"]["text"], "hi");
  EXPECT_EQ(body["result"]["resultType"], "complete");
  EXPECT_EQ(transport_->session_count(), 0u);

  // A modern notification is accepted like any other.
  Json cancelled = {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
                    {"params", {{"requestId", 1}}}};
  cancelled["params"]["_meta"] = ModernRequest(0, "x")["params"]["_meta"];
  r = PostJson(cancelled, {{"MCP-Protocol-Version", "2026-07-28"}}, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202) << r->body;
}

TEST_F(HttpTest, ModernLadderRungByRung) {
  StartServer();
  struct Case {
    const char* what;
    Json request;
    std::map<std::string, std::string> header_changes;  // "" removes the header
    int status;
    int code;
  };
  Json no_caps = ModernRequest(2, "tools/list");
  no_caps["params"]["_meta"].erase(kMetaClientCapabilities);
  const Json list = ModernRequest(3, "tools/list");
  const Json call = ModernRequest(4, "tools/call", {{"name", "echo"}});
  const std::vector<Case> cases = {
      {"envelope without clientCapabilities", no_caps, {}, 400, kInvalidParams},
      {"version header differs from the claim", list, {{"MCP-Protocol-Version", "2025-11-25"}}, 400,
       kHeaderMismatch},
      {"Mcp-Method differs from the method", list, {{"Mcp-Method", "tools/call"}}, 400,
       kHeaderMismatch},
      {"Mcp-Name differs from params.name", call, {{"Mcp-Name", "slow"}}, 400, kHeaderMismatch},
      {"a revision we do not serve", ModernRequest(5, "tools/list", {}, "v999.0.0"),
       {{"MCP-Protocol-Version", "v999.0.0"}}, 400, kUnsupportedProtocolVersion},
      {"no MCP-Protocol-Version", list, {{"MCP-Protocol-Version", ""}}, 400, kHeaderMismatch},
      {"no Mcp-Method", list, {{"Mcp-Method", ""}}, 400, kHeaderMismatch},
      {"no Mcp-Name on tools/call", call, {{"Mcp-Name", ""}}, 400, kHeaderMismatch},
      {"initialize with a modern envelope", ModernRequest(6, "initialize"), {}, 404,
       kMethodNotFound},
      {"ping, removed", ModernRequest(7, "ping"), {}, 404, kMethodNotFound},
      {"logging/setLevel, removed", ModernRequest(8, "logging/setLevel", {{"level", "debug"}}), {},
       404, kMethodNotFound},
      {"an unknown method", ModernRequest(9, "tools/frobnicate"), {}, 404, kMethodNotFound},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    httplib::Headers headers = ModernHeaders(c.request);
    for (const auto& [name, value] : c.header_changes) {
      headers.erase(name);
      if (!value.empty()) headers.emplace(name, value);
    }
    ExpectRpcError(PostJson(c.request, headers, false), c.status, c.code, c.request["id"]);
  }
  // -32022 says what is served and echoes what was asked.
  const Json v999 = ModernRequest(5, "tools/list", {}, "v999.0.0");
  httplib::Headers headers = ModernHeaders(v999);
  headers.erase("MCP-Protocol-Version");
  headers.emplace("MCP-Protocol-Version", "v999.0.0");
  httplib::Result r = PostJson(v999, headers, false);
  ASSERT_TRUE(r);
  const Json data = Json::parse(r->body)["error"]["data"];
  EXPECT_EQ(data["supported"], Json::array({"2026-07-28"}));
  EXPECT_EQ(data["requested"], "v999.0.0");

  // Without the claim in the body, a 2026-07-28 header is refused: -32602 for a request,
  // -32020 for initialize (whose claim-less form starts a 2025 session).
  ExpectRpcError(PostJson(Request(10, "tools/list"), {{"MCP-Protocol-Version", "2026-07-28"}}, false),
                 400, kInvalidParams, 10);
  ExpectRpcError(PostJson(InitializeRequest(), {{"MCP-Protocol-Version", "2026-07-28"}}, false), 400,
                 kHeaderMismatch, 0);
  EXPECT_EQ(transport_->session_count(), 0u);
}

TEST_F(HttpTest, ModernHeaderValuesMayBeBase64) {
  resources_.push_back(Resource{.uri = "skill://r\u00e9sum\u00e9/SKILL.md", .name = "resume",
                                .text = "# R\u00e9sum\u00e9\n"});
  StartServer();
  const Json read = ModernRequest(1, "resources/read", {{"uri", "skill://r\u00e9sum\u00e9/SKILL.md"}});
  httplib::Headers headers = ModernHeaders(read);
  headers.erase("Mcp-Name");
  // base64 of the UTF-8 bytes of skill://résumé/SKILL.md
  headers.emplace("Mcp-Name", "=?base64?c2tpbGw6Ly9yw6lzdW3DqS9TS0lMTC5tZA==?=");
  httplib::Result r = PostJson(read, headers, false);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Json::parse(r->body)["result"]["contents"][0]["text"], "# R\u00e9sum\u00e9\n");

  for (const char* bad : {"=?base64?c2tpbGw6Ly9y?=", "=?base64?!!!!?=", "=?base64?QQ=?="}) {
    SCOPED_TRACE(bad);
    headers.erase("Mcp-Name");
    headers.emplace("Mcp-Name", bad);
    ExpectRpcError(PostJson(read, headers, false), 400, kHeaderMismatch, 1);
  }
  // A plain value that is not encoded is compared as it is.
  const Json call = ModernRequest(2, "tools/call", {{"name", "echo"}});
  headers = ModernHeaders(call);
  headers.erase("Mcp-Name");
  headers.emplace("Mcp-Name", "=?base64?ZWNobw==?=");  // "echo"
  r = PostJson(call, headers, false);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(HttpTest, ALegacySessionAndModernRequestsShareOneServer) {
  StartServer();
  Handshake();
  const Json list = ModernRequest(1, "tools/list");
  for (int i = 0; i < 3; ++i) {
    // Modern requests on the same connection as the session, with and without its id.
    httplib::Result r = PostJson(list, ModernHeaders(list), i % 2 == 0);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(Json::parse(r->body)["result"]["resultType"], "complete");
    const Json legacy = Call(Request(2, "tools/list"));
    EXPECT_FALSE(legacy["result"].contains("resultType"));
    EXPECT_EQ(legacy["result"]["tools"].size(), 3u);
  }
  EXPECT_EQ(transport_->session_count(), 1u);
  // A modern server/discover never touches the session, and the 2025 answer to it is unchanged.
  EXPECT_EQ(Call(Request(3, "server/discover"))["error"]["code"], kMethodNotFound);
}

TEST_F(HttpTest, ModernProgressStreamsAndClosingTheStreamCancels) {
  StartServer();
  Json call = ModernRequest(4, "tools/call",
                            {{"name", "slow"}, {"arguments", {{"steps", 200}, {"ms", 10}}}});
  call["params"]["_meta"]["progressToken"] = "tok";
  httplib::Request req;
  req.method = "POST";
  req.path = "/mcp";
  req.headers = ModernHeaders(call);
  req.headers.emplace("Accept", kBoth);
  req.body = call.dump();
  req.set_header("Content-Type", "application/json");
  int chunks = 0;
  const Clock::time_point start = Clock::now();
  req.content_receiver = [&](const char*, std::size_t, uint64_t, uint64_t) {
    return ++chunks < 3;  // two progress events, then hang up
  };
  httplib::Result r = client().send(req);
  EXPECT_GE(chunks, 3);
  // The call stops soon after the client went away, well before its 2 s of steps.
  client_.reset();
  while (transport_->connection_count() > 0 && Clock::now() - start < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace slurm_rca::mcp

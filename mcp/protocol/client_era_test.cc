// Client::Connect's choice of era (shared/reference/mcp-2026-07-28.md, section 2, "Dual-era
// client") against scripted peers, one rung of the ladder a test, over stdio and over HTTP; and
// what the modern era puts on the wire: the `_meta` envelope, the HTTP headers, no handshake, no
// session, no DELETE. The client against the real TypeScript SDK v2 server is
// tests/mcp_client_sdk2_test.cc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/protocol/client.h"

namespace slurm_rca::mcp {

using base::Result;
using base::Status;

namespace {

using std::chrono::milliseconds;

constexpr char kVersionKey[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kModern[] = "2026-07-28";

Json DiscoverResult(Json versions = {kModern}) {
  return {
      {"resultType", "complete"},
      {"supportedVersions", std::move(versions)},
      {"capabilities", {{"tools", Json::object()}}},
      {"instructions", "scripted"},
      {"ttlMs", 0},
      {"cacheScope", "private"},
      {"_meta", {{"io.modelcontextprotocol/serverInfo", {{"name", "peer"}, {"version", "9"}}}}}};
}

Json InitializeResult() {
  return {{"protocolVersion", "2025-11-25"},
          {"capabilities", {{"tools", Json::object()}}},
          {"serverInfo", {{"name", "legacy-peer"}, {"version", "1"}}}};
}

Json ToolsResult() {
  return {{"tools", {{{"name", "echo"}, {"inputSchema", {{"type", "object"}}}}}}};
}

Json CallResult() { return {{"content", {{{"type", "text"}, {"text", "done"}}}}}; }

std::vector<std::string> Methods(const std::vector<Json>& messages) {
  std::vector<std::string> methods;
  for (const Json& m : messages) methods.push_back(m.value("method", std::string("(response)")));
  return methods;
}

// ---- stdio ----

// A server on a thread at the other end of two pipes: each message the client writes is recorded
// and given to `answer`, whose line (if any) is written back. It runs until the client side is
// gone (EOF), so a test declares it before the Client it serves.
class StdioPeer {
 public:
  using Answer = std::function<std::optional<Json>(const Json& message)>;
  explicit StdioPeer(Answer answer) : answer_(std::move(answer)) {
    EXPECT_EQ(::pipe2(to_peer_, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(to_client_, O_CLOEXEC), 0);
    thread_ = std::thread([this] { Run(); });
  }
  ~StdioPeer() {
    ::close(to_peer_[1]);  // EOF to the peer: its thread ends
    thread_.join();
    for (int fd : {to_peer_[0], to_client_[0], to_client_[1]}) ::close(fd);
  }
  std::unique_ptr<ClientTransport> Transport() {
    return std::make_unique<StdioClientTransport>(to_client_[0], to_peer_[1]);
  }
  // What the client sent, once at least `count` messages arrived (or 3 s passed): a
  // notification is written without an answer to wait for.
  std::vector<Json> seen(std::size_t count = 0) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(3), [&] { return seen_.size() >= count; });
    return seen_;
  }

 private:
  void Run() {
    std::string buffer;
    char chunk[4096];
    for (;;) {
      ssize_t n = ::read(to_peer_[0], chunk, sizeof(chunk));
      if (n <= 0) return;
      buffer.append(chunk, static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
        Json message = Json::parse(buffer.substr(0, nl));
        buffer.erase(0, nl + 1);
        {
          std::lock_guard<std::mutex> lock(mu_);
          seen_.push_back(message);
        }
        cv_.notify_all();
        if (std::optional<Json> reply = answer_(message)) {
          std::string line = Serialize(*reply) + "\n";
          if (::write(to_client_[1], line.data(), line.size()) < 0) return;
        }
      }
    }
  }

  Answer answer_;
  int to_peer_[2] = {-1, -1};
  int to_client_[2] = {-1, -1};
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Json> seen_;
};

// A legacy server: discover gets `discover_error` (or no answer at all when it is null),
// initialize and the rest are answered.
StdioPeer::Answer LegacyServer(Json discover_error) {
  return [discover_error](const Json& m) -> std::optional<Json> {
    if (!m.contains("id")) return std::nullopt;  // a notification
    const std::string method = m["method"];
    if (method == "server/discover") {
      if (discover_error.is_null()) return std::nullopt;
      return Json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"error", discover_error}};
    }
    if (method == "initialize") return MakeResult(m["id"], InitializeResult());
    if (method == "tools/list") return MakeResult(m["id"], ToolsResult());
    return MakeResult(m["id"], Json::object());
  };
}

// A modern server: discover and the tools, nothing of the legacy era.
std::optional<Json> ModernServer(const Json& m) {
  if (!m.contains("id")) return std::nullopt;
  const std::string method = m["method"];
  if (method == "server/discover") return MakeResult(m["id"], DiscoverResult());
  if (method == "tools/list") return MakeResult(m["id"], ToolsResult());
  if (method == "tools/call") return MakeResult(m["id"], CallResult());
  return MakeError(m["id"], kMethodNotFound, "Method not found: " + method);
}

TEST(ClientEraStdioTest, DiscoverResultMeansModernAndEveryRequestCarriesTheEnvelope) {
  StdioPeer peer(ModernServer);
  Client client(peer.Transport());
  Result<Connection> c = client.Connect("era-test", "1.2");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kModern);
  EXPECT_EQ(client.era(), Era::kModern);
  EXPECT_EQ(c->protocol_version, kModern);
  EXPECT_EQ(c->server_info["name"], "peer");
  EXPECT_EQ(c->capabilities, (Json{{"tools", Json::object()}}));
  EXPECT_EQ(c->instructions, "scripted");
  EXPECT_EQ(c->supported_versions, std::vector<std::string>{kModern});
  EXPECT_EQ(c->fallback, "");

  ASSERT_TRUE(client.ListTools().ok());
  ASSERT_TRUE(client.SetLogLevel("warning").ok());  // no request: stamped from now on
  std::vector<double> progress;
  Result<ToolCallResult> r = client.CallTool(
      "echo", {{"text", "x"}},
      [&](double p, std::optional<double>, const std::string&) { progress.push_back(p); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Text(), "done");

  // Methods the modern era does not have fail here, with nothing sent.
  Status ping = client.Ping();
  EXPECT_EQ(ping.rpc_code(), kMethodNotFound);
  EXPECT_NE(ping.message().find("ping does not exist in MCP 2026-07-28"), std::string::npos)
      << ping.ToString();
  EXPECT_EQ(client.Call("initialize", Json::object()).status().rpc_code(), kMethodNotFound);
  EXPECT_EQ(client.Notify("notifications/initialized", nullptr).rpc_code(), kMethodNotFound);

  std::vector<Json> seen = peer.seen();
  ASSERT_EQ(Methods(seen),
            (std::vector<std::string>{"server/discover", "tools/list", "tools/call"}));
  const Json probe_meta = seen[0]["params"]["_meta"];
  EXPECT_EQ(
      probe_meta,
      (Json{{kVersionKey, kModern},
            {"io.modelcontextprotocol/clientInfo", {{"name", "era-test"}, {"version", "1.2"}}},
            {"io.modelcontextprotocol/clientCapabilities", Json::object()}}));
  // tools/list: the envelope and nothing else (no log level was set yet).
  EXPECT_EQ(seen[1]["params"]["_meta"], probe_meta);
  // tools/call: the envelope, the log level and the progress token side by side.
  const Json call_meta = seen[2]["params"]["_meta"];
  EXPECT_EQ(call_meta[kVersionKey], kModern);
  EXPECT_EQ(call_meta["io.modelcontextprotocol/logLevel"], "warning");
  EXPECT_TRUE(call_meta["progressToken"].is_string());
  EXPECT_EQ(seen[2]["params"]["name"], "echo");
}

TEST(ClientEraStdioTest, AnyOtherErrorFallsBackToInitialize) {
  // Not keyed on one code: method not found, invalid request, a header mismatch, anything.
  for (int code : std::initializer_list<int>{kMethodNotFound, kInvalidRequest, -32020,
                                             kInvalidParams, -32000}) {
    SCOPED_TRACE(code);
    StdioPeer peer(LegacyServer({{"code", code}, {"message", "no such thing"}}));
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
    EXPECT_EQ(c->protocol_version, "2025-11-25");
    EXPECT_EQ(c->server_info["name"], "legacy-peer");
    EXPECT_NE(c->fallback.find("error " + std::to_string(code) + ": no such thing"),
              std::string::npos)
        << c->fallback;
    ASSERT_TRUE(client.ListTools().ok());
    EXPECT_TRUE(client.Ping().ok());  // the legacy era has ping
    std::vector<Json> seen = peer.seen();
    ASSERT_EQ(Methods(seen),
              (std::vector<std::string>{"server/discover", "initialize",
                                        "notifications/initialized", "tools/list", "ping"}));
    EXPECT_EQ(seen[1]["params"]["clientInfo"]["name"], "era-test");
    EXPECT_FALSE(seen[3]["params"].contains("_meta")) << seen[3].dump();
  }
}

TEST(ClientEraStdioTest, UnsupportedVersionListingAModernRevisionIsProbedAgainOnce) {
  StdioPeer peer([](const Json& m) -> std::optional<Json> {
    if (m["method"] == "server/discover" && m["params"]["_meta"][kVersionKey] != kModern) {
      return MakeError(m["id"], -32022, "Unsupported protocol version",
                       {{"supported", {kModern, "2025-11-25"}},
                        {"requested", m["params"]["_meta"][kVersionKey]}});
    }
    return ModernServer(m);
  });
  ClientOptions options;
  options.modern_protocol_version = "2099-01-01";  // a revision the server does not serve
  Client client(peer.Transport(), options);
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kModern);
  EXPECT_EQ(c->protocol_version, kModern);
  ASSERT_TRUE(client.ListTools().ok());
  std::vector<Json> seen = peer.seen();
  ASSERT_EQ(Methods(seen),
            (std::vector<std::string>{"server/discover", "server/discover", "tools/list"}));
  EXPECT_EQ(seen[0]["params"]["_meta"][kVersionKey], "2099-01-01");
  EXPECT_EQ(seen[1]["params"]["_meta"][kVersionKey], kModern);
  EXPECT_EQ(seen[2]["params"]["_meta"][kVersionKey], kModern);
}

TEST(ClientEraStdioTest, UnsupportedVersionListingOnlyLegacyRevisionsFallsBack) {
  StdioPeer peer(LegacyServer(
      {{"code", -32022},
       {"message", "Unsupported protocol version"},
       {"data", {{"supported", {"2025-11-25", "2025-06-18"}}, {"requested", kModern}}}}));
  Client client(peer.Transport());
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kLegacy);
  EXPECT_NE(c->fallback.find("-32022"), std::string::npos) << c->fallback;
  EXPECT_EQ(Methods(peer.seen(3)), (std::vector<std::string>{"server/discover", "initialize",
                                                             "notifications/initialized"}));
}

TEST(ClientEraStdioTest, AServerThatRefusesTheRevisionItListsIsAnErrorNotLegacy) {
  StdioPeer peer([](const Json& m) -> std::optional<Json> {
    if (!m.contains("id")) return std::nullopt;
    if (m["method"] == "initialize") return MakeResult(m["id"], InitializeResult());
    return MakeError(m["id"], -32022, "Unsupported protocol version",
                     {{"supported", {kModern}}, {"requested", m["params"]["_meta"][kVersionKey]}});
  });
  Client client(peer.Transport());
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().rpc_code(), -32022);
  EXPECT_NE(c.status().message().find("refused 2026-07-28, a revision it lists"), std::string::npos)
      << c.status().ToString();
  // Two probes, then nothing: a modern error is not a reason to fall back.
  EXPECT_EQ(Methods(peer.seen()), (std::vector<std::string>{"server/discover", "server/discover"}));
}

TEST(ClientEraStdioTest, AProbeThatTimesOutFallsBackOnStdio) {
  StdioPeer peer(LegacyServer(nullptr));  // discover is never answered
  ClientOptions options;
  options.timeout = milliseconds(300);
  Client client(peer.Transport(), options);
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kLegacy);
  EXPECT_NE(c->fallback.find("no response within 300 ms"), std::string::npos) << c->fallback;
  // No notifications/cancelled for the probe: the legacy server has not been initialized yet.
  EXPECT_EQ(Methods(peer.seen(3)), (std::vector<std::string>{"server/discover", "initialize",
                                                             "notifications/initialized"}));
}

TEST(ClientEraStdioTest, AResultThatIsNotADiscoverResultFallsBack) {
  for (const Json& result :
       {Json::object(), Json{{"supportedVersions", {kModern}}},  // no capabilities
        Json{{"capabilities", Json::object()}, {"supportedVersions", {"2025-11-25"}}}}) {
    SCOPED_TRACE(result.dump());
    StdioPeer peer([result](const Json& m) -> std::optional<Json> {
      if (m["method"] == "server/discover") return MakeResult(m["id"], result);
      return LegacyServer(nullptr)(m);
    });
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
    EXPECT_NE(c->fallback, "");
  }
}

TEST(ClientEraStdioTest, PinnedModernNeverSendsInitialize) {
  StdioPeer peer(LegacyServer({{"code", kMethodNotFound}, {"message", "Method not found"}}));
  Client client(peer.Transport());
  Result<Connection> c = client.Connect("era-test", "1", EraMode::kModern);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().rpc_code(), kMethodNotFound);
  EXPECT_NE(c.status().message().find("pinned to MCP 2026-07-28"), std::string::npos)
      << c.status().ToString();
  EXPECT_EQ(Methods(peer.seen()), std::vector<std::string>{"server/discover"});
}

TEST(ClientEraStdioTest, PinnedLegacySendsNoProbe) {
  StdioPeer peer(ModernServer);
  {
    StdioPeer legacy(LegacyServer({{"code", kMethodNotFound}, {"message", "x"}}));
    Client client(legacy.Transport());
    Result<Connection> c = client.Connect("era-test", "1", EraMode::kLegacy);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
    EXPECT_EQ(c->fallback, "");
    EXPECT_EQ(Methods(legacy.seen(2)),
              (std::vector<std::string>{"initialize", "notifications/initialized"}));
  }
  // And the legacy API alone never probes either (ModernServer refuses initialize).
  Client client(peer.Transport());
  EXPECT_EQ(client.Initialize("era-test", "1").status().rpc_code(), kMethodNotFound);
  EXPECT_EQ(Methods(peer.seen()), std::vector<std::string>{"initialize"});
}

TEST(ClientEraStdioTest, AModernResultAskingForInputIsAnError) {
  StdioPeer peer([](const Json& m) -> std::optional<Json> {
    if (m["method"] == "tools/call") {
      return MakeResult(m["id"],
                        {{"resultType", "input_required"}, {"inputRequests", Json::object()}});
    }
    return ModernServer(m);
  });
  Client client(peer.Transport());
  ASSERT_TRUE(client.Connect("era-test", "1").ok());
  Result<ToolCallResult> r = client.CallTool("echo", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("input_required"), std::string::npos)
      << r.status().ToString();
}

// ---- HTTP ----

struct HttpSeen {
  std::string verb;  // POST, GET, DELETE
  httplib::Headers headers;
  Json body;  // null for GET/DELETE
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  bool Has(const std::string& name) const { return headers.count(name) != 0; }
};

// An HTTP server (cpp-httplib) that records every request and answers POSTs with `answer`.
class HttpPeer {
 public:
  using Answer = std::function<void(const Json& message, httplib::Response& res)>;
  explicit HttpPeer(Answer answer) : answer_(std::move(answer)) {
    http_.set_tcp_nodelay(true);
    http_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
      Record("POST", req, body);
      answer_(body, res);
    });
    http_.Get("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record("GET", req, nullptr);
      res.status = 405;
    });
    http_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      Record("DELETE", req, nullptr);
      res.status = 200;
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  ~HttpPeer() {
    http_.stop();
    thread_.join();
  }
  std::unique_ptr<HttpClientTransport> Transport() {
    return std::make_unique<HttpClientTransport>("127.0.0.1", port_);
  }
  int port() const { return port_; }
  std::vector<HttpSeen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<std::string> Methods() {
    std::vector<std::string> methods;
    for (const HttpSeen& s : seen()) {
      methods.push_back(s.verb == "POST" ? s.body.value("method", std::string("?")) : s.verb);
    }
    return methods;
  }

 private:
  void Record(const std::string& verb, const httplib::Request& req, Json body) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back({verb, req.headers, std::move(body)});
  }

  Answer answer_;
  httplib::Server http_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<HttpSeen> seen_;
};

void Reply(httplib::Response& res, const Json& message, int status = 200) {
  res.status = status;
  res.set_content(Serialize(message), "application/json");
}

// A modern HTTP server that also mints a session id, which a modern client must ignore.
void ModernHttp(const Json& m, httplib::Response& res) {
  res.set_header("Mcp-Session-Id", "never-echo-me");
  if (!m.contains("id")) {
    res.status = 202;
    return;
  }
  std::optional<Json> reply = ModernServer(m);
  const bool unknown = reply->contains("error");
  Reply(res, *reply, unknown ? 404 : 200);
}

// A legacy HTTP server whose answer to the probe is `refuse`; initialize opens session "s-1".
HttpPeer::Answer LegacyHttp(std::function<void(httplib::Response&, const Json& id)> refuse) {
  return [refuse](const Json& m, httplib::Response& res) {
    const std::string method = m.value("method", std::string());
    if (method == "server/discover") return refuse(res, m["id"]);
    if (!m.contains("id")) {
      res.status = 202;
      return;
    }
    if (method == "initialize") {
      res.set_header("Mcp-Session-Id", "s-1");
      return Reply(res, MakeResult(m["id"], InitializeResult()));
    }
    if (method == "tools/list") return Reply(res, MakeResult(m["id"], ToolsResult()));
    Reply(res, MakeResult(m["id"], Json::object()));
  };
}

TEST(ClientEraHttpTest, ModernHeadersOnTheWireNoSessionNoDelete) {
  HttpPeer peer(ModernHttp);
  {
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kModern);
    ASSERT_TRUE(client.ListTools().ok());
    ASSERT_TRUE(client.CallTool("echo", Json::object()).ok());
    // Names that are not safe header text go base64: non-ASCII, a leading space, one that
    // already looks encoded.
    for (const char* name : {"café", " lead", "=?base64?eA==?="}) {
      ASSERT_TRUE(client.CallTool(name, Json::object()).ok()) << name;
    }
    EXPECT_EQ(client.Call("resources/read", {{"uri", "skill://x/SKILL.md"}}).status().rpc_code(),
              kMethodNotFound);  // 404 with a JSON-RPC body: the server's error, not HTTP's
    EXPECT_TRUE(client.Notify("notifications/cancelled", {{"requestId", 99}}).ok());
  }
  std::vector<HttpSeen> seen = peer.seen();
  ASSERT_EQ(peer.Methods(),
            (std::vector<std::string>{"server/discover", "tools/list", "tools/call", "tools/call",
                                      "tools/call", "tools/call", "resources/read",
                                      "notifications/cancelled"}));
  for (const HttpSeen& s : seen) {
    SCOPED_TRACE(s.body.dump());
    EXPECT_EQ(s.Header("MCP-Protocol-Version"), kModern);
    EXPECT_EQ(s.Header("Mcp-Method"), s.body["method"]);
    EXPECT_EQ(s.body["params"]["_meta"][kVersionKey], kModern);
    EXPECT_FALSE(s.Has("Mcp-Session-Id"));  // although the server sent one with every answer
    EXPECT_EQ(s.Header("Accept"), "application/json, text/event-stream");
  }
  EXPECT_FALSE(seen[0].Has("Mcp-Name"));
  EXPECT_FALSE(seen[1].Has("Mcp-Name"));
  EXPECT_EQ(seen[2].Header("Mcp-Name"), "echo");
  EXPECT_EQ(seen[3].Header("Mcp-Name"), "=?base64?Y2Fmw6k=?=");
  EXPECT_EQ(seen[4].Header("Mcp-Name"), "=?base64?IGxlYWQ=?=");
  EXPECT_EQ(seen[5].Header("Mcp-Name"), "=?base64?PT9iYXNlNjQ/ZUE9PT89?=");
  EXPECT_EQ(seen[6].Header("Mcp-Name"), "skill://x/SKILL.md");
  EXPECT_FALSE(seen[7].Has("Mcp-Name"));
  // No GET stream was opened and, with no session, no DELETE was sent at the end.
}

TEST(ClientEraHttpTest, ABadRequestWithAModernErrorBodyIsTheServersError) {
  HttpPeer peer([](const Json& m, httplib::Response& res) {
    if (m["method"] == "tools/call") {
      return Reply(res, MakeError(m["id"], kInvalidParams, "Missing clientCapabilities"), 400);
    }
    ModernHttp(m, res);
  });
  Client client(peer.Transport());
  ASSERT_TRUE(client.Connect("era-test", "1").ok());
  Result<ToolCallResult> r = client.CallTool("echo", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rpc_code(), kInvalidParams);
  EXPECT_EQ(r.status().message(), "Missing clientCapabilities");
}

TEST(ClientEraHttpTest, BadRequestWithoutAModernBodyFallsBackAndLegacyWorks) {
  for (int status : {400, 404, 405}) {
    SCOPED_TRACE(status);
    HttpPeer peer(
        LegacyHttp([status](httplib::Response& res, const Json&) { res.status = status; }));
    {
      Client client(peer.Transport());
      Result<Connection> c = client.Connect("era-test", "1");
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      EXPECT_EQ(c->era, Era::kLegacy);
      EXPECT_NE(c->fallback.find("HTTP " + std::to_string(status)), std::string::npos)
          << c->fallback;
      ASSERT_TRUE(client.ListTools().ok());
    }
    std::vector<HttpSeen> seen = peer.seen();
    ASSERT_EQ(peer.Methods(),
              (std::vector<std::string>{"server/discover", "initialize",
                                        "notifications/initialized", "tools/list", "DELETE"}));
    // The legacy requests: no modern headers, the session once issued, the legacy revision.
    EXPECT_FALSE(seen[1].Has("Mcp-Method"));
    EXPECT_FALSE(seen[1].Has("MCP-Protocol-Version"));
    EXPECT_EQ(seen[3].Header("Mcp-Session-Id"), "s-1");
    EXPECT_EQ(seen[3].Header("MCP-Protocol-Version"), "2025-11-25");
    EXPECT_FALSE(seen[3].Has("Mcp-Method"));
    EXPECT_EQ(seen[4].Header("Mcp-Session-Id"), "s-1");
  }
}

TEST(ClientEraHttpTest, JsonRpcErrorsInABadRequestFallBackUnlessTheyListAModernRevision) {
  // A 2025-era server's 400 for a request without a session (id null), a 404 method not found,
  // and -32022 that names only legacy revisions: all legacy.
  std::vector<std::function<void(httplib::Response&, const Json&)>> refusals = {
      [](httplib::Response& res, const Json&) {
        Reply(res, MakeError(nullptr, -32000, "Bad Request: No valid session ID provided"), 400);
      },
      [](httplib::Response& res, const Json& id) {
        Reply(res, MakeError(id, kMethodNotFound, "Method not found"), 404);
      },
      [](httplib::Response& res, const Json& id) {
        Reply(res, MakeError(id, -32022, "Unsupported", {{"supported", {"2025-11-25"}}}), 400);
      }};
  for (std::size_t i = 0; i < refusals.size(); ++i) {
    SCOPED_TRACE(i);
    HttpPeer peer(LegacyHttp(refusals[i]));
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
    EXPECT_EQ(peer.Methods()[1], "initialize");
  }
}

TEST(ClientEraHttpTest, UnsupportedVersionInABadRequestIsProbedAgain) {
  HttpPeer peer([](const Json& m, httplib::Response& res) {
    if (m["method"] == "server/discover" && m["params"]["_meta"][kVersionKey] != kModern) {
      return Reply(res,
                   MakeError(m["id"], -32022, "Unsupported protocol version",
                             {{"supported", {kModern}}, {"requested", "2099-01-01"}}),
                   400);
    }
    ModernHttp(m, res);
  });
  ClientOptions options;
  options.modern_protocol_version = "2099-01-01";
  Client client(peer.Transport(), options);
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->era, Era::kModern);
  std::vector<HttpSeen> seen = peer.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].Header("MCP-Protocol-Version"), "2099-01-01");
  EXPECT_EQ(seen[1].Header("MCP-Protocol-Version"), kModern);
}

TEST(ClientEraHttpTest, AuthServerErrorsAndNetworkFailuresAreErrorsNotLegacy) {
  for (int status : {401, 403, 500, 502, 503}) {
    SCOPED_TRACE(status);
    HttpPeer peer(LegacyHttp([status](httplib::Response& res, const Json& id) {
      // Even with a JSON-RPC body: the status decides.
      Reply(res, MakeError(id, kMethodNotFound, "nope"), status);
    }));
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().rpc_code(), kTransportError);
    EXPECT_EQ(RpcData(c.status())["httpStatus"], status);
    EXPECT_NE(c.status().message().find("server/discover: HTTP " + std::to_string(status)),
              std::string::npos)
        << c.status().ToString();
    EXPECT_EQ(peer.Methods(), std::vector<std::string>{"server/discover"});  // no initialize
  }
  // Nobody listening.
  int port = 0;
  {
    HttpPeer gone(ModernHttp);
    port = gone.port();
  }
  Client nobody(std::make_unique<HttpClientTransport>("127.0.0.1", port));
  Result<Connection> c = nobody.Connect("era-test", "1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().rpc_code(), kTransportError);
  EXPECT_NE(c.status().message().find("server/discover: HTTP request"), std::string::npos)
      << c.status().ToString();
}

TEST(ClientEraHttpTest, AProbeThatTimesOutIsAnErrorOverHttp) {
  HttpPeer peer(LegacyHttp([](httplib::Response& res, const Json& id) {
    std::this_thread::sleep_for(milliseconds(800));
    Reply(res, MakeError(id, kMethodNotFound, "late"));
  }));
  ClientOptions options;
  options.timeout = milliseconds(200);
  Client client(peer.Transport(), options);
  Result<Connection> c = client.Connect("era-test", "1");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().rpc_code(), kRequestTimeout);
  EXPECT_EQ(peer.Methods(), std::vector<std::string>{"server/discover"});
}

TEST(ClientEraHttpTest, PinnedLegacyIsTodaysHandshake) {
  HttpPeer peer(LegacyHttp([](httplib::Response& res, const Json&) { res.status = 400; }));
  {
    Client client(peer.Transport());
    Result<Connection> c = client.Connect("era-test", "1", EraMode::kLegacy);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->era, Era::kLegacy);
  }
  EXPECT_EQ(peer.Methods(),
            (std::vector<std::string>{"initialize", "notifications/initialized", "DELETE"}));
}

}  // namespace
}  // namespace slurm_rca::mcp

// The C++ client against RunStdio over pipes, against a scripted peer (for what a correct server
// never does), and its HTTP transport against a minimal Streamable HTTP front built here on
// cpp-httplib (the real HTTP transport has its own tests).
#include "mcp/protocol/client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "mcp/protocol/stdio_transport.h"
#include "mcp/protocol/test_tools.h"

namespace slurm_rca::mcp {

using base::Result;
using base::Status;

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

// RunStdio on a thread and a Client wired to it through two pipes.
class StdioPair {
 public:
  explicit StdioPair(ClientOptions options = {}) : server_(testing_tools::Options()) {
    EXPECT_EQ(::pipe2(to_server_, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(from_server_, O_CLOEXEC), 0);
    runner_ = std::thread([this] { RunStdio(server_, to_server_[0], from_server_[1]); });
    client_ = std::make_unique<Client>(
        std::make_unique<StdioClientTransport>(from_server_[0], to_server_[1]), options);
  }
  ~StdioPair() {
    StopServer();
    client_.reset();
    ::close(from_server_[0]);
  }

  // EOF to the server, then its output closes: the client sees EOF.
  void StopServer() {
    if (to_server_[1] < 0) return;
    ::close(to_server_[1]);
    to_server_[1] = -1;
    runner_.join();
    ::close(to_server_[0]);
    ::close(from_server_[1]);
  }

  Client& client() { return *client_; }

 private:
  Server server_;
  int to_server_[2] = {-1, -1};
  int from_server_[2] = {-1, -1};
  std::thread runner_;
  std::unique_ptr<Client> client_;
};

TEST(ClientStdioTest, InitializeListCallPing) {
  StdioPair pair;
  Client& client = pair.client();
  Result<InitializeResult> init = client.Initialize("client-test", "1.0");
  ASSERT_TRUE(init.ok()) << init.status().ToString();
  EXPECT_EQ(init->protocol_version, "2025-11-25");
  EXPECT_EQ(client.protocol_version(), "2025-11-25");
  EXPECT_EQ(init->server_info["name"], "slurm-mcp-test");
  EXPECT_EQ(init->instructions, "Use the fake tools.");
  EXPECT_EQ(init->capabilities["tools"]["listChanged"], false);

  Result<std::vector<Json>> tools = client.ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status().ToString();
  std::vector<std::string> names;
  for (const Json& t : tools.value()) names.push_back(t["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "fail", "throws", "progress", "log", "slow"}));

  Result<ToolCallResult> echo = client.CallTool("echo", {{"text", "hello"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_FALSE(echo->is_error);
  EXPECT_EQ(echo->Text(), "hello");
  ASSERT_TRUE(echo->structured);
  EXPECT_EQ((*echo->structured)["echo"], "hello");

  EXPECT_TRUE(client.Ping().ok());
}

TEST(ClientStdioTest, ToolErrorsAreResultsProtocolErrorsAreStatuses) {
  StdioPair pair;
  Client& client = pair.client();
  ASSERT_TRUE(client.Initialize("client-test", "1.0").ok());

  Result<ToolCallResult> fail = client.CallTool("fail", Json::object());
  ASSERT_TRUE(fail.ok());
  EXPECT_TRUE(fail->is_error);
  EXPECT_FALSE(fail->structured);
  EXPECT_EQ(fail->Text(), "the fake tool failed");

  Result<ToolCallResult> unknown = client.CallTool("nope", Json::object());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().rpc_code(), kInvalidParams);
  EXPECT_EQ(unknown.status().message(), "Unknown tool: nope");

  Status level = client.SetLogLevel("loud");
  EXPECT_EQ(level.rpc_code(), kInvalidParams);
  EXPECT_TRUE(client.SetLogLevel("debug").ok());

  Result<Json> missing = client.Call("no/such/method", Json::object());
  EXPECT_EQ(missing.status().rpc_code(), kMethodNotFound);
}

TEST(ClientStdioTest, ProgressAndNotificationsReachTheCallbacks) {
  std::mutex mu;
  std::vector<Json> notes;
  ClientOptions options;
  options.on_notification = [&](const Json& n) {
    std::lock_guard<std::mutex> lock(mu);
    notes.push_back(n);
  };
  StdioPair pair(options);
  Client& client = pair.client();
  ASSERT_TRUE(client.Initialize("client-test", "1.0").ok());

  std::vector<double> progress;
  Result<ToolCallResult> r = client.CallTool(
      "slow", {{"seconds", 0.2}}, [&](double p, std::optional<double>, const std::string& message) {
        progress.push_back(p);
        EXPECT_EQ(message, "working");
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Text(), "finished");
  ASSERT_GE(progress.size(), 2u);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));

  ASSERT_TRUE(client.SetLogLevel("warning").ok());
  ASSERT_TRUE(client.CallTool("log", Json::object()).ok());
  std::lock_guard<std::mutex> lock(mu);
  int messages = 0;
  for (const Json& n : notes) messages += n["method"] == "notifications/message";
  EXPECT_EQ(messages, 2);  // warning and error
}

TEST(ClientStdioTest, TimeoutCancelsTheCall) {
  StdioPair pair;
  Client& client = pair.client();
  ASSERT_TRUE(client.Initialize("client-test", "1.0").ok());
  auto start = Clock::now();
  Result<ToolCallResult> r = client.CallTool("slow", Json::object(), nullptr, milliseconds(200));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rpc_code(), kRequestTimeout);
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  // The client sent notifications/cancelled, so the server stops the tool.
  auto end = Clock::now() + milliseconds(2000);
  while (testing_tools::slow_running.load() != 0 && Clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_EQ(testing_tools::slow_running.load(), 0);
  EXPECT_TRUE(client.Ping().ok());
}

TEST(ClientStdioTest, ConcurrentCallsGetTheirOwnAnswers) {
  StdioPair pair;
  Client& client = pair.client();
  ASSERT_TRUE(client.Initialize("client-test", "1.0").ok());
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 10; ++j) {
        std::string text = std::to_string(i) + "/" + std::to_string(j);
        Result<ToolCallResult> r = client.CallTool("echo", {{"text", text}});
        if (r.ok() && r->structured && (*r->structured)["echo"] == text) ++right;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(right.load(), 80);
}

TEST(ClientStdioTest, OlderRevisionIsNegotiated) {
  ClientOptions options;
  options.protocol_version = "2025-03-26";
  StdioPair pair(options);
  Result<InitializeResult> init = pair.client().Initialize("client-test", "1.0");
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->protocol_version, "2025-03-26");
}

TEST(ClientStdioTest, ServerGoneIsATransportError) {
  StdioPair pair;
  Client& client = pair.client();
  ASSERT_TRUE(client.Initialize("client-test", "1.0").ok());
  pair.StopServer();
  auto start = Clock::now();
  Status s = client.Ping();
  EXPECT_EQ(s.rpc_code(), kTransportError);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

// A peer scripted by the test: reads the client's lines and writes whatever it wants.
class ScriptedPeer {
 public:
  ScriptedPeer() {
    EXPECT_EQ(::pipe2(to_peer_, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(to_client_, O_CLOEXEC), 0);
  }
  ~ScriptedPeer() {
    for (int fd : {to_peer_[0], to_peer_[1], to_client_[0], to_client_[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
  std::unique_ptr<ClientTransport> Transport() {
    return std::make_unique<StdioClientTransport>(to_client_[0], to_peer_[1]);
  }
  std::optional<Json> ReadFromClient(milliseconds timeout = milliseconds(3000)) {
    auto end = Clock::now() + timeout;
    while (buffer_.find('\n') == std::string::npos) {
      auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now()).count();
      struct pollfd p = {to_peer_[0], POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(to_peer_[0], chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    std::size_t newline = buffer_.find('\n');
    std::string line = buffer_.substr(0, newline);
    buffer_.erase(0, newline + 1);
    return Json::parse(line);
  }
  void WriteToClient(const std::string& line) {
    ASSERT_EQ(::write(to_client_[1], line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  // The client reads EOF.
  void CloseToClient() {
    ::close(to_client_[1]);
    to_client_[1] = -1;
  }

 private:
  int to_peer_[2] = {-1, -1};
  int to_client_[2] = {-1, -1};
  std::string buffer_;
};

TEST(ClientScriptedTest, UnsupportedVersionFromTheServerFailsInitialize) {
  ScriptedPeer peer;
  Client client(peer.Transport());
  std::thread server([&] {
    std::optional<Json> init = peer.ReadFromClient();
    ASSERT_TRUE(init);
    EXPECT_EQ((*init)["method"], "initialize");
    EXPECT_EQ((*init)["params"]["protocolVersion"], "2025-11-25");
    EXPECT_EQ((*init)["params"]["clientInfo"]["name"], "scripted");
    peer.WriteToClient(Serialize(MakeResult((*init)["id"], {{"protocolVersion", "1999-01-01"},
                                                            {"capabilities", Json::object()},
                                                            {"serverInfo", {{"name", "x"}}}})) +
                       "\n");
  });
  Result<InitializeResult> init = client.Initialize("scripted", "1");
  server.join();
  ASSERT_FALSE(init.ok());
  EXPECT_NE(init.status().message().find("1999-01-01"), std::string::npos);
}

TEST(ClientScriptedTest, GarbageIsIgnoredPingsAreAnsweredAndOrderDoesNotMatter) {
  ScriptedPeer peer;
  Client client(peer.Transport());
  std::thread server([&] {
    std::optional<Json> first = peer.ReadFromClient();
    ASSERT_TRUE(first);
    // Noise, a server-to-client ping, an unknown server request, then the answer.
    peer.WriteToClient("this is not json\n\n[1,2]\n");
    peer.WriteToClient(R"({"jsonrpc":"2.0","id":"srv-1","method":"ping"})"
                       "\n");
    peer.WriteToClient(R"({"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage"})"
                       "\n");
    std::optional<Json> pong = peer.ReadFromClient();
    ASSERT_TRUE(pong);
    EXPECT_EQ((*pong)["id"], "srv-1");
    EXPECT_EQ((*pong)["result"], Json::object());
    std::optional<Json> refused = peer.ReadFromClient();
    ASSERT_TRUE(refused);
    EXPECT_EQ((*refused)["error"]["code"], kMethodNotFound);
    peer.WriteToClient(Serialize(MakeResult((*first)["id"], Json::object())) + "\n");
  });
  EXPECT_TRUE(client.Ping().ok());
  server.join();
}

// What the reading thread gives: the server's messages are read while no call waits.
TEST(ClientScriptedTest, NotificationsAndPingsWhileNoCallWaits) {
  ScriptedPeer peer;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Json> notes;
  ClientOptions options;
  options.on_notification = [&](const Json& n) {
    std::lock_guard<std::mutex> lock(mu);
    notes.push_back(n);
    cv.notify_all();
  };
  Client client(peer.Transport(), options);
  peer.WriteToClient(R"({"jsonrpc":"2.0","method":"notifications/message",)"
                     R"("params":{"level":"info","data":"idle"}})"
                     "\n");
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, milliseconds(3000), [&] { return !notes.empty(); }));
    EXPECT_EQ(notes[0]["params"]["data"], "idle");
  }
  peer.WriteToClient(R"({"jsonrpc":"2.0","id":7,"method":"ping"})"
                     "\n");
  std::optional<Json> pong = peer.ReadFromClient();
  ASSERT_TRUE(pong);
  EXPECT_EQ((*pong)["id"], 7);
  EXPECT_EQ((*pong)["result"], Json::object());
}

// Leader/follower: while a call waits, the caller reads the server on its own thread, so its
// response (and what comes with it) needs no hand-off from the reading thread; between calls
// the reading thread reads.
TEST(ClientScriptedTest, AWaitingCallerReadsItsResponseOnItsOwnThread) {
  ScriptedPeer peer;
  std::mutex mu;
  std::vector<std::pair<std::string, std::thread::id>> seen;  // notification data, reader
  ClientOptions options;
  options.on_notification = [&](const Json& n) {
    std::lock_guard<std::mutex> lock(mu);
    seen.emplace_back(n["params"]["data"].get<std::string>(), std::this_thread::get_id());
  };
  Client client(peer.Transport(), options);
  constexpr int kCalls = 3;
  std::thread server([&] {
    for (int i = 0; i < kCalls; ++i) {
      std::optional<Json> ping = peer.ReadFromClient();
      ASSERT_TRUE(ping);
      // Late enough that the caller leads; one write, so one read takes both lines.
      std::this_thread::sleep_for(milliseconds(50));
      peer.WriteToClient(R"({"jsonrpc":"2.0","method":"notifications/message",)"
                         R"("params":{"level":"info","data":"call"}})"
                         "\n" +
                         Serialize(MakeResult((*ping)["id"], Json::object())) + "\n");
    }
  });
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(client.Ping().ok());
  server.join();
  peer.WriteToClient(R"({"jsonrpc":"2.0","method":"notifications/message",)"
                     R"("params":{"level":"info","data":"idle"}})"
                     "\n");
  const auto deadline = Clock::now() + milliseconds(3000);
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (seen.size() == kCalls + 1 || Clock::now() > deadline) break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(kCalls + 1));
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_EQ(seen[i].first, "call");
    EXPECT_EQ(seen[i].second, std::this_thread::get_id()) << "call " << i << " was read elsewhere";
  }
  EXPECT_EQ(seen[kCalls].first, "idle");
  EXPECT_NE(seen[kCalls].second, std::this_thread::get_id()) << "between calls, the reading thread";
}

// Whoever leads, a caller's own timeout holds, and the other caller then reads for itself.
TEST(ClientScriptedTest, ACallTimesOutWhileAnotherWaitsAndTheOtherIsStillAnswered) {
  ScriptedPeer peer;
  Client client(peer.Transport());
  std::thread server([&] {
    std::optional<Json> a = peer.ReadFromClient();
    std::optional<Json> b = peer.ReadFromClient();
    ASSERT_TRUE(a && b);
    const Json& answered = (*a)["method"] == "answered/call" ? *a : *b;
    std::this_thread::sleep_for(milliseconds(400));
    peer.WriteToClient(Serialize(MakeResult(answered["id"], {{"ok", true}})) + "\n");
  });
  Status unanswered;
  Clock::duration unanswered_took{};
  std::thread impatient([&] {
    auto start = Clock::now();
    unanswered = client.Call("unanswered/call", Json::object(), milliseconds(150)).status();
    unanswered_took = Clock::now() - start;
  });
  Result<Json> answered = client.Call("answered/call", Json::object(), milliseconds(5000));
  impatient.join();
  server.join();
  EXPECT_EQ(unanswered.rpc_code(), kRequestTimeout) << unanswered.ToString();
  EXPECT_LT(unanswered_took, milliseconds(380)) << "it waited for the other call";
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_EQ((*answered)["ok"], true);
}

TEST(ClientScriptedTest, ConcurrentCallsAnsweredInReverseOrder) {
  ScriptedPeer peer;
  Client client(peer.Transport());
  std::thread server([&] {
    std::optional<Json> a = peer.ReadFromClient();
    std::optional<Json> b = peer.ReadFromClient();
    ASSERT_TRUE(a && b);
    for (const Json* r : {&*b, &*a}) {
      peer.WriteToClient(Serialize(MakeResult((*r)["id"], {{"method", (*r)["method"]}})) + "\n");
    }
  });
  std::atomic<int> right{0};
  std::vector<std::thread> callers;
  for (std::string method : {"first/call", "second/call"}) {
    callers.emplace_back([&, method] {
      Result<Json> r = client.Call(method, Json::object(), milliseconds(5000));
      if (r.ok() && (*r)["method"] == method) ++right;
    });
  }
  for (std::thread& t : callers) t.join();
  server.join();
  EXPECT_EQ(right.load(), 2);
}

TEST(ClientScriptedTest, EofWhileACallWaitsEndsItAtOnce) {
  ScriptedPeer peer;
  Client client(peer.Transport());
  std::thread server([&] {
    ASSERT_TRUE(peer.ReadFromClient());
    peer.CloseToClient();
  });
  auto start = Clock::now();
  Result<Json> r = client.Call("tools/list", Json::object(), milliseconds(10000));
  server.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rpc_code(), kTransportError);
  EXPECT_NE(r.status().message().find("EOF"), std::string::npos) << r.status().ToString();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_EQ(client.Ping().rpc_code(), kTransportError);  // and every later call
}

// ---- HTTP ----

// A minimal Streamable HTTP front over Server::Handle: JSON for most requests, SSE for
// tools/call (notifications then the response), a session id, 202 for notifications.
class HttpFront {
 public:
  // keep_alive_s: how long an idle connection is kept open (httplib's default is 5 s).
  explicit HttpFront(int keep_alive_s = 5) : server_(testing_tools::Options()) {
    http_.set_keep_alive_timeout(keep_alive_s);
    http_.set_keep_alive_max_count(1000);
    // Without it every answer on a kept-alive connection waits 40 ms: httplib writes the headers
    // and the body apart, and Nagle holds the body until the client's delayed ACK.
    http_.set_tcp_nodelay(true);
    http_.Post("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      last_headers_ = req.headers;
      client_ports_.insert(req.remote_port);
      if (token_ && req.get_header_value("Authorization") != "Bearer " + *token_) {
        res.status = 401;
        return;
      }
      ParsedMessage p = ParseMessage(req.body);
      if (!p.ok()) {
        res.status = 400;
        res.set_content(Serialize(p.error), "application/json");
        return;
      }
      const Message& m = *p.message;
      if (m.method != "initialize" && req.get_header_value("Mcp-Session-Id") != "sess-1") {
        res.status = 404;
        res.set_content(Serialize(MakeError(nullptr, -32001, "Session not found")),
                        "application/json");
        return;
      }
      std::string events = ": priming\n\n";
      auto notify = [&](const Json& n) {
        events += "event: message\ndata: " + Serialize(n) + "\n\n";
      };
      std::optional<Json> reply = server_.Handle(m, session_, notify);
      if (m.method == "initialize") res.set_header("Mcp-Session-Id", "sess-1");
      if (!reply) {
        res.status = 202;
        return;
      }
      if (m.method == "tools/call") {
        // Split the JSON across two data lines to exercise multi-line events.
        std::string body = Serialize(*reply);
        std::size_t half = body.find(',') + 1;
        events +=
            "id: 1\ndata: " + body.substr(0, half) + "\r\ndata: " + body.substr(half) + "\r\n\r\n";
        res.set_content(events, "text/event-stream");
      } else {
        res.set_content(Serialize(*reply), "application/json");
      }
    });
    http_.Delete("/mcp", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      deleted_session_ = req.get_header_value("Mcp-Session-Id");
      res.status = 405;
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  ~HttpFront() {
    http_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  void RequireToken(std::string token) { token_ = std::move(token); }
  std::string LastHeader(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_headers_.find(name);
    return it == last_headers_.end() ? "" : it->second;
  }
  std::string deleted_session() {
    std::lock_guard<std::mutex> lock(mu_);
    return deleted_session_;
  }
  // TCP connections the POSTs came on (one client port each).
  std::size_t connections() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_ports_.size();
  }

 private:
  Server server_;
  Session session_;
  httplib::Server http_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  httplib::Headers last_headers_;
  std::optional<std::string> token_;
  std::string deleted_session_;
  std::set<int> client_ports_;
};

TEST(ClientHttpTest, JsonAndSseResponsesSessionAndHeaders) {
  HttpFront front;
  front.RequireToken("s3cret");
  {
    auto transport =
        std::make_unique<HttpClientTransport>("127.0.0.1", front.port(), "/mcp", "s3cret");
    HttpClientTransport* http = transport.get();
    Client client(std::move(transport));
    Result<InitializeResult> init = client.Initialize("http-test", "1");
    ASSERT_TRUE(init.ok()) << init.status().ToString();
    EXPECT_EQ(init->protocol_version, "2025-11-25");
    EXPECT_EQ(http->session_id(), "sess-1");
    // notifications/initialized (202) carried the session and version headers.
    EXPECT_EQ(front.LastHeader("Mcp-Session-Id"), "sess-1");
    EXPECT_EQ(front.LastHeader("MCP-Protocol-Version"), "2025-11-25");
    EXPECT_EQ(front.LastHeader("Accept"), "application/json, text/event-stream");

    Result<std::vector<Json>> tools = client.ListTools();
    ASSERT_TRUE(tools.ok()) << tools.status().ToString();
    EXPECT_EQ(tools->size(), 6u);

    std::vector<double> progress;
    Result<ToolCallResult> r = client.CallTool(
        "progress", Json::object(), [&](double p, std::optional<double> total, const std::string&) {
          progress.push_back(p);
          EXPECT_EQ(total, 3.0);
        });
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->Text(), "progressed");
    EXPECT_EQ(progress, (std::vector<double>{1, 2, 3}));

    Result<ToolCallResult> echo = client.CallTool("echo", {{"text", "via sse"}});
    ASSERT_TRUE(echo.ok()) << echo.status().ToString();
    EXPECT_EQ((*echo->structured)["echo"], "via sse");
    EXPECT_TRUE(client.Ping().ok());
  }
  // Destroying the client ended the session with DELETE (405 is fine).
  EXPECT_EQ(front.deleted_session(), "sess-1");
}

TEST(ClientHttpTest, HttpFailuresAreStatuses) {
  HttpFront front;
  front.RequireToken("right");
  Client wrong_token(
      std::make_unique<HttpClientTransport>("127.0.0.1", front.port(), "/mcp", "wrong"));
  Result<InitializeResult> init = wrong_token.Initialize("http-test", "1");
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.status().rpc_code(), kTransportError);
  EXPECT_EQ(RpcData(init.status())["httpStatus"], 401);

  // No session: the front answers 404 with a JSON-RPC error.
  Client no_session(
      std::make_unique<HttpClientTransport>("127.0.0.1", front.port(), "/mcp", "right"));
  Status ping = no_session.Ping();
  EXPECT_EQ(ping.rpc_code(), kTransportError);
  EXPECT_EQ(RpcData(ping)["httpStatus"], 404);
  EXPECT_NE(ping.message().find("Session not found"), std::string::npos);

  // Nobody listening (the port of a front that has stopped).
  int port = 0;
  {
    HttpFront gone;
    port = gone.port();
  }
  Client nobody(std::make_unique<HttpClientTransport>("127.0.0.1", port));
  Status s = nobody.Ping();
  EXPECT_EQ(s.rpc_code(), kTransportError);
  EXPECT_NE(s.message().find("failed"), std::string::npos) << s.ToString();
}

TEST(ClientHttpTest, SequentialRequestsShareOneConnection) {
  HttpFront front;
  {
    Client client(std::make_unique<HttpClientTransport>("127.0.0.1", front.port()));
    ASSERT_TRUE(client.Initialize("http-test", "1").ok());
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(client.Ping().ok());
      Result<ToolCallResult> echo = client.CallTool("echo", {{"text", std::to_string(i)}});
      ASSERT_TRUE(echo.ok()) << echo.status().ToString();  // an SSE body of known length
      EXPECT_EQ((*echo->structured)["echo"], std::to_string(i));
    }
    EXPECT_TRUE(client.Notify("notifications/roots/list_changed", nullptr).ok());
  }
  // initialize, notifications/initialized, 20 requests and a notification: one connection.
  EXPECT_EQ(front.connections(), 1u);
}

TEST(ClientHttpTest, ARequestAfterTheServerClosedTheIdleConnectionSucceeds) {
  HttpFront front(/*keep_alive_s=*/1);
  Client client(std::make_unique<HttpClientTransport>("127.0.0.1", front.port()));
  ASSERT_TRUE(client.Initialize("http-test", "1").ok());
  ASSERT_TRUE(client.Ping().ok());
  EXPECT_EQ(front.connections(), 1u);
  std::this_thread::sleep_for(milliseconds(2500));  // the front closes the idle connection at 1 s
  Status ping = client.Ping();
  EXPECT_TRUE(ping.ok()) << ping.ToString();
  Result<ToolCallResult> echo = client.CallTool("echo", {{"text", "again"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(front.connections(), 2u);
}

// A bare HTTP/1.1 peer on loopback, for what a well-behaved server does only by accident:
// dropping a kept-alive connection just as a request arrives, or answering out of order.
class RawHttpPeer {
 public:
  RawHttpPeer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len), 0);
    EXPECT_EQ(::listen(listen_fd_, 8), 0);
    EXPECT_EQ(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port_ = ntohs(a.sin_port);
  }
  ~RawHttpPeer() {
    for (int fd : open_) ::close(fd);
    ::close(listen_fd_);
  }
  int port() const { return port_; }

  // The next connection, or -1 when none comes within `timeout`.
  int Accept(milliseconds timeout = milliseconds(3000)) {
    struct pollfd p = {listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return -1;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) open_.insert(fd);
    return fd;
  }
  // One request's JSON body, or nullopt at EOF or after 3 s.
  std::optional<Json> ReadRequest(int fd) {
    std::string& in = buffers_[fd];
    auto end = Clock::now() + milliseconds(3000);
    for (;;) {
      // Beast's parser over what has arrived: a whole request, or read more.
      http::request_parser<http::string_body> parser;
      parser.eager(true);
      beast::error_code ec;
      std::size_t used = 0;
      while (!parser.is_done() && used < in.size()) {
        const std::size_t n = parser.put(net::buffer(in.data() + used, in.size() - used), ec);
        used += n;
        if (ec == http::error::need_more || (n == 0 && !ec)) break;
        if (ec) return std::nullopt;
      }
      if (parser.is_done()) {
        in.erase(0, used);
        return Json::parse(parser.get().body());
      }
      auto left = std::chrono::duration_cast<milliseconds>(end - Clock::now()).count();
      struct pollfd p = {fd, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(fd, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;
      in.append(chunk, static_cast<std::size_t>(n));
    }
  }
  // 200 with {"result": {}} for the request, the connection kept alive.
  void Answer(int fd, const Json& request) {
    http::response<http::string_body> res{http::status::ok, 11};
    res.set(http::field::content_type, "application/json");
    res.body() = Serialize(MakeResult(request["id"], Json::object()));
    res.prepare_payload();
    std::ostringstream bytes;
    bytes << res;
    const std::string reply = bytes.str();
    EXPECT_EQ(::write(fd, reply.data(), reply.size()), static_cast<ssize_t>(reply.size()));
  }
  void Drop(int fd) {
    open_.erase(fd);
    ::close(fd);
  }

 private:
  int listen_fd_ = -1;
  int port_ = 0;
  std::set<int> open_;
  std::map<int, std::string> buffers_;
};

Json PingRequest(int id) { return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

TEST(ClientHttpTest, AKeptConnectionDroppedAsTheRequestArrivesIsRetriedOnce) {
  RawHttpPeer peer;
  HttpClientTransport http("127.0.0.1", peer.port());
  std::thread server([&] {
    int a = peer.Accept();
    ASSERT_GE(a, 0);
    std::optional<Json> first = peer.ReadRequest(a);
    ASSERT_TRUE(first);
    peer.Answer(a, *first);
    std::optional<Json> second = peer.ReadRequest(a);  // read, then dropped unanswered
    ASSERT_TRUE(second);
    peer.Drop(a);
    int b = peer.Accept();
    ASSERT_GE(b, 0);
    std::optional<Json> again = peer.ReadRequest(b);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *second);
    peer.Answer(b, *again);
    EXPECT_EQ(peer.Accept(milliseconds(300)), -1);  // and not a third time
  });
  Result<Json> first = http.Request(PingRequest(1), milliseconds(3000));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<Json> second = http.Request(PingRequest(2), milliseconds(3000));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)["id"], 2);
  server.join();
}

TEST(ClientHttpTest, ANewConnectionDroppedUnansweredIsNotRetried) {
  RawHttpPeer peer;
  HttpClientTransport http("127.0.0.1", peer.port());
  std::thread server([&] {
    int a = peer.Accept();
    ASSERT_GE(a, 0);
    ASSERT_TRUE(peer.ReadRequest(a));
    peer.Drop(a);
    EXPECT_EQ(peer.Accept(milliseconds(300)), -1);
  });
  Result<Json> r = http.Request(PingRequest(1), milliseconds(3000));
  server.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rpc_code(), kTransportError);
}

TEST(ClientHttpTest, ARequestThatTimedOutOnAKeptConnectionIsNotResent) {
  RawHttpPeer peer;
  HttpClientTransport http("127.0.0.1", peer.port());
  std::thread server([&] {
    int a = peer.Accept();
    ASSERT_GE(a, 0);
    std::optional<Json> first = peer.ReadRequest(a);
    ASSERT_TRUE(first);
    peer.Answer(a, *first);
    ASSERT_TRUE(peer.ReadRequest(a));  // never answered
    EXPECT_EQ(peer.Accept(milliseconds(800)), -1);
  });
  ASSERT_TRUE(http.Request(PingRequest(1), milliseconds(3000)).ok());
  Result<Json> late = http.Request(PingRequest(2), milliseconds(300));
  EXPECT_EQ(late.status().rpc_code(), kRequestTimeout) << late.status().ToString();
  server.join();
}

TEST(ClientHttpTest, ConcurrentRequestsDoNotWaitForEachOther) {
  RawHttpPeer peer;
  HttpClientTransport http("127.0.0.1", peer.port());
  std::thread server([&] {
    // The first request stays unanswered until the second, on its own connection, is answered.
    int a = peer.Accept();
    ASSERT_GE(a, 0);
    std::optional<Json> first = peer.ReadRequest(a);
    ASSERT_TRUE(first);
    int b = peer.Accept();
    ASSERT_GE(b, 0);
    std::optional<Json> second = peer.ReadRequest(b);
    ASSERT_TRUE(second);
    peer.Answer(b, *second);
    peer.Answer(a, *first);
  });
  std::vector<std::thread> callers;
  std::atomic<int> answered{0};
  for (int id : {1, 2}) {
    callers.emplace_back([&, id] {
      Result<Json> r = http.Request(PingRequest(id), milliseconds(5000));
      if (r.ok() && (*r)["id"] == id) ++answered;
    });
  }
  for (std::thread& t : callers) t.join();
  server.join();
  EXPECT_EQ(answered.load(), 2);
}

}  // namespace
}  // namespace slurm_rca::mcp

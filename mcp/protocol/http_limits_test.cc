// Tests of the HTTP transport's limits and of what no connection may do to it (issue #20): a
// fleet of idle keep-alive connections and a crowd of half-open ones do not keep a new client
// waiting, the connection caps answer 503 at once, the header and idle timeouts close what they
// should, a tool call on the worker pool does not block the event loop, and Stop() does not wait
// for idle clients. Raw sockets where a client must misbehave; httplib::Client where it must not.
// Bounds are generous (seconds) and only say "answered, not hung".
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mcp/protocol/http_test_socket.h"
#include "mcp/protocol/http_transport.h"
#include "mcp/protocol/metrics.h"
#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using http_testing::kHalfHeader;
using http_testing::kPing;
using http_testing::Post;
using http_testing::RaiseFileLimit;
using http_testing::Socket;

// A tool that sleeps in steps until done or cancelled, and one that answers at once.
std::vector<Tool> Tools() {
  Tool slow;
  slow.name = "slow";
  slow.description = "Sleeps in 20 ms steps.";
  slow.input_schema = {{"type", "object"}};
  slow.run = [](const Json& args, ToolContext& context) {
    const int steps = args.value("steps", 10);
    int done = 0;
    for (; done < steps && !context.Cancelled(); ++done) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    ToolResult r;
    r.content = Json::array({{{"type", "text"}, {"text", "done " + std::to_string(done)}}});
    return r;
  };
  Tool echo;
  echo.name = "echo";
  echo.description = "Returns its text.";
  echo.input_schema = {{"type", "object"}};
  echo.run = [](const Json& args, ToolContext&) {
    ToolResult r;
    r.content = Json::array({{{"type", "text"}, {"text", args.value("text", "")}}});
    return r;
  };
  return {slow, echo};
}

class HttpLimitsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (transport_) transport_->Stop();
  }

  void StartServer(HttpOptions options) {
    options.sessions = false;  // every POST stands alone: no handshake to repeat per connection
    server_ = std::make_unique<Server>(ServerOptions{.tools = Tools()});
    transport_ = std::make_unique<HttpTransport>(*server_, options);
    base::Result<int> started = transport_->Start();
    ASSERT_TRUE(started.ok()) << started.status().message();
    port_ = *started;
  }

  std::unique_ptr<httplib::Client> NewClient() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_read_timeout(10, 0);
    return c;
  }

  httplib::Result Call(httplib::Client& c, const std::string& body) {
    return c.Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, body,
                  "application/json");
  }

  // Waits (bounded) until the server holds `n` connections.
  bool ConnectionsReach(std::size_t n, milliseconds timeout = milliseconds(10'000)) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (transport_->connection_count() != n) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return true;
  }

  Metrics metrics_{"0", "x"};  // outlives the transport, which counts into it
  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpTransport> transport_;
  int port_ = 0;
};

TEST_F(HttpLimitsTest, FleetAndHalfOpenConnectionsDoNotKeepANewClientWaiting) {
  ASSERT_TRUE(RaiseFileLimit(4 * 1300)) << "needs about 5,200 file descriptors (ulimit -n)";
  StartServer({.event_threads = 2,
               .header_timeout = milliseconds(60'000),
               .idle_timeout = milliseconds(60'000)});
  // 1,000 keep-alive clients that each made one call and now sit idle on their connection.
  std::vector<std::unique_ptr<httplib::Client>> fleet;
  for (int i = 0; i < 1000; ++i) {
    fleet.push_back(NewClient());
    httplib::Result r = Call(*fleet.back(), kPing);
    ASSERT_TRUE(r) << "fleet client " << i << ": " << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  // 256 connections that sent half a request header and nothing since.
  std::vector<std::unique_ptr<Socket>> half_open;
  for (int i = 0; i < 256; ++i) {
    half_open.push_back(std::make_unique<Socket>(port_));
    ASSERT_TRUE(half_open.back()->connected()) << i;
    ASSERT_TRUE(half_open.back()->Send(kHalfHeader)) << i;
  }
  ASSERT_TRUE(ConnectionsReach(1256)) << transport_->connection_count();

  auto fresh = NewClient();
  const Clock::time_point start = Clock::now();
  httplib::Result r = Call(*fresh, R"({"jsonrpc":"2.0","id":2,"method":"tools/call",)"
                                   R"("params":{"name":"echo","arguments":{"text":"through"}}})");
  const Clock::duration took = Clock::now() - start;
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["result"]["content"][0]["text"], "through");
  EXPECT_LT(took, milliseconds(2000));
  // The fleet's connections are still open and still serve.
  EXPECT_EQ(transport_->connection_count(), 1257u);
  r = Call(*fleet.front(), kPing);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(transport_->connection_count(), 1257u);  // the same connection, not a new one
}

TEST_F(HttpLimitsTest, PastTheConnectionCapA503AtOnce) {
  StartServer({.max_connections = 4, .metrics = &metrics_});
  std::vector<std::unique_ptr<Socket>> held;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<Socket>(port_));
  ASSERT_TRUE(ConnectionsReach(4));

  Socket refused(port_);
  ASSERT_TRUE(refused.Send(Post(kPing)));
  std::string got;
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(refused.ReadUntilClosed(got, milliseconds(5000))) << "not closed: " << got;
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_EQ(got.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("\r\nRetry-After: 1\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("\r\nConnection: close\r\n"), std::string::npos) << got;
  EXPECT_NE(got.find("the server holds its maximum of 4 connections"), std::string::npos) << got;
  EXPECT_EQ(metrics_.registry().Value(kHttpRequestsRejectedTotal, {{"code", "503"}}), 1);
  EXPECT_EQ(transport_->connection_count(), 4u);  // a refused connection is not counted

  held.pop_back();  // a slot comes free
  ASSERT_TRUE(ConnectionsReach(3));
  auto client = NewClient();
  httplib::Result r = Call(*client, kPing);
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpLimitsTest, PerAddressCap) {
  StartServer({.max_connections = 100, .max_connections_per_address = 2});
  Socket a(port_);
  Socket b(port_);
  ASSERT_TRUE(ConnectionsReach(2));
  Socket third(port_);
  ASSERT_TRUE(third.Send(Post(kPing)));
  std::string got;
  EXPECT_TRUE(third.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got.rfind("HTTP/1.1 503", 0), 0u) << got;
  EXPECT_NE(got.find("this client address holds its maximum of 2 connections"),
            std::string::npos)
      << got;
}

TEST_F(HttpLimitsTest, HeaderTimeoutClosesASlowHeaderAndASlowBody) {
  StartServer({.header_timeout = milliseconds(200)});
  Socket slow_header(port_);
  ASSERT_TRUE(slow_header.Send(kHalfHeader));
  std::string got;
  EXPECT_TRUE(slow_header.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got, "");  // closed without an answer

  Socket slow_body(port_);
  const std::string request = Post(kPing);
  ASSERT_TRUE(slow_body.Send(request.substr(0, request.size() - 10)));  // the body's last 10 bytes never come
  got.clear();
  EXPECT_TRUE(slow_body.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got, "");
  EXPECT_TRUE(ConnectionsReach(0));
}

TEST_F(HttpLimitsTest, IdleTimeoutClosesAKeptAliveConnection) {
  StartServer({.idle_timeout = milliseconds(200)});
  Socket s(port_);
  ASSERT_TRUE(s.Send(Post(kPing)));
  std::string got;
  EXPECT_TRUE(s.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_NE(got.find(R"("id":1)"), std::string::npos) << got;
  EXPECT_EQ(got.find("Connection: close"), std::string::npos) << got;  // kept alive, then idle
}

TEST_F(HttpLimitsTest, PipelinedRequestsAnsweredInOrderOnOneConnection) {
  StartServer({});
  Socket s(port_);
  ASSERT_TRUE(s.Send(Post(R"({"jsonrpc":"2.0","id":"first","method":"ping"})") +
                     Post(R"({"jsonrpc":"2.0","id":"second","method":"tools/call",)"
                          R"("params":{"name":"echo","arguments":{"text":"x"}}})") +
                     Post(R"({"jsonrpc":"2.0","id":"third","method":"ping"})")));
  std::string got;
  ASSERT_TRUE(s.ReadUntil(got, R"("third")", milliseconds(5000))) << got;
  const std::size_t first = got.find(R"("first")");
  const std::size_t second = got.find(R"("second")");
  ASSERT_NE(first, std::string::npos) << got;
  ASSERT_NE(second, std::string::npos) << got;
  EXPECT_LT(first, second);
  EXPECT_LT(second, got.find(R"("third")"));
}

TEST_F(HttpLimitsTest, ExpectContinueGetsAnInterimResponseBeforeTheBody) {
  StartServer({});
  Socket s(port_);
  const std::string request = Post(kPing, "Expect: 100-continue\r\n");
  const std::size_t head_end = request.find("\r\n\r\n") + 4;
  ASSERT_TRUE(s.Send(request.substr(0, head_end)));
  std::string got;
  ASSERT_TRUE(s.ReadUntil(got, "\r\n\r\n", milliseconds(5000)));
  EXPECT_EQ(got, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(s.Send(request.substr(head_end)));
  ASSERT_TRUE(s.ReadUntil(got, R"("result")", milliseconds(5000))) << got;
  EXPECT_NE(got.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << got;
}

TEST_F(HttpLimitsTest, MalformedRequestIs400AndClosed) {
  StartServer({});
  Socket s(port_);
  ASSERT_TRUE(s.Send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: nine\r\n\r\n"));
  std::string got;
  EXPECT_TRUE(s.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("malformed HTTP request"), std::string::npos) << got;
}

TEST_F(HttpLimitsTest, AToolCallOnTheOnlyWorkerBlocksNeitherPingsNorItsCancellation) {
  HttpOptions options{.workers = 1};
  options.sessions = true;
  server_ = std::make_unique<Server>(ServerOptions{.tools = Tools()});
  transport_ = std::make_unique<HttpTransport>(*server_, options);
  base::Result<int> started = transport_->Start();
  ASSERT_TRUE(started.ok()) << started.status().message();
  port_ = *started;
  auto client = NewClient();
  httplib::Result r = Call(*client, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{)"
                                    R"("protocolVersion":"2025-11-25","capabilities":{},)"
                                    R"("clientInfo":{"name":"t","version":"0"}}})");
  ASSERT_TRUE(r && r->status == 200);
  const std::string session = r->get_header_value("Mcp-Session-Id");
  httplib::Headers headers = {{"Accept", "application/json"}, {"Mcp-Session-Id", session}};
  client->Post("/mcp", headers, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
               "application/json");

  auto slow_client = NewClient();
  const Clock::time_point start = Clock::now();
  std::future<httplib::Result> slow = std::async(std::launch::async, [&] {
    return slow_client->Post("/mcp", headers,
                             R"({"jsonrpc":"2.0","id":7,"method":"tools/call",)"
                             R"("params":{"name":"slow","arguments":{"steps":500}}})",
                             "application/json");
  });
  std::this_thread::sleep_for(milliseconds(200));  // the only worker is busy now
  for (int i = 0; i < 5; ++i) {
    r = client->Post("/mcp", headers, kPing, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
  }
  r = client->Post(
      "/mcp", headers,
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}})",
      "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);
  r = slow.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 202);  // cancelled
  EXPECT_LT(Clock::now() - start, milliseconds(5000));  // 500 steps would take 10 s
}

TEST_F(HttpLimitsTest, WithoutWorkersToolCallsRunOnTheEventThread) {
  StartServer({.workers = 0});
  auto client = NewClient();
  httplib::Result r = Call(*client, R"({"jsonrpc":"2.0","id":4,"method":"tools/call",)"
                                    R"("params":{"name":"echo","arguments":{"text":"inline"}}})");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(Json::parse(r->body)["result"]["content"][0]["text"], "inline");
  // A call that waits holds every connection up meanwhile: the reason the live back-end has a
  // pool. The second client's ping is answered only after the slow call.
  auto slow_client = NewClient();
  const Clock::time_point start = Clock::now();
  std::future<httplib::Result> slow = std::async(std::launch::async, [&] {
    return Call(*slow_client, R"({"jsonrpc":"2.0","id":5,"method":"tools/call",)"
                              R"("params":{"name":"slow","arguments":{"steps":25}}})");
  });
  std::this_thread::sleep_for(milliseconds(100));
  r = Call(*client, kPing);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_GE(Clock::now() - start, milliseconds(450));  // 25 steps of 20 ms
  ASSERT_TRUE(slow.get());
}

TEST_F(HttpLimitsTest, StopDoesNotWaitForIdleClients) {
  StartServer({});  // idle timeout 60 s
  std::vector<std::unique_ptr<httplib::Client>> idle;
  for (int i = 0; i < 50; ++i) {
    idle.push_back(NewClient());
    ASSERT_TRUE(Call(*idle.back(), kPing));
  }
  std::vector<std::unique_ptr<Socket>> half_open;
  for (int i = 0; i < 50; ++i) {
    half_open.push_back(std::make_unique<Socket>(port_));
    half_open.back()->Send(kHalfHeader);
  }
  ASSERT_TRUE(ConnectionsReach(100));
  const Clock::time_point start = Clock::now();
  transport_->Stop();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_EQ(transport_->connection_count(), 0u);
}

TEST_F(HttpLimitsTest, StopWaitsForACallBeingAnswered) {
  StartServer({});
  auto client = NewClient();
  std::future<httplib::Result> slow = std::async(std::launch::async, [&] {
    return Call(*client, R"({"jsonrpc":"2.0","id":3,"method":"tools/call",)"
                         R"("params":{"name":"slow","arguments":{"steps":15}}})");
  });
  ASSERT_TRUE(ConnectionsReach(1));
  std::this_thread::sleep_for(milliseconds(100));
  transport_->Stop();
  httplib::Result r = slow.get();
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["result"]["content"][0]["text"], "done 15");
  EXPECT_EQ(r->get_header_value("Connection"), "close");
}

TEST_F(HttpLimitsTest, StartRefusesBadLimits) {
  Server server(ServerOptions{});
  for (HttpOptions bad : {HttpOptions{.workers = -1}, HttpOptions{.event_threads = 0},
                          HttpOptions{.max_connections = 0},
                          HttpOptions{.max_connections_per_address = 0},
                          HttpOptions{.header_timeout = milliseconds(0)},
                          HttpOptions{.idle_timeout = milliseconds(-1)}}) {
    HttpTransport t(server, bad);
    EXPECT_FALSE(t.Start().ok());
  }
}

}  // namespace
}  // namespace slurm_rca::mcp

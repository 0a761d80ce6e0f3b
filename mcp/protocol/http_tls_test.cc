// TLS on the HTTP transport (issue #38, item 4): https with the test CA's certificate
// (mcp/testdata/tls), TLS 1.2 and 1.3 only, nothing answered in clear on a TLS port, and the
// guarantees of issue #20 over TLS: the handshake, a slow header and a slow body are bounded by
// the header timeout, an idle connection by the idle timeout, the connection caps answer 503 at
// once, a fleet of idle TLS clients and half-open connections does not keep a new client waiting,
// and Stop() does not wait for idle clients. Raw OpenSSL sockets where a client must misbehave or
// choose its versions; httplib::SSLClient (which checks the certificate and its name) where it
// must not. Bounds are generous (seconds) and only say "answered, not hung".
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mcp/protocol/client.h"
#include "mcp/protocol/http_test_socket.h"
#include "mcp/protocol/http_transport.h"
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

const std::string kTlsDir = std::string(SLURM_RCA_SOURCE_DIR) + "/mcp/testdata/tls/";

// A TLS client over a raw socket that trusts the test CA, checks the name "localhost", offers the
// versions [min_version, max_version] (0: the library's highest) and may misbehave after the
// handshake. The security level is 0 so that it can offer TLS 1.0 and 1.1 at all: whether they
// are refused is the server's to decide.
class TlsSocket {
 public:
  explicit TlsSocket(int port, int min_version = TLS1_VERSION, int max_version = 0) : tcp_(port) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_security_level(ctx_, 0);
    SSL_CTX_set_min_proto_version(ctx_, min_version);
    SSL_CTX_set_max_proto_version(ctx_, max_version);
    SSL_CTX_load_verify_locations(ctx_, (kTlsDir + "ca.pem").c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (!tcp_.connected()) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, tcp_.fd());
    SSL_set_tlsext_host_name(ssl_, "localhost");
    SSL_set1_host(ssl_, "localhost");
    timeval tv{5, 0};
    setsockopt(tcp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ERR_clear_error();
    handshaken_ = SSL_connect(ssl_) == 1;
    if (handshaken_) version_ = SSL_get_version(ssl_);
  }
  ~TlsSocket() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  bool handshaken() const { return handshaken_; }
  const std::string& version() const { return version_; }  // "TLSv1.3"

  bool Send(const std::string& bytes) {
    ERR_clear_error();
    return handshaken_ && SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) ==
                              static_cast<int>(bytes.size());
  }

  // Reads until the server closes (true) or `timeout` passes (false); what came is in `got`.
  bool ReadUntilClosed(std::string& got, milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    timeval tv{0, 50'000};
    setsockopt(tcp_.fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    while (Clock::now() < deadline) {
      ERR_clear_error();
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_WANT_READ) continue;
      if (error == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        continue;
      }
      return true;  // close_notify, end of stream, reset
    }
    return false;
  }

 private:
  Socket tcp_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  bool handshaken_ = false;
  std::string version_;
};

std::vector<Tool> EchoTool() {
  Tool echo;
  echo.name = "echo";
  echo.description = "Returns its text.";
  echo.input_schema = {{"type", "object"}};
  echo.run = [](const Json& args, ToolContext&) {
    ToolResult r;
    r.content = Json::array({{{"type", "text"}, {"text", args.value("text", "")}}});
    return r;
  };
  return {echo};
}

class HttpTlsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (transport_) transport_->Stop();
  }

  void StartServer(HttpOptions options) {
    options.sessions = false;
    options.tls_cert_file = kTlsDir + "server.pem";
    options.tls_key_file = kTlsDir + "server.key";
    server_ = std::make_unique<Server>(ServerOptions{.tools = EchoTool()});
    transport_ = std::make_unique<HttpTransport>(*server_, options);
    base::Result<int> started = transport_->Start();
    ASSERT_TRUE(started.ok()) << started.status().message();
    port_ = *started;
  }

  std::unique_ptr<httplib::SSLClient> NewClient() {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", port_);
    c->set_ca_cert_path((kTlsDir + "ca.pem").c_str());
    c->enable_server_certificate_verification(true);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_read_timeout(10, 0);
    return c;
  }

  httplib::Result Call(httplib::SSLClient& c, const std::string& body) {
    return c.Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, body,
                  "application/json");
  }

  bool ConnectionsReach(std::size_t n, milliseconds timeout = milliseconds(10'000)) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (transport_->connection_count() != n) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return true;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<HttpTransport> transport_;
  int port_ = 0;
};

TEST_F(HttpTlsTest, ServesHttpsWithACertificateTheClientChecks) {
  StartServer({});
  auto client = NewClient();
  httplib::Result r = Call(*client, R"({"jsonrpc":"2.0","id":7,"method":"tools/call",)"
                                    R"("params":{"name":"echo","arguments":{"text":"sealed"}}})");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["result"]["content"][0]["text"], "sealed");

  // A client that trusts only the system's CAs, none of which signed the test CA, refuses.
  httplib::SSLClient untrusting("127.0.0.1", port_);
  untrusting.enable_server_certificate_verification(true);
  httplib::Result refused = untrusting.Post("/mcp", kPing, "application/json");
  EXPECT_FALSE(refused);
  EXPECT_EQ(refused.error(), httplib::Error::SSLServerVerification);
}

TEST_F(HttpTlsTest, TheCppClientSpeaksTlsAndChecksTheServer) {
  StartServer({});
  auto transport = std::make_unique<HttpClientTransport>("127.0.0.1", port_);
  transport->UseTls(kTlsDir + "ca.pem");
  Client c(std::move(transport));
  base::Result<Connection> connected = c.Connect("http_tls_test", "0");
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  base::Result<ToolCallResult> echo = c.CallTool("echo", {{"text", "over tls"}});
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->Text(), "over tls");

  // Plain HTTP to the TLS port, and TLS trusting only the system's CAs: both fail, with a reason.
  Client plain(std::make_unique<HttpClientTransport>("127.0.0.1", port_));
  EXPECT_FALSE(plain.Connect("http_tls_test", "0").ok());
  auto untrusting = std::make_unique<HttpClientTransport>("127.0.0.1", port_);
  untrusting->UseTls("");
  Client refused(std::move(untrusting));
  base::Result<Connection> r = refused.Connect("http_tls_test", "0");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("SSLServerVerification"), std::string::npos)
      << r.status().ToString();
}

TEST_F(HttpTlsTest, NothingIsAnsweredInClearOnATlsPort) {
  StartServer({});
  Socket plain(port_);
  ASSERT_TRUE(plain.Send(Post(kPing)));
  std::string got;
  EXPECT_TRUE(plain.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_NE(got.rfind("HTTP/", 0), 0u) << got;  // at most a TLS alert, never an HTTP answer
  EXPECT_EQ(got.find("jsonrpc"), std::string::npos) << got;
  EXPECT_TRUE(ConnectionsReach(0));
}

TEST_F(HttpTlsTest, OnlyTls12AndLater) {
  StartServer({});
  TlsSocket tls13(port_);
  ASSERT_TRUE(tls13.handshaken());
  EXPECT_EQ(tls13.version(), "TLSv1.3");
  TlsSocket tls12(port_, TLS1_VERSION, TLS1_2_VERSION);
  ASSERT_TRUE(tls12.handshaken());
  EXPECT_EQ(tls12.version(), "TLSv1.2");
  ASSERT_TRUE(tls12.Send(Post(kPing, "Connection: close\r\n")));
  std::string got;
  EXPECT_TRUE(tls12.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  for (int version : {TLS1_1_VERSION, TLS1_VERSION}) {
    TlsSocket old(port_, TLS1_VERSION, version);
    EXPECT_FALSE(old.handshaken()) << "TLS version 0x" << std::hex << version << " was accepted";
  }
}

TEST_F(HttpTlsTest, TheHandshakeIsBoundByTheHeaderTimeout) {
  StartServer({.header_timeout = milliseconds(200)});
  Socket silent(port_);  // connects, never says hello
  Socket half(port_);    // half a TLS record header, then nothing
  ASSERT_TRUE(half.Send(std::string("\x16\x03\x01\x02", 4)));
  for (Socket* s : {&silent, &half}) {
    std::string got;
    const Clock::time_point start = Clock::now();
    EXPECT_TRUE(s->ReadUntilClosed(got, milliseconds(5000)));
    EXPECT_LT(Clock::now() - start, milliseconds(3000));
  }
  EXPECT_TRUE(ConnectionsReach(0));
}

TEST_F(HttpTlsTest, HeaderTimeoutClosesASlowHeaderAndASlowBodyOverTls) {
  StartServer({.header_timeout = milliseconds(200)});
  TlsSocket slow_header(port_);
  ASSERT_TRUE(slow_header.handshaken());
  ASSERT_TRUE(slow_header.Send(kHalfHeader));
  std::string got;
  EXPECT_TRUE(slow_header.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got, "");  // closed without an answer

  TlsSocket slow_body(port_);
  ASSERT_TRUE(slow_body.handshaken());
  const std::string request = Post(kPing);
  ASSERT_TRUE(slow_body.Send(request.substr(0, request.size() - 10)));
  got.clear();
  EXPECT_TRUE(slow_body.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_EQ(got, "");
  EXPECT_TRUE(ConnectionsReach(0));
}

TEST_F(HttpTlsTest, IdleTimeoutClosesAKeptAliveTlsConnection) {
  StartServer({.idle_timeout = milliseconds(200)});
  TlsSocket s(port_);
  ASSERT_TRUE(s.handshaken());
  ASSERT_TRUE(s.Send(Post(kPing)));
  std::string got;
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(s.ReadUntilClosed(got, milliseconds(5000)));
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_EQ(got.find("Connection: close"), std::string::npos) << got;  // kept alive, then idle
}

TEST_F(HttpTlsTest, PastTheConnectionCapsA503OverTlsAtOnce) {
  StartServer({.max_connections = 4, .max_connections_per_address = 3});
  std::vector<std::unique_ptr<TlsSocket>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<TlsSocket>(port_));
    ASSERT_TRUE(held.back()->handshaken()) << i;
  }
  ASSERT_TRUE(ConnectionsReach(3));
  {
    TlsSocket fourth(port_);  // the address's cap
    ASSERT_TRUE(fourth.handshaken());
    ASSERT_TRUE(fourth.Send(Post(kPing)));
    std::string got;
    const Clock::time_point start = Clock::now();
    EXPECT_TRUE(fourth.ReadUntilClosed(got, milliseconds(5000)));
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
    EXPECT_EQ(got.rfind("HTTP/1.1 503 Service Unavailable\r\n", 0), 0u) << got;
    EXPECT_NE(got.find("\r\nRetry-After: 1\r\n"), std::string::npos) << got;
    EXPECT_NE(got.find("this client address holds its maximum of 3 connections"),
              std::string::npos)
        << got;
  }
  EXPECT_EQ(transport_->connection_count(), 3u);  // refused connections are not counted
  held.pop_back();
  ASSERT_TRUE(ConnectionsReach(2));
  auto client = NewClient();
  httplib::Result r = Call(*client, kPing);
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpTlsTest, FleetAndHalfOpenConnectionsDoNotKeepANewClientWaiting) {
  ASSERT_TRUE(RaiseFileLimit(4 * 1300)) << "needs about 5,200 file descriptors (ulimit -n)";
  StartServer({.event_threads = 2,
               .header_timeout = milliseconds(60'000),
               .idle_timeout = milliseconds(60'000)});
  // 1,000 keep-alive TLS clients that each made one call and now sit idle on their connection.
  std::vector<std::unique_ptr<httplib::SSLClient>> fleet;
  for (int i = 0; i < 1000; ++i) {
    fleet.push_back(NewClient());
    httplib::Result r = Call(*fleet.back(), kPing);
    ASSERT_TRUE(r) << "fleet client " << i << ": " << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  // 128 connections that never start the handshake, 128 that finished it and sent half a header.
  std::vector<std::unique_ptr<Socket>> silent;
  std::vector<std::unique_ptr<TlsSocket>> half;
  for (int i = 0; i < 128; ++i) {
    silent.push_back(std::make_unique<Socket>(port_));
    ASSERT_TRUE(silent.back()->connected()) << i;
    half.push_back(std::make_unique<TlsSocket>(port_));
    ASSERT_TRUE(half.back()->handshaken()) << i;
    ASSERT_TRUE(half.back()->Send(kHalfHeader)) << i;
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
  EXPECT_EQ(transport_->connection_count(), 1257u);
  r = Call(*fleet.front(), kPing);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(transport_->connection_count(), 1257u);  // the same connection, not a new one
}

TEST_F(HttpTlsTest, StopDoesNotWaitForIdleTlsClients) {
  StartServer({});
  std::vector<std::unique_ptr<TlsSocket>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<TlsSocket>(port_));
    ASSERT_TRUE(idle.back()->handshaken());
    ASSERT_TRUE(idle.back()->Send(kHalfHeader));
  }
  Socket no_hello(port_);
  ASSERT_TRUE(ConnectionsReach(4));
  const Clock::time_point start = Clock::now();
  transport_->Stop();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  EXPECT_EQ(transport_->connection_count(), 0u);
}

TEST(HttpTlsStartTest, RefusesACertificateOrKeyItCannotUse) {
  Server server(ServerOptions{.tools = EchoTool()});
  auto start = [&](const std::string& cert, const std::string& key) {
    HttpTransport t(server, HttpOptions{.tls_cert_file = cert, .tls_key_file = key});
    base::Result<int> r = t.Start();
    return r.ok() ? std::string("started") : r.status().message();
  };
  EXPECT_EQ(start(kTlsDir + "server.pem", ""), "TLS needs both a certificate chain and its key");
  EXPECT_EQ(start("", kTlsDir + "server.key"), "TLS needs both a certificate chain and its key");
  EXPECT_EQ(start(kTlsDir + "absent.pem", kTlsDir + "server.key")
                .rfind("cannot use the TLS certificate chain in " + kTlsDir + "absent.pem: ", 0),
            0u);
  EXPECT_EQ(start(kTlsDir + "server.key", kTlsDir + "server.key")
                .rfind("cannot use the TLS certificate chain in ", 0),
            0u);
  EXPECT_EQ(start(kTlsDir + "server.pem", kTlsDir + "ca.pem").rfind("cannot use the TLS key in ", 0),
            0u);
  const std::string mismatch = start(kTlsDir + "server.pem", kTlsDir + "other.key");
  EXPECT_EQ(mismatch.rfind("cannot use the TLS key in " + kTlsDir + "other.key: ", 0), 0u)
      << mismatch;
  EXPECT_EQ(start(kTlsDir + "server.pem", kTlsDir + "server.key"), "started");
}

}  // namespace
}  // namespace slurm_rca::mcp

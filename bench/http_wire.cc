#include "bench/http_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <memory>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>

namespace slurm_rca::bench {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

using Clock = std::chrono::steady_clock;
constexpr size_t kHalfBytes = 40;
constexpr auto kReopenDelay = std::chrono::milliseconds(100);

sockaddr_in Loopback(int port) {
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Serializes a whole request (head and body) as it goes on the wire.
std::string Bytes(const http::request<http::string_body>& request) {
  std::ostringstream out;
  out << request;
  return std::move(out).str();
}

// Parses `bytes` as one answer with Beast's response parser; whether it is complete. `closed`:
// the server closed the connection after them, which ends a body sent with neither a
// Content-Length nor chunks. Re-parses from the start on every call, as the callers keep the
// bytes: the answers here are small (one call each; a held connection reads one at a time).
bool Parse(std::string_view bytes, bool closed, HttpAnswer* answer) {
  *answer = HttpAnswer();
  http::response_parser<http::string_body> parser;
  parser.header_limit(std::numeric_limits<std::uint32_t>::max());
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // boost::none means 0 in 1.74
  beast::error_code ec;
  size_t used = 0;
  // The head alone first (eager off), so that `head` is exactly the bytes the parser took for it.
  while (!ec && !parser.is_header_done()) {
    used += parser.put(net::buffer(bytes.data() + used, bytes.size() - used), ec);
  }
  if (!ec) {
    answer->head = std::string(bytes.substr(0, used));
    parser.eager(true);
  }
  while (!ec && !parser.is_done() && used < bytes.size()) {
    used += parser.put(net::buffer(bytes.data() + used, bytes.size() - used), ec);
  }
  if (!ec && !parser.is_done()) ec = http::error::need_more;  // a body put stops at 0 bytes
  if (ec == http::error::need_more && closed && parser.got_some()) parser.put_eof(ec);
  if (ec == http::error::need_more || ec == http::error::partial_message) return false;
  if (ec) {
    *answer = HttpAnswer();  // status 0: unparseable, yet complete so that nobody waits on it
    return true;
  }
  const http::response<http::string_body>& message = parser.get();
  answer->status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    answer->headers.emplace_back(field.name_string(), field.value());
  }
  answer->body = message.body();
  return true;
}

}  // namespace

std::string McpPost(int port, const std::string& body, const std::string& session,
                    const std::string& bearer) {
  http::request<http::string_body> request(http::verb::post, "/mcp", 11);
  request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json, text/event-stream");
  if (body.find("\"method\":\"initialize\"") == std::string::npos) {
    request.set("MCP-Protocol-Version", kProtocolVersion);
  }
  if (!session.empty()) request.set("Mcp-Session-Id", session);
  if (!bearer.empty()) request.set(http::field::authorization, "Bearer " + bearer);
  request.body() = body;
  request.prepare_payload();
  return Bytes(request);
}

std::string McpDelete(int port, const std::string& session, const std::string& bearer) {
  http::request<http::string_body> request(http::verb::delete_, "/mcp", 11);
  request.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  request.set("MCP-Protocol-Version", kProtocolVersion);
  request.set("Mcp-Session-Id", session);
  if (!bearer.empty()) request.set(http::field::authorization, "Bearer " + bearer);
  request.content_length(0);  // prepare_payload would send none for an empty DELETE
  return Bytes(request);
}

std::string HttpAnswer::Header(const std::string& name) const {
  for (const auto& [field, value] : headers) {
    if (field.size() == name.size() && strncasecmp(field.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return "";
}

bool ParseAnswer(const std::string& bytes, HttpAnswer* answer) {
  return Parse(bytes, /*closed=*/false, answer);
}

base::Result<HttpAnswer> Exchange(int port, const std::string& request,
                                  std::chrono::milliseconds timeout, bool tls) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return base::Status::Unavailable("socket: " + std::string(std::strerror(errno)));
  timeval tv = {.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                .tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  const sockaddr_in addr = Loopback(port);
  std::string error;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    error = "connect to 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
  }
  // Over TLS the same loop reads and writes through OpenSSL (one context for the process).
  static SSL_CTX* const context = [] {
    SSL_CTX* c = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(c, SSL_VERIFY_NONE, nullptr);
    return c;
  }();
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(tls ? SSL_new(context) : nullptr, &SSL_free);
  if (tls && error.empty()) {
    SSL_set_fd(ssl.get(), fd);
    if (SSL_connect(ssl.get()) != 1) error = "TLS handshake with 127.0.0.1:" + std::to_string(port) + " failed";
  }
  auto send_some = [&](const char* data, size_t size) -> ssize_t {
    if (!tls) return send(fd, data, size, MSG_NOSIGNAL);
    const int n = SSL_write(ssl.get(), data, static_cast<int>(size));
    return n > 0 ? n : -1;
  };
  auto recv_some = [&](char* data, size_t size) -> ssize_t {
    if (!tls) return recv(fd, data, size, 0);
    const int n = SSL_read(ssl.get(), data, static_cast<int>(size));
    if (n > 0) return n;
    return SSL_get_error(ssl.get(), n) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
  };
  for (size_t sent = 0; error.empty() && sent < request.size();) {
    const ssize_t n = send_some(request.data() + sent, request.size() - sent);
    if (n <= 0) error = "send: " + std::string(std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string got;
  HttpAnswer answer;
  char buf[65536];
  while (error.empty() && !ParseAnswer(got, &answer)) {
    const ssize_t n = recv_some(buf, sizeof buf);
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
    } else if (n == 0 && Parse(got, /*closed=*/true, &answer)) {
      break;  // a body with no length ends at the close
    } else {
      error = n == 0 ? "the server closed the connection before a whole answer"
                     : "recv: " + std::string(std::strerror(errno));
    }
  }
  ssl.reset();
  close(fd);
  if (!error.empty()) return base::Status::Unavailable(error);
  return answer;
}

// ---------------------------------------------------------------- held connections

HeldConnections::HeldConnections(int port, Mode mode, std::string request, int n)
    : port_(port), mode_(mode), request_(std::move(request)), conns_(static_cast<size_t>(n)) {}

HeldConnections::~HeldConnections() {
  Stop();
  for (Conn& c : conns_) {
    if (c.fd >= 0) close(c.fd);
  }
}

void HeldConnections::Connect(Conn& c) {
  c.sent = 0;
  c.got.clear();
  c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const sockaddr_in addr = Loopback(port_);
  if (c.fd >= 0 && (connect(c.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 ||
                    errno == EINPROGRESS)) {
    c.state = Conn::State::kConnecting;
    return;
  }
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
  c.state = Conn::State::kClosed;
  c.reopen_at = Clock::now() + kReopenDelay;
}

// One step of a connection's life on the events poll reported.
void HeldConnections::Drive(Conn& c, short revents, bool after_open) {
  auto closed = [&](bool by_server) {
    close(c.fd);
    c.fd = -1;
    c.state = Conn::State::kClosed;
    c.reopen_at = Clock::now() + kReopenDelay;
    if (by_server && after_open) ++closed_by_server_;
  };
  if (c.state == Conn::State::kConnecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return closed(false);
    c.state = Conn::State::kSending;
  }
  if (c.state == Conn::State::kSending) {
    const size_t limit =
        mode_ == Mode::kHalf ? std::min(kHalfBytes, request_.size()) : request_.size();
    const ssize_t n = send(c.fd, request_.data() + c.sent, limit - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) return closed(true);
    if (n > 0) c.sent += static_cast<size_t>(n);
    if (c.sent == limit) c.state = mode_ == Mode::kHalf ? Conn::State::kHeld : Conn::State::kAnswer;
    return;
  }
  if (!(revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP))) return;
  char buf[65536];
  const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno != EAGAIN)) return closed(true);
  if (n < 0 || c.state != Conn::State::kAnswer) return;  // a held connection's bytes: dropped
  c.got.append(buf, static_cast<size_t>(n));
  HttpAnswer answer;
  if (ParseAnswer(c.got, &answer)) {
    if (answer.status != 200) ++answered_bad_;
    c.got.clear();
    c.state = Conn::State::kHeld;
  }
}

void HeldConnections::Loop(Clock::time_point until, bool after_open) {
  std::vector<pollfd> fds;
  std::vector<Conn*> of;
  while (!stop_.load() && Clock::now() < until) {
    fds.clear();
    of.clear();
    bool all_ready = true;
    const auto now = Clock::now();
    for (Conn& c : conns_) {
      if (c.state == Conn::State::kClosed && now >= c.reopen_at) {
        if (after_open) ++reopened_;
        Connect(c);
      }
      if (c.state != Conn::State::kHeld) all_ready = false;
      if (c.state == Conn::State::kClosed) continue;
      const bool out = c.state == Conn::State::kConnecting || c.state == Conn::State::kSending;
      fds.push_back({c.fd, static_cast<short>(out ? POLLOUT : POLLIN | POLLRDHUP), 0});
      of.push_back(&c);
    }
    if (all_ready && !after_open) return;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now);
    const int wait_ms = static_cast<int>(std::clamp<long>(left.count(), 0, 100));
    if (poll(fds.data(), fds.size(), wait_ms) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents) Drive(*of[i], fds[i].revents, after_open);
    }
  }
}

HeldConnections::Counts HeldConnections::Open(std::chrono::milliseconds deadline) {
  for (Conn& c : conns_) Connect(c);
  Loop(Clock::now() + deadline, /*after_open=*/false);
  return Tally();
}

void HeldConnections::KeepOpen() {
  if (keeper_.joinable()) return;
  stop_.store(false);
  keeper_ = std::thread([this] {
    Loop(Clock::time_point::max(), /*after_open=*/true);
    timespec ts = {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    cpu_seconds_ = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  });
}

HeldConnections::Counts HeldConnections::Stop() {
  stop_.store(true);
  if (keeper_.joinable()) keeper_.join();
  return Tally();
}

HeldConnections::Counts HeldConnections::Tally() const {
  Counts c;
  c.wanted = static_cast<int>(conns_.size());
  for (const Conn& conn : conns_) {
    if (conn.state != Conn::State::kClosed) ++c.open;
    if (conn.state == Conn::State::kHeld) ++c.ready;
  }
  c.answered_bad = answered_bad_;
  c.closed_by_server = closed_by_server_;
  c.reopened = reopened_;
  c.cpu_seconds = cpu_seconds_;
  return c;
}

}  // namespace slurm_rca::bench

#include "bench/http_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace slurm_rca::bench {

namespace {

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

std::string HeaderIn(const std::string& head, const std::string& name) {
  size_t at = head.find("\r\n");
  while (at != std::string::npos && at + 2 < head.size()) {
    const size_t line = at + 2;
    const size_t end = head.find("\r\n", line);
    const size_t colon = head.find(':', line);
    if (colon != std::string::npos && (end == std::string::npos || colon < end) &&
        colon - line == name.size() &&
        strncasecmp(head.c_str() + line, name.c_str(), name.size()) == 0) {
      size_t v = colon + 1;
      while (v < head.size() && head[v] == ' ') ++v;
      return head.substr(v, (end == std::string::npos ? head.size() : end) - v);
    }
    at = end;
  }
  return "";
}

// De-chunks `bytes` from `at`; false while the last chunk has not arrived.
bool Dechunk(const std::string& bytes, size_t at, std::string* body, bool* malformed) {
  body->clear();
  while (true) {
    const size_t eol = bytes.find("\r\n", at);
    if (eol == std::string::npos) return false;
    char* end = nullptr;
    const unsigned long size = std::strtoul(bytes.c_str() + at, &end, 16);
    if (end == bytes.c_str() + at) {
      *malformed = true;
      return true;
    }
    if (size == 0) return bytes.find("\r\n", eol + 2) != std::string::npos;  // the empty trailer
    if (bytes.size() < eol + 2 + size + 2) return false;
    body->append(bytes, eol + 2, size);
    at = eol + 2 + size + 2;
  }
}

}  // namespace

std::string McpPost(int port, const std::string& body, const std::string& session) {
  std::string r = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                  "\r\nContent-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n";
  if (body.find("\"method\":\"initialize\"") == std::string::npos) {
    r += std::string("MCP-Protocol-Version: ") + kProtocolVersion + "\r\n";
  }
  if (!session.empty()) r += "Mcp-Session-Id: " + session + "\r\n";
  return r + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string McpDelete(int port, const std::string& session) {
  return "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nMCP-Protocol-Version: " + kProtocolVersion + "\r\nMcp-Session-Id: " + session +
         "\r\nContent-Length: 0\r\n\r\n";
}

std::string HttpAnswer::Header(const std::string& name) const { return HeaderIn(head, name); }

bool ParseAnswer(const std::string& bytes, HttpAnswer* answer) {
  const size_t end = bytes.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  answer->head = bytes.substr(0, end);
  answer->status = 0;
  if (answer->head.rfind("HTTP/1.", 0) == 0 && answer->head.size() >= 12) {
    answer->status = std::atoi(answer->head.c_str() + 9);
  }
  if (answer->status == 0) return true;
  if (strcasecmp(HeaderIn(answer->head, "Transfer-Encoding").c_str(), "chunked") == 0) {
    bool malformed = false;
    const bool done = Dechunk(bytes, end + 4, &answer->body, &malformed);
    if (malformed) answer->status = 0;
    return done;
  }
  const std::string length = HeaderIn(answer->head, "Content-Length");
  const size_t n = length.empty() ? 0 : std::strtoul(length.c_str(), nullptr, 10);
  if (bytes.size() < end + 4 + n) return false;
  answer->body = bytes.substr(end + 4, n);
  return true;
}

base::Result<HttpAnswer> Exchange(int port, const std::string& request,
                                  std::chrono::milliseconds timeout) {
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
  for (size_t sent = 0; error.empty() && sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) error = "send: " + std::string(std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string got;
  HttpAnswer answer;
  char buf[65536];
  while (error.empty() && !ParseAnswer(got, &answer)) {
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
    } else if (n == 0 && got.find("\r\n\r\n") != std::string::npos) {
      answer.body = got.substr(got.find("\r\n\r\n") + 4);  // no length: the body ends at close
      break;
    } else {
      error = n == 0 ? "the server closed the connection before answering"
                     : "recv: " + std::string(std::strerror(errno));
    }
  }
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

// Raw sockets for the HTTP transport's tests (http_limits_test, http_tls_test): a client that
// must misbehave (send half a request, hold a connection, never read) cannot be an HTTP library.
#ifndef SLURM_RCA_MCP_PROTOCOL_HTTP_TEST_SOCKET_H_
#define SLURM_RCA_MCP_PROTOCOL_HTTP_TEST_SOCKET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>

namespace slurm_rca::mcp::http_testing {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// A socket, closed when it goes.
class Socket {
 public:
  explicit Socket(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }
  bool Send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until the server closes (true) or `timeout` passes (false); what came is in `got`.
  bool ReadUntilClosed(std::string& got, milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    char buf[4096];
    while (Clock::now() < deadline) {
      timeval tv{0, 50'000};
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno == ECONNRESET) {
        return true;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return true;
      }
    }
    return false;
  }
  // Reads until `bytes` holds `marker` or `timeout` passes.
  bool ReadUntil(std::string& got, const std::string& marker, milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    char buf[4096];
    while (got.find(marker) == std::string::npos && Clock::now() < deadline) {
      timeval tv{0, 50'000};
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) got.append(buf, static_cast<std::size_t>(n));
      if (n == 0) break;
    }
    return got.find(marker) != std::string::npos;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

inline std::string Post(const std::string& body, const std::string& extra_headers = "") {
  return "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n"
         "Content-Type: application/json\r\n" +
         extra_headers + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline const std::string kPing = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
inline const std::string kHalfHeader = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty";

// The file-descriptor limit, raised to what `need` takes if the hard limit allows.
inline bool RaiseFileLimit(rlim_t need) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur >= need) return true;
  if (limit.rlim_max < need) return false;
  limit.rlim_cur = need;
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

}  // namespace slurm_rca::mcp::http_testing

#endif  // SLURM_RCA_MCP_PROTOCOL_HTTP_TEST_SOCKET_H_

// HTTP/1.1 on the wire for mcp_bench: an MCP POST as bytes, an answer read from bytes, and
// connections held open beside a measured run (the slowloris and fleet rows). Requests are built
// and answers parsed by Boost.Beast's HTTP messages and parser; the sockets are plain.
//
//   std::string request = McpPost(port, body, session);   // session "" sends none
//   base::Result<HttpAnswer> a = Exchange(port, request, std::chrono::seconds(10));
//   if (a.ok() && a->status == 200) ... a->Header("mcp-session-id") ...
//
//   HeldConnections fleet(port, HeldConnections::Mode::kIdle, request, 1000);
//   HeldConnections::Counts c = fleet.Open(std::chrono::seconds(20));  // opened, ready
//   fleet.KeepOpen();     // a thread reopens what the server closes
//   ... measure ...
//   HeldConnections::Counts end = fleet.Stop();   // closed_by_server, reopened, cpu_seconds
//
// Loopback only (127.0.0.1). Nothing here parses JSON; an answer is complete when its
// Content-Length bytes or its last chunk have arrived, or, with neither, when the server closes
// the connection (Exchange). A held connection never closes itself while held; the destructor
// closes them all.
#ifndef SLURM_RCA_BENCH_HTTP_WIRE_H_
#define SLURM_RCA_BENCH_HTTP_WIRE_H_

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"

namespace slurm_rca::bench {

inline constexpr char kProtocolVersion[] = "2025-06-18";

// A POST /mcp with a JSON body, the Accept header MCP asks for, MCP-Protocol-Version unless the
// body is an initialize, and Mcp-Session-Id when `session` is not empty.
std::string McpPost(int port, const std::string& body, const std::string& session,
                    const std::string& bearer = "");
// A DELETE /mcp that ends `session`.
std::string McpDelete(int port, const std::string& session, const std::string& bearer = "");

struct HttpAnswer {
  int status = 0;
  std::string head;  // the status line and headers, as sent (with the empty line)
  std::vector<std::pair<std::string, std::string>> headers;  // name and value, in order sent
  std::string body;                                          // de-chunked
  // The value of the first header named `name` (any case), "" when absent.
  std::string Header(const std::string& name) const;
};

// Whether `bytes` hold a whole answer; fills *answer when they do. An unparseable answer (status
// line, header, chunk size) counts as complete with status 0, so that a caller stops waiting. An
// answer with neither Content-Length nor chunks is not complete here: its body ends at the close.
bool ParseAnswer(const std::string& bytes, HttpAnswer* answer);

// One request on a fresh connection, its answer read whole, the connection closed. Fails (Status
// Unavailable) on a refused connection, a closed one before the answer, or the timeout. `tls`:
// over TLS (OpenSSL; the server's certificate is not checked: a loopback benchmark).
base::Result<HttpAnswer> Exchange(int port, const std::string& request,
                                  std::chrono::milliseconds timeout, bool tls = false);

// N connections to 127.0.0.1:port, held open. kHalf sends the first 40 bytes of `request` and
// stops (a slowloris client); kIdle sends all of it, reads its answer and stays open (an idle
// keep-alive client). One thread at a time calls Open, KeepOpen and Stop, in that order.
class HeldConnections {
 public:
  enum class Mode { kHalf, kIdle };
  struct Counts {
    int wanted = 0;
    int open = 0;               // connected and not closed by the server
    int ready = 0;              // kHalf: the prefix sent; kIdle: answered and now idle
    long answered_bad = 0;      // kIdle: answers with a status other than 200
    long closed_by_server = 0;  // since Open returned
    long reopened = 0;          // since Open returned
    double cpu_seconds = 0;     // the keeping thread's own CPU
  };

  HeldConnections(int port, Mode mode, std::string request, int n);
  ~HeldConnections();
  HeldConnections(const HeldConnections&) = delete;
  HeldConnections& operator=(const HeldConnections&) = delete;

  // Connects all N and drives them until every one is ready or `deadline` passes; returns where
  // they stand. A server that answers slowly (one thread per connection) leaves some not ready.
  Counts Open(std::chrono::milliseconds deadline);
  // Starts a thread that keeps the connections: one the server closes is reopened 100 ms later
  // and driven to ready again, as a client that reconnects would.
  void KeepOpen();
  // Stops the thread; the counts since Open. The connections stay open until destruction.
  Counts Stop();

 private:
  struct Conn {
    int fd = -1;
    enum class State { kClosed, kConnecting, kSending, kAnswer, kHeld } state = State::kClosed;
    size_t sent = 0;
    std::string got;
    std::chrono::steady_clock::time_point reopen_at;
  };
  void Connect(Conn& c);
  void Drive(Conn& c, short revents, bool after_open);
  void Loop(std::chrono::steady_clock::time_point until, bool after_open);
  Counts Tally() const;

  const int port_;
  const Mode mode_;
  const std::string request_;
  std::vector<Conn> conns_;
  long answered_bad_ = 0, closed_by_server_ = 0, reopened_ = 0;
  double cpu_seconds_ = 0;
  std::atomic<bool> stop_{false};
  std::thread keeper_;
};

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_HTTP_WIRE_H_

// The HTTP/1.1 serving core of slurm-mcp's two listeners, the MCP endpoint (http_transport.cc)
// and the metrics listener (metrics.cc); internal to mcp_protocol. Boost.Beast on one Asio event
// thread: no thread is held by a connection, idle, slow or half-open.
//
//   class Endpoint : public http_core::Handler { ... };   // what to answer
//   http_core::HttpCore core(endpoint, http_core::Limits{...});
//   base::Result<int> port = core.Bind("127.0.0.1", 0);
//   std::thread serving([&] { core.Run(); });            // until Stop()
//   ...
//   core.Stop();
//
// The event loop accepts, reads each request's header (Limits::header_timeout from its first
// byte), asks Handler::OnHeader, reads the body if it said so (header_timeout again), asks
// Handler::OnRequest, and writes what comes back. A Deferred answer runs on the connection's
// strand, or on a pool of Limits::workers threads when it may wait (0 workers: on the strand
// too, for handlers whose answers never wait); either way it answers through an Exchange, whose
// writes are done on the connection's strand, in order. Connections are kept alive
// (idle_timeout between requests). Past max_connections (or max_per_address from one client
// address) a new connection gets Handler::Error(503) with Retry-After: 1 at once and is closed
// without its request being read. The core answers by itself, through Handler::Error: 413 (a
// body over max_body_bytes), 431 (a header over 16 KiB), 400 (a malformed request); each closes
// the connection. Expect: 100-continue is honoured; pipelined requests are answered in order.
#ifndef SLURM_RCA_MCP_PROTOCOL_HTTP_CORE_H_
#define SLURM_RCA_MCP_PROTOCOL_HTTP_CORE_H_

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "base/status.h"

namespace slurm_rca::mcp {
class Metrics;
}

namespace slurm_rca::mcp::http_core {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using RequestHeader = http::request_header<>;
using Response = http::response<http::string_body>;
using StreamHead = http::response<http::empty_body>;  // the head of a chunked stream

// One request's answer, given on any thread; written on the connection's strand, in order.
class Exchange {
 public:
  virtual ~Exchange() = default;
  // The whole answer. Connection: close in it (keep_alive(false)) closes the connection after.
  virtual void Respond(Response res) = 0;
  // An answer written as it is produced: the head (chunked), then each chunk, then the end.
  virtual void BeginStream(StreamHead head) = 0;
  // False once the client is gone: nothing more will reach it.
  virtual bool Event(std::string data) = 0;
  virtual void EndStream() = 0;
};

// An answer given later: `run` answers through the Exchange exactly once (Respond, or a stream).
struct Deferred {
  std::function<void(Exchange&)> run;
  bool on_worker = false;  // it may wait (a tool call): on the worker pool, not the event loop
};

// What a listener answers. Called on the event threads: for different connections at once, and
// at once with Deferred runs.
class Handler {
 public:
  virtual ~Handler() = default;
  // On the header alone: the answer (its body, if any, is then not read and the connection is
  // closed after), or nullopt to read the body and call OnRequest. `content_length`: declared.
  virtual std::optional<Response> OnHeader(const RequestHeader& req,
                                           std::optional<std::uint64_t> content_length) = 0;
  virtual std::variant<Response, Deferred> OnRequest(const Request& req) = 0;
  // The answer to an error the core finds itself, with its status and what to say.
  virtual Response Error(int status, const std::string& message) = 0;
};

struct Limits {
  std::size_t max_body_bytes = 1 << 20;
  int workers = 8;  // 0: no pool
  int event_threads = 1;  // threads that run the event loop (connections spread over them)
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds idle_timeout{60'000};
  std::size_t max_connections = 4096;
  std::size_t max_per_address = 2048;
  // Counts connections opened and closed (refused ones aside) and 503 refusals; may be null.
  Metrics* metrics = nullptr;
  // TLS (both set, PEM files): every connection is TLS 1.2 or later, its handshake under
  // header_timeout; the chain (leaf first) and its key are read once, by Bind(). Neither: HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
};

class HttpCore {
 public:
  // `handler` must outlive the core.
  HttpCore(Handler& handler, Limits limits);
  ~HttpCore();  // Stop()
  HttpCore(const HttpCore&) = delete;
  HttpCore& operator=(const HttpCore&) = delete;

  // Listens on host:port (0: a free port); the bound port. An invalid argument for limits it
  // refuses, a TLS certificate or key that cannot be used, or a second bind; unavailable
  // "cannot bind HOST:PORT".
  base::Result<int> Bind(const std::string& host, int port);
  // Serves on the calling thread until Stop(). Only after a successful Bind().
  void Run();
  // Stops accepting, closes every connection that is not being answered, waits for those that
  // are (their responses are written with Connection: close). Idempotent; from another thread
  // than Run()'s; not for signal handlers.
  void Stop();
  std::size_t connection_count() const;  // refused ones aside

  // The bytes a client sent on one connection, answered without a socket on the calling thread
  // (Deferred runs too), at most `max_requests` requests: the bytes written back. For fuzzers.
  std::string AnswerBytes(std::string_view requests, int max_requests);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace slurm_rca::mcp::http_core

#endif  // SLURM_RCA_MCP_PROTOCOL_HTTP_CORE_H_

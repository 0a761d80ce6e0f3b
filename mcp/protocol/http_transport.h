// Streamable HTTP transport (MCP 2025-11-25) for Server: one endpoint, POST only, JSON responses,
// SSE only while a request has notifications to send.
//
//   Server server(ServerOptions{...});
//   HttpTransport http(server, HttpOptions{.port = 8765, .token = secret});
//   base::Result<int> port = http.Start();        // binds, serves on a background thread
//   if (!port.ok()) die(port.status().message());
//   ...
//   http.Stop();
// or, in the binary: `http.Serve(on_bound)` serves on the calling thread until Stop() is called
// from another thread.
//
// Serving (mcp/protocol/http_core.h: Boost.Beast, an event loop run by event_threads threads,
// each connection on a strand): no thread is held by a connection. The event loop accepts, reads
// and parses requests, screens them, answers everything but tools/call itself and writes every
// response; a tools/call (which may wait on Slurm up to the back-end's read timeout) runs on a
// pool of HttpOptions::workers threads and its answer, or each SSE event of it, is handed back
// to the connection's strand (with workers = 0, it runs on the strand itself). Connections are
// kept alive between requests.
// Limits (HttpOptions, each a `serve` flag of slurm-mcp):
//   header_timeout   a request's header must arrive within it of its first byte, and then its
//                    body within it again; else the connection is closed (slowloris);
//   idle_timeout     a kept-alive connection with no request for this long is closed, and a
//                    response the client does not read for this long is abandoned;
//   max_connections  past it a new connection gets 503 with Retry-After at once and is closed,
//                    without its request being read; max_connections_per_address likewise per
//                    client address; refused connections are not counted against either;
//   max_body_bytes   413, and the connection is closed.
//
// Wire behaviour (path is HttpOptions::path, default /mcp):
//   POST  one JSON-RPC message. A request gets `application/json`, except that a client which
//         accepts `text/event-stream` gets an SSE stream when the request sends notifications:
//         a tools/call with params._meta.progressToken streams them live (notifications, then
//         the response, then end of stream); any other request that logged is answered with the
//         buffered notifications and the response as one SSE body. Notifications and client
//         responses get 202 with an empty body; a request cancelled while it ran gets 202 too.
//   GET   405 (no server-initiated stream). DELETE ends the session named by Mcp-Session-Id.
// Every request is checked first, before its body is read, for Host and Origin (loopback names
// with any port, plus HttpOptions::host and allowed_hosts; a missing Origin is fine) → 403, then
// the bearer token → 401. Bodies over max_body_bytes → 413; Accept without application/json →
// 406; an unsupported MCP-Protocol-Version → 400; a malformed HTTP request → 400 and the
// connection is closed. Transport errors carry an id-less JSON-RPC error body.
//
// Sessions: the initialize response carries Mcp-Session-Id; later requests must send it
// (missing → 400, unknown, ended or evicted → 404). With sessions disabled every POST runs in a
// fresh Session that counts as initialized, with the MCP-Protocol-Version header's revision
// (2025-03-26 when absent); notifications/cancelled then cannot reach a running call, and
// logging/setLevel lasts for one request only.
//
// The bearer token is either a static shared secret (`token`), compared in constant time and never
// logged, or an OAuth access token that `authorize` decides on (slurm-mcp: mcp/auth); the transport
// knows nothing of JWTs. Binding to a non-loopback address requires one or the other, and TLS
// (tls_cert_file) or a proxy that terminates it (tls_terminated_by_proxy), so that no token
// crosses a network in clear. Nothing is written to stdout.
#ifndef SLURM_RCA_MCP_PROTOCOL_HTTP_TRANSPORT_H_
#define SLURM_RCA_MCP_PROTOCOL_HTTP_TRANSPORT_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "mcp/protocol/metrics.h"
#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {

// What an authorizer (slurm-mcp: an OAuth access token checked by mcp/auth) says of a request's
// Authorization header. status 0: allowed, as `principal` (mapped to the Slurm `user`, empty when
// none) with `scopes`. Otherwise the refusal:
// 401 (no or a bad token), 403 (insufficient scope), 503 (the issuer's keys are unavailable),
// with its WWW-Authenticate value and a message for the body (never the token).
struct AuthOutcome {
  int status = 0;
  std::string www_authenticate;
  std::string message;
  std::string principal;
  std::string user;
  std::set<std::string> scopes;
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port, reported by Start()
  std::string path = "/mcp";
  std::optional<std::string> token;  // bearer secret, loaded by the caller from --token-file
  // OAuth instead of the shared secret (set one or neither): every request to the endpoint is
  // authorized by authorize(its one Authorization header, or nullopt) after the Host and Origin
  // checks and before its body is read, and again with the body (the session's principal must be
  // the request's). resource_metadata (RFC 9728, a JSON text) is then served without a token at
  // /.well-known/oauth-protected-resource and at that path followed by the endpoint's path; the
  // readiness route, which carries no cluster data, needs no token either (it says why the issuer
  // cannot be reached).
  // The message is null on the header check and the parsed body on the second, so that a call
  // needing a scope the token lacks can be refused with 403 before it runs.
  std::function<AuthOutcome(std::optional<std::string_view> authorization, const Message* message)>
      authorize;
  std::string resource_metadata;
  std::size_t max_body_bytes = 1 << 20;
  bool sessions = true;
  // Tool calls run at once; more wait, in order, for a free worker. 0: tool calls run on the event
  // thread, which only a back-end whose reads never wait may ask (the replay back-end).
  int workers = 8;
  int event_threads = 1;  // threads running the event loop; a connection is served by one at a time
  std::chrono::milliseconds header_timeout{10'000};  // see "Limits" above
  std::chrono::milliseconds idle_timeout{60'000};
  std::size_t max_connections = 4096;
  std::size_t max_connections_per_address = 2048;
  // Extra names accepted in Host and Origin (without port), e.g. a reverse proxy's name.
  std::vector<std::string> allowed_hosts;
  std::size_t max_sessions = 1024;  // the least recently used session is evicted beyond this
  // GET ready_path answers ready() (a JSON text; slurm-mcp: ReadinessJson of its back-end) with
  // 200, outside MCP, behind the same Host, Origin and token checks. Unset: no such route.
  std::function<std::string()> ready;
  std::string ready_path = "/ready";
  // Counts the connections open (accepted and not refused, not yet closed) and what was refused
  // by HTTP status: a request the Host, Origin or token check refused (403, 401), a connection
  // past a connection cap (503) (mcp/protocol/metrics.h). Not owned; must outlive the transport.
  // Null: nothing is counted.
  Metrics* metrics = nullptr;
  // TLS (PEM files, both or neither): https, TLS 1.2 or later, the handshake under
  // header_timeout; the caps, timeouts and limits above hold as over HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;
  // A reverse proxy in front terminates TLS: bearer tokens may then be taken over plain HTTP off
  // loopback (without TLS or this, a non-loopback address with a token is refused).
  bool tls_terminated_by_proxy = false;
};

class HttpTransport {
 public:
  // `server` must outlive the transport.
  HttpTransport(Server& server, HttpOptions options);
  ~HttpTransport();  // Stop()
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds and serves on a background thread; returns the bound port, or why it could not: an
  // invalid argument for options it refuses (no token off loopback, a second start, ...), an
  // unavailable status when the address cannot be bound.
  base::Result<int> Start();
  // Binds and serves on the calling thread until Stop(). `on_bound` runs once with the bound
  // port before serving starts. Returns the bind error (as Start), or the port once stopped.
  base::Result<int> Serve(const std::function<void(int port)>& on_bound = nullptr);
  // Stops accepting, closes every connection that is not being answered, waits for the requests
  // being answered to finish (their responses are written, then those connections are closed).
  // Idempotent; not for signal handlers.
  void Stop();

  std::size_t session_count() const;
  // Connections open now, refused ones aside.
  std::size_t connection_count() const;

  // Answers `requests`, the bytes a client sent on one connection, without a socket: the same
  // parsing, checks and handlers as a served endpoint (on the calling thread), at most
  // `max_requests` requests, and returns the bytes written back. For the fuzzer (server/fuzz/http_fuzz.cc); not to be mixed with
  // Start() or Serve() on one transport.
  std::string AnswerBytes(std::string_view requests, int max_requests = 8);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Where to listen: serve's --http and --metrics.
struct ListenAddress {
  std::string host;  // without brackets ("::1"); "127.0.0.1" when the address names none
  int port = 0;      // 0..65535; 0: any free port
};
// Parses "HOST:PORT", ":PORT" (127.0.0.1) or "[V6]:PORT". An invalid argument whose message
// quotes ADDR and says what is malformed.
base::Result<ListenAddress> ParseListenAddress(const std::string& addr);
// host as a URL writes it: an IPv6 address in brackets.
std::string UrlHost(const std::string& host);

// Exposed for tests: equality of `given` with `secret` in time that depends only on the lengths.
bool ConstantTimeEquals(const std::string& given, const std::string& secret);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_HTTP_TRANSPORT_H_

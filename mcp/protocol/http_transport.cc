#include "mcp/protocol/http_transport.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <list>
#include <mutex>
#include <random>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/strings.h"

namespace slurm_rca::mcp {
namespace {

using httplib::Request;
using httplib::Response;
using HandlerResponse = httplib::Server::HandlerResponse;

// Implementation-defined JSON-RPC codes, as the TypeScript SDK uses them on HTTP.
constexpr int kErrTransport = -32000;
constexpr int kErrSessionNotFound = -32001;

// Responses always serialize: invalid UTF-8 in a tool's text is replaced, never thrown.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

using base::Lower;

std::string_view Trim(std::string_view s) { return base::Trim(s, base::kBlanks); }  // HTTP OWS

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && Lower(s.substr(0, prefix.size())) == prefix;
}

// The lower-cased host of an authority "name[:port]" or "[v6][:port]" (brackets kept), or
// nullopt when it is not one.
std::optional<std::string> AuthorityHost(std::string_view authority) {
  std::string_view name;
  std::string_view rest;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = authority.substr(0, close + 1);
    rest = authority.substr(close + 1);
  } else {
    const std::size_t colon = authority.find(':');
    name = authority.substr(0, colon);
    if (colon != std::string_view::npos) rest = authority.substr(colon);
  }
  if (name.empty() || name == "[]") return std::nullopt;
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() > 6) return std::nullopt;
    for (char c : rest.substr(1)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    }
  }
  for (char c : name) {
    // Anything that could end the authority (path, userinfo, query) makes it no authority.
    if (c == '/' || c == '@' || c == '?' || c == '#' || c == ' ' || c == '\\') {
      return std::nullopt;
    }
  }
  return Lower(name);
}

// The name a Host header uses for `host`: IPv6 literals in brackets, lower case.
std::string HostHeaderName(std::string_view host) {
  std::string name = Lower(host);
  if (name.find(':') != std::string::npos && name.front() != '[') name = "[" + name + "]";
  return name;
}

bool IsLoopback(std::string_view host) {
  const std::string h = Lower(host);
  return h == "localhost" || h == "::1" || h == "[::1]" || h.rfind("127.", 0) == 0;
}

struct Accepts {
  bool json = false;
  bool sse = false;
};

// Which of our two media types an Accept header admits. Wildcards count for JSON only: a
// client that did not name text/event-stream may not parse it.
Accepts ParseAccept(std::string_view header) {
  Accepts a;
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string media = Lower(Trim(item.substr(0, semi)));
    if (semi != std::string_view::npos) {
      // "q=0" means "not acceptable".
      std::string params = Lower(item.substr(semi));
      params.erase(std::remove(params.begin(), params.end(), ' '), params.end());
      const std::size_t q = params.find(";q=");
      if (q != std::string::npos) {
        std::string_view value = std::string_view(params).substr(q + 3);
        value = value.substr(0, value.find(';'));
        if (!value.empty() && value.find_first_not_of("0.") == std::string_view::npos) continue;
      }
    }
    if (media == "application/json" || media == "application/*" || media == "*/*") a.json = true;
    if (media == "text/event-stream") a.sse = true;
  }
  return a;
}

bool HasProgressToken(const Json& params) {
  if (!params.is_object()) return false;
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return false;
  auto token = meta->find("progressToken");
  return token != meta->end() && (token->is_string() || token->is_number_integer());
}

// A request whose body httplib has not read (we answer before routing) must not leave that body
// on a keep-alive connection, where it would be read as the next request.
bool DeclaresBody(const Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  const std::string length = req.get_header_value("Content-Length");
  return !length.empty() && length != "0";
}

void SendError(Response& res, int status, int code, const std::string& message) {
  res.status = status;
  // Id-less: the transport rejected the HTTP request, not a JSON-RPC message it could answer.
  const Json body = {{"jsonrpc", "2.0"}, {"error", {{"code", code}, {"message", message}}}};
  res.set_content(Dump(body), "application/json");
}

// httplib's server with its request loop reachable: process_request reads one request from any
// Stream, routes it and writes the response.
class EndpointServer : public httplib::Server {
 public:
  using httplib::Server::process_request;
};

// One connection's bytes in memory: reads consume `in`, writes append to `out`.
class MemoryStream : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}
  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, in_.size());
    std::copy_n(in_.data(), n, ptr);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8765;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  bool exhausted() const { return in_.empty(); }
  std::string& out() { return out_; }

 private:
  std::string_view in_;
  std::string out_;
};

std::string SseEvent(const Json& message) {
  return "event: message\ndata: " + Dump(message) + "\n\n";
}

std::string SupportedVersions() {
  std::string list;
  for (const char* v : kProtocolVersions) list += (list.empty() ? "" : ", ") + std::string(v);
  return list;
}

bool IsSupportedVersion(const std::string& version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

// httplib's pool, counting connections: httplib enqueues one task per accepted connection, which
// serves its requests and closes it. httplib 0.11 has no bound on the queue and no accept hook,
// so a connection is never rejected before a request is read: there is nothing such to count.
class CountingThreadPool : public httplib::TaskQueue {
 public:
  CountingThreadPool(std::size_t threads, Metrics* metrics) : pool_(threads), metrics_(metrics) {}

  void enqueue(std::function<void()> fn) override {
    metrics_->HttpConnectionOpened();
    pool_.enqueue([fn = std::move(fn), metrics = metrics_] {
      struct Closed {
        Metrics* metrics;
        ~Closed() { metrics->HttpConnectionClosed(); }
      } closed{metrics};
      fn();
    });
  }
  void shutdown() override { pool_.shutdown(); }
  void on_idle() override { pool_.on_idle(); }

 private:
  httplib::ThreadPool pool_;
  Metrics* metrics_;
};

}  // namespace

base::Result<ListenAddress> ParseListenAddress(const std::string& addr) {
  auto malformed = [](std::string why) -> base::Result<ListenAddress> {
    return base::Status::InvalidArgument(std::move(why));
  };
  const std::size_t colon = addr.rfind(':');
  if (colon == std::string::npos) return malformed("'" + addr + "' is not HOST:PORT or :PORT");
  std::string h = addr.substr(0, colon);
  const std::string p = addr.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
    if (h.empty()) return malformed("'" + addr + "': empty IPv6 address");
  } else if (h.find(':') != std::string::npos || h.find('[') != std::string::npos ||
             h.find(']') != std::string::npos) {
    return malformed("'" + addr + "': an IPv6 address must be written [ADDRESS]:PORT");
  }
  if (h.find_first_of(" \t/\\@") != std::string::npos) {
    return malformed("'" + addr + "': not a host name");
  }
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return malformed("'" + addr + "': the port must be a number from 0 to 65535");
  }
  const int n = std::atoi(p.c_str());
  if (n > 65535) return malformed("'" + addr + "': the port must be a number from 0 to 65535");
  return ListenAddress{.host = h.empty() ? "127.0.0.1" : h, .port = n};
}

std::string UrlHost(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

bool ConstantTimeEquals(const std::string& given, const std::string& secret) {
  // Walks every byte of the secret whatever `given` holds: no early exit on a mismatch, and a
  // length mismatch still costs the full walk.
  unsigned diff = given.size() == secret.size() ? 0u : 1u;
  const std::size_t g = given.size();
  for (std::size_t i = 0; i < secret.size(); ++i) {
    const unsigned char a = g == 0 ? 0 : static_cast<unsigned char>(given[i % g]);
    diff |= a ^ static_cast<unsigned char>(secret[i]);
  }
  return diff == 0;
}

class HttpTransport::Impl {
 public:
  Impl(Server& server, HttpOptions options) : server_(server), options_(std::move(options)) {
    for (const char* name : {"localhost", "127.0.0.1", "[::1]"}) allowed_hosts_.insert(name);
    allowed_hosts_.insert(HostHeaderName(options_.host));
    for (const std::string& name : options_.allowed_hosts) {
      allowed_hosts_.insert(HostHeaderName(name));
    }
  }

  base::Result<int> Bind() {
    if (used_.exchange(true)) {
      return base::Status::InvalidArgument(
          "this HttpTransport was already started; create a new one");
    }
    if (options_.token && options_.token->empty()) {
      return base::Status::InvalidArgument("the bearer token is empty");
    }
    if (!options_.token && !IsLoopback(options_.host)) {
      return base::Status::InvalidArgument(
          "refusing to serve " + options_.host +
          " without a bearer token: only loopback addresses may run without one");
    }
    if (options_.path.empty() || options_.path.front() != '/') {
      return base::Status::InvalidArgument("the endpoint path must start with '/': " +
                                           options_.path);
    }
    if (options_.ready && (options_.ready_path.empty() || options_.ready_path.front() != '/' ||
                           options_.ready_path == options_.path)) {
      return base::Status::InvalidArgument(
          "the readiness path must start with '/' and differ from the endpoint's: " +
          options_.ready_path);
    }
    if (options_.threads < 2) {
      return base::Status::InvalidArgument("at least 2 threads are needed");
    }
    if (options_.port < 0 || options_.port > 65535) {
      return base::Status::InvalidArgument("port out of range: " + std::to_string(options_.port));
    }
    Configure();
    int port = options_.port;
    if (port == 0) {
      port = http_.bind_to_any_port(options_.host);
      if (port < 0) port = 0;
    } else if (!http_.bind_to_port(options_.host, port)) {
      port = 0;
    }
    if (port == 0) {
      return base::Status::Unavailable("cannot bind " + options_.host + ":" +
                                       std::to_string(options_.port));
    }
    // Debian's compiled cpp-httplib listens with a backlog of 5; at 64 concurrent clients the
    // kernel then drops connections (measured by bench/mcp_bench). Linux lets a listening socket
    // widen its backlog with a second listen().
    if (listen_socket_ >= 0) ::listen(listen_socket_, kListenBacklog);
    return port;
  }

  void Listen() {
    serving_ = true;
    if (!stop_requested_) http_.listen_after_bind();
    serving_ = false;
    listen_returned_ = true;
  }

  base::Result<int> Start() {
    base::Result<int> r = Bind();
    if (!r.ok()) return r;
    thread_ = std::thread([this] { Listen(); });
    // Stop() can only stop a server that runs: wait for it, so Start-then-Stop never hangs.
    while (!http_.is_running() && !listen_returned_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return r;
  }

  void Stop() {
    stop_requested_ = true;
    while (serving_ && !http_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    http_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::size_t session_count() const {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    return sessions_.size();
  }

  std::string AnswerBytes(std::string_view requests, int max_requests) {
    if (!used_.exchange(true)) Configure();
    MemoryStream stream(requests);
    bool closed = false;
    for (int i = 0; i < max_requests && !closed && !stream.exhausted(); ++i) {
      if (!http_.process_request(stream, i + 1 == max_requests, closed, nullptr)) break;
    }
    return std::move(stream.out());
  }

 private:
  struct SessionEntry {
    std::string id;
    Session session;
  };
  using SessionPtr = std::shared_ptr<SessionEntry>;

  void Configure() {
    const std::size_t threads = static_cast<std::size_t>(options_.threads);
    Metrics* metrics = options_.metrics;
    http_.new_task_queue = [threads, metrics]() -> httplib::TaskQueue* {
      if (metrics == nullptr) return new httplib::ThreadPool(threads);
      return new CountingThreadPool(threads, metrics);
    };
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_keep_alive_max_count(100);
    // An idle keep-alive connection holds a worker thread, and Stop() waits for it.
    http_.set_keep_alive_timeout(2);
    http_.set_tcp_nodelay(true);
    // httplib's default adds SO_REUSEPORT, which lets a second server (ours or another of this
    // user's) bind the same port and take a share of the connections. Only SO_REUSEADDR.
    http_.set_socket_options([this](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listen_socket_ = sock;
    });
    http_.set_pre_routing_handler(
        [this](const Request& req, Response& res) { return PreRoute(req, res); });
    http_.Post(options_.path,
               [this](const Request& req, Response& res, const httplib::ContentReader& reader) {
                 try {
                   Post(req, res, reader);
                 } catch (const std::exception& e) {
                   SendError(res, 500, kInternalError, std::string("internal error: ") + e.what());
                 } catch (...) {
                   SendError(res, 500, kInternalError, "internal error");
                 }
               });
    // httplib's own 4xx/5xx (bad request line, header too long, ...) get a JSON-RPC body too.
    http_.set_error_handler(httplib::Server::HandlerWithResponse([](const Request&, Response& res) {
      if (res.body.empty() && !res.is_chunked_content_provider_) {
        SendError(res, res.status, kErrTransport, "HTTP error " + std::to_string(res.status));
      }
      return HandlerResponse::Handled;
    }));
  }

  // Checks every request before its body is read: Host, Origin, token, path, method. Only a
  // POST to the endpoint goes on to Post().
  HandlerResponse PreRoute(const Request& req, Response& res) {
    // Range is for GET (RFC 9110 section 14.2) and must be ignored otherwise; httplib 0.11 would
    // cut our JSON-RPC answer to the bytes asked for and still send 200 (found by http_fuzz). The
    // request is httplib's own object for this exchange, handed to us const.
    const_cast<Request&>(req).ranges.clear();
    const bool screened = Screen(req, res);
    if (!screened && options_.metrics) options_.metrics->HttpRequestRejected(res.status);
    if (!screened || !Route(req, res)) {
      if (DeclaresBody(req)) res.set_header("Connection", "close");
      return HandlerResponse::Handled;
    }
    return HandlerResponse::Unhandled;
  }

  // Host, Origin and token; false when the request was answered.
  bool Screen(const Request& req, Response& res) {
    if (req.get_header_value_count("Host") != 1) {
      SendError(res, 400, kErrTransport, "Bad Request: exactly one Host header is required");
      return false;
    }
    const std::optional<std::string> host = AuthorityHost(req.get_header_value("Host"));
    if (!host || allowed_hosts_.count(*host) == 0) {
      SendError(res, 403, kErrTransport, "Forbidden: invalid Host header");
      return false;
    }
    if (req.has_header("Origin")) {
      const std::string origin = req.get_header_value("Origin");
      std::string_view rest = origin;
      std::optional<std::string> origin_host;
      if (req.get_header_value_count("Origin") == 1) {
        if (StartsWithNoCase(rest, "http://")) {
          origin_host = AuthorityHost(rest.substr(7));
        } else if (StartsWithNoCase(rest, "https://")) {
          origin_host = AuthorityHost(rest.substr(8));
        }
      }
      if (!origin_host || allowed_hosts_.count(*origin_host) == 0) {
        SendError(res, 403, kErrTransport, "Forbidden: invalid Origin header");
        return false;
      }
    }
    if (options_.token && !Authorized(req)) {
      SendError(res, 401, kErrTransport, "Unauthorized: a valid bearer token is required");
      res.set_header("WWW-Authenticate", "Bearer realm=\"slurm-mcp\"");
      return false;
    }
    return true;
  }

  bool Authorized(const Request& req) const {
    if (req.get_header_value_count("Authorization") != 1) return false;
    const std::string header = req.get_header_value("Authorization");
    if (!StartsWithNoCase(header, "bearer ")) return false;
    const std::string given(Trim(std::string_view(header).substr(7)));
    return ConstantTimeEquals(given, *options_.token);
  }

  // Path and method; false when the request was answered here.
  bool Route(const Request& req, Response& res) {
    if (options_.ready && req.path == options_.ready_path) {
      if (req.method != "GET") {
        SendError(res, 405, kErrTransport, "Method Not Allowed: use GET");
        res.set_header("Allow", "GET");
        return false;
      }
      res.status = 200;
      res.set_header("Cache-Control", "no-store");
      res.set_content(options_.ready(), "application/json");
      return false;
    }
    if (req.path != options_.path) {
      SendError(res, 404, kErrTransport, "Not Found: the MCP endpoint is " + options_.path);
      return false;
    }
    if (req.method == "POST") return true;
    if (req.method == "DELETE") {
      Delete(req, res);
      return false;
    }
    SendError(res, 405, kErrTransport, "Method Not Allowed: use POST");
    res.set_header("Allow", options_.sessions ? "POST, DELETE" : "POST");
    return false;
  }

  // The MCP-Protocol-Version header, when present, must name a revision we speak.
  bool VersionHeaderOk(const Request& req, Response& res) {
    if (!req.has_header("MCP-Protocol-Version")) return true;
    if (IsSupportedVersion(req.get_header_value("MCP-Protocol-Version"))) return true;
    SendError(
        res, 400, kErrTransport,
        "Bad Request: unsupported MCP-Protocol-Version (supported: " + SupportedVersions() + ")");
    return false;
  }

  // The session named by Mcp-Session-Id; nullptr after answering 400 or 404.
  SessionPtr FindSession(const Request& req, Response& res) {
    if (!req.has_header("Mcp-Session-Id")) {
      SendError(res, 400, kErrTransport,
                "Bad Request: Mcp-Session-Id header is required (send initialize first)");
      return nullptr;
    }
    const std::string id = req.get_header_value("Mcp-Session-Id");
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) {
      SendError(res, 404, kErrSessionNotFound, "Session not found: initialize again");
      return nullptr;
    }
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
    return *it->second;
  }

  void Delete(const Request& req, Response& res) {
    if (!options_.sessions) {
      SendError(res, 405, kErrTransport, "Method Not Allowed: this server keeps no sessions");
      res.set_header("Allow", "POST");
      return;
    }
    if (!VersionHeaderOk(req, res)) return;
    SessionPtr session = FindSession(req, res);
    if (!session) return;
    {
      std::lock_guard<std::mutex> lock(sessions_mu_);
      auto it = sessions_.find(session->id);
      if (it != sessions_.end()) {
        lru_.erase(it->second);
        sessions_.erase(it);
      }
    }
    res.status = 200;
  }

  std::string NewSessionId() {
    // 256 bits from the OS entropy source, as 64 hex digits (visible ASCII).
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id;
    std::lock_guard<std::mutex> lock(random_mu_);
    for (int i = 0; i < 8; ++i) {
      std::uint32_t word = random_();
      for (int j = 0; j < 8; ++j, word >>= 4) id += kHex[word & 0xf];
    }
    return id;
  }

  void Register(const SessionPtr& session) {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    do {
      session->id = NewSessionId();
    } while (sessions_.count(session->id) != 0);
    lru_.push_front(session);
    sessions_[session->id] = lru_.begin();
    while (sessions_.size() > std::max<std::size_t>(options_.max_sessions, 1)) {
      sessions_.erase(lru_.back()->id);
      lru_.pop_back();
    }
  }

  void Post(const Request& req, Response& res, const httplib::ContentReader& reader) {
    std::string body;
    bool too_large = false;
    const bool read = reader([&](const char* data, std::size_t length) {
      if (length > options_.max_body_bytes - body.size()) {
        too_large = true;
        return false;
      }
      body.append(data, length);
      return true;
    });
    if (!read || too_large) {
      // httplib refuses an over-long Content-Length itself (status 413); chunked bodies stop at
      // our cap. Either way the rest of the body is still on the wire: close.
      res.set_header("Connection", "close");
      if (too_large || res.status == 413) {
        SendError(res, 413, kErrTransport,
                  "Payload Too Large: the limit is " + std::to_string(options_.max_body_bytes) +
                      " bytes");
      } else {
        SendError(res, 400, kErrTransport, "Bad Request: the body could not be read");
      }
      return;
    }

    const Accepts accepts = ParseAccept(req.get_header_value("Accept"));
    if (!accepts.json) {
      SendError(res, 406, kErrTransport,
                "Not Acceptable: Accept must include application/json (and text/event-stream)");
      return;
    }
    if (req.has_header("Content-Type")) {
      const std::string type = req.get_header_value("Content-Type");
      if (Lower(Trim(std::string_view(type).substr(0, type.find(';')))) != "application/json") {
        SendError(res, 415, kErrTransport,
                  "Unsupported Media Type: Content-Type must be application/json");
        return;
      }
    }

    ParsedMessage parsed = ParseMessage(body);
    if (!parsed.ok()) {
      res.status = 400;
      res.set_content(Dump(parsed.error), "application/json");
      return;
    }
    const Message& message = *parsed.message;
    const bool initialize =
        message.kind == Message::Kind::kRequest && message.method == "initialize";
    if (!initialize && !VersionHeaderOk(req, res)) return;

    SessionPtr session;
    if (initialize) {
      session = std::make_shared<SessionEntry>();
    } else if (options_.sessions) {
      session = FindSession(req, res);
      if (!session) return;
    } else {
      // Stateless: this exchange is its own session, already past the handshake.
      session = std::make_shared<SessionEntry>();
      session->session.initialize_answered = true;
      session->session.initialized = true;
      session->session.protocol_version = req.has_header("MCP-Protocol-Version")
                                              ? req.get_header_value("MCP-Protocol-Version")
                                              : "2025-03-26";
    }

    if (message.kind != Message::Kind::kRequest) {
      server_.Handle(message, session->session, [](const Json&) {});
      res.status = 202;
      return;
    }

    if (accepts.sse && message.method == "tools/call" && HasProgressToken(message.params)) {
      Stream(res, std::make_shared<Message>(message), session);
      return;
    }

    std::vector<Json> notes;
    std::optional<Json> reply =
        server_.Handle(message, session->session, [&](const Json& note) { notes.push_back(note); });
    if (!reply) {  // cancelled while it ran: the client wants no answer
      res.status = 202;
      return;
    }
    if (initialize && options_.sessions && reply->contains("result")) {
      Register(session);
      res.set_header("Mcp-Session-Id", session->id);
    }
    res.status = 200;
    if (accepts.sse && !notes.empty()) {
      std::string events;
      for (const Json& note : notes) events += SseEvent(note);
      events += SseEvent(*reply);
      res.set_header("Cache-Control", "no-cache");
      res.set_content(events, "text/event-stream");
      return;
    }
    res.set_content(Dump(*reply), "application/json");
  }

  // Answers with an SSE stream: the request runs while httplib writes the response, so each
  // notification reaches the client as it is sent. A client that goes away does not cancel the
  // call (2025-11-25); what is left is not written.
  void Stream(Response& res, std::shared_ptr<Message> message, SessionPtr session) {
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [this, message, session](std::size_t, httplib::DataSink& sink) {
          bool connected = true;
          auto write = [&](const Json& m) {
            if (!connected) return;
            const std::string event = SseEvent(m);
            connected = sink.write(event.data(), event.size());
          };
          std::optional<Json> reply;
          try {
            reply = server_.Handle(*message, session->session, write);
          } catch (const std::exception& e) {
            reply =
                MakeError(message->id, kInternalError, std::string("internal error: ") + e.what());
          }
          if (reply) write(*reply);
          if (connected) sink.done();
          return connected;
        });
  }

  Server& server_;
  const HttpOptions options_;
  std::set<std::string> allowed_hosts_;
  EndpointServer http_;
  static constexpr int kListenBacklog = 256;
  int listen_socket_ = -1;  // the socket httplib listens on, once bound
  std::thread thread_;
  std::atomic<bool> used_{false};
  std::atomic<bool> serving_{false};
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> listen_returned_{false};

  mutable std::mutex sessions_mu_;
  std::list<SessionPtr> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<SessionPtr>::iterator> sessions_;
  std::mutex random_mu_;
  std::random_device random_;
};

HttpTransport::HttpTransport(Server& server, HttpOptions options)
    : impl_(std::make_unique<Impl>(server, std::move(options))) {}

HttpTransport::~HttpTransport() { Stop(); }

base::Result<int> HttpTransport::Start() { return impl_->Start(); }

base::Result<int> HttpTransport::Serve(const std::function<void(int port)>& on_bound) {
  base::Result<int> r = impl_->Bind();
  if (!r.ok()) return r;
  if (on_bound) on_bound(*r);
  impl_->Listen();
  return r;
}

void HttpTransport::Stop() { impl_->Stop(); }

std::size_t HttpTransport::session_count() const { return impl_->session_count(); }

std::string HttpTransport::AnswerBytes(std::string_view requests, int max_requests) {
  return impl_->AnswerBytes(requests, max_requests);
}

}  // namespace slurm_rca::mcp

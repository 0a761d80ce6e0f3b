#include "mcp/protocol/http_transport.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <limits>
#include <list>
#include <mutex>
#include <random>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <variant>

#include "base/strings.h"

namespace slurm_rca::mcp {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using HttpRequest = http::request<http::string_body>;
using RequestHeader = http::request_header<>;
using HttpResponse = http::response<http::string_body>;
using StreamHead = http::response<http::empty_body>;

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

std::string SseEvent(const Json& message) {
  return "event: message\ndata: " + Dump(message) + "\n\n";
}

std::string SupportedVersions() {
  std::string list;
  for (const char* v : kProtocolVersions) list += (list.empty() ? "" : ", ") + std::string(v);
  return list;
}

bool IsSupportedVersion(std::string_view version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

// The value of header `name`, "" when absent.
std::string HeaderValue(const RequestHeader& req, std::string_view name) {
  auto it = req.find(name);
  return it == req.end() ? std::string() : std::string(it->value());
}

bool HasHeader(const RequestHeader& req, std::string_view name) {
  return req.find(name) != req.end();
}

// The request target without its query.
std::string_view TargetPath(const RequestHeader& req) {
  const std::string_view target = req.target();
  return target.substr(0, target.find('?'));
}

// A body follows the header, which a request answered before its body is read leaves unread.
bool DeclaresBody(const RequestHeader& req) {
  if (HasHeader(req, "Transfer-Encoding")) return true;
  const std::string length = HeaderValue(req, "Content-Length");
  return !length.empty() && length != "0";
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse res{static_cast<http::status>(status), 11};
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

HttpResponse ErrorResponse(int status, int code, const std::string& message) {
  // Id-less: the transport rejected the HTTP request, not a JSON-RPC message it could answer.
  const Json body = {{"jsonrpc", "2.0"}, {"error", {{"code", code}, {"message", message}}}};
  return JsonResponse(status, Dump(body));
}

HttpResponse EmptyResponse(int status) { return HttpResponse{static_cast<http::status>(status), 11}; }

// Readies `res` to be written: HTTP/1.1, Connection as `keep_alive` says, no body for a HEAD
// request, Content-Length.
void Finish(HttpResponse& res, bool keep_alive, bool head) {
  res.version(11);
  res.keep_alive(keep_alive);
  if (head) res.body().clear();
  res.prepare_payload();
}

constexpr std::size_t kHeaderLimit = 16 * 1024;
// Until the header is screened (Beast 1.74 takes an absent limit for a limit of 0).
constexpr std::uint64_t kNoBodyLimit = std::numeric_limits<std::uint64_t>::max();

// The answer to a request whose header or body could not be read: 413 and 431 for a limit, 400
// for a malformed request; nullopt when there is nobody to answer (the client closed, reset or
// timed out): the connection is then just closed.
std::optional<HttpResponse> ReadErrorResponse(beast::error_code ec, std::size_t max_body_bytes) {
  if (ec == http::error::body_limit) {
    return ErrorResponse(
        413, kErrTransport,
        "Payload Too Large: the limit is " + std::to_string(max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit) {
    return ErrorResponse(431, kErrTransport,
                         "Request Header Fields Too Large: the limit is " +
                             std::to_string(kHeaderLimit) + " bytes");
  }
  if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return ErrorResponse(400, kErrTransport, "Bad Request: malformed HTTP request (" +
                                                 ec.message() + ")");
  }
  return std::nullopt;
}

// One request's answer, produced by the handlers on any thread and written by whoever holds the
// connection: a whole response, or an SSE stream written as it is produced.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void Respond(HttpResponse res) = 0;
  virtual void BeginStream(StreamHead head) = 0;
  // False once the client is gone: nothing more will reach it.
  virtual bool Event(std::string data) = 0;
  virtual void EndStream() = 0;
};

// One connection's bytes in memory, for AnswerBytes: a Beast SyncReadStream and SyncWriteStream
// whose reads consume `in` and whose writes append to `out`.
class MemoryStream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}

  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    if (in_.empty()) {
      ec = net::error::eof;
      return 0;
    }
    const std::size_t n = net::buffer_copy(buffers, net::buffer(in_.data(), in_.size()));
    in_.remove_prefix(n);
    ec = {};
    return n;
  }
  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers) {
    beast::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw beast::system_error(ec);
    return n;
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers, beast::error_code& ec) {
    std::size_t n = 0;
    for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers);
         ++it) {
      const net::const_buffer b = *it;
      out_.append(static_cast<const char*>(b.data()), b.size());
      n += b.size();
    }
    ec = {};
    return n;
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers) {
    beast::error_code ec;
    return write_some(buffers, ec);
  }

  bool exhausted() const { return in_.empty(); }
  std::string& out() { return out_; }

 private:
  std::string_view in_;
  std::string out_;
};

// Writes each answer into a MemoryStream as it comes, on the calling thread.
class MemoryExchange : public Exchange {
 public:
  MemoryExchange(MemoryStream& stream, bool keep_alive, bool head)
      : stream_(stream), keep_alive_(keep_alive), head_(head) {}
  void Respond(HttpResponse res) override {
    keep_alive_ = keep_alive_ && res.keep_alive();
    Finish(res, keep_alive_, head_);
    beast::error_code ec;
    http::write(stream_, res, ec);
  }
  void BeginStream(StreamHead head) override {
    head.keep_alive(keep_alive_);
    http::response_serializer<http::empty_body> serializer{head};
    beast::error_code ec;
    http::write_header(stream_, serializer, ec);  // the chunks follow, one per event
  }
  bool Event(std::string data) override {
    net::write(stream_, http::make_chunk(net::buffer(data)));
    return true;
  }
  void EndStream() override { net::write(stream_, http::make_chunk_last()); }
  bool keep_alive() const { return keep_alive_; }

 private:
  MemoryStream& stream_;
  bool keep_alive_;
  bool head_;
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
  class Connection;

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
    if (base::Status checked = CheckOptions(); !checked.ok()) return checked;
    io_ = std::make_unique<net::io_context>(1);
    acceptor_.emplace(*io_);
    retry_.emplace(*io_);
    const std::string where = options_.host + ":" + std::to_string(options_.port);
    beast::error_code ec;
    tcp::endpoint endpoint;
    const net::ip::address address = net::ip::make_address(options_.host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, static_cast<unsigned short>(options_.port));
    } else {  // a name, such as localhost
      tcp::resolver resolver(*io_);
      auto found = resolver.resolve(options_.host, std::to_string(options_.port), ec);
      if (ec || found.empty()) return base::Status::Unavailable("cannot bind " + where);
      endpoint = *found.begin();
    }
    acceptor_->open(endpoint.protocol(), ec);
    // Not SO_REUSEPORT, which would let a second server bind the same port and take a share of
    // the connections.
    if (!ec) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(net::socket_base::max_listen_connections, ec);
    if (ec) return base::Status::Unavailable("cannot bind " + where);
    const int port = acceptor_->local_endpoint(ec).port();
    if (ec) return base::Status::Unavailable("cannot bind " + where);
    pool_.emplace(static_cast<std::size_t>(options_.workers));
    guard_.emplace(io_->get_executor());
    started_ = true;
    return port;
  }

  // Serves on the calling thread until Stop().
  void Listen() {
    Accept();
    io_->run();
  }

  base::Result<int> Start() {
    base::Result<int> r = Bind();
    if (r.ok()) thread_ = std::thread([this] { Listen(); });
    return r;
  }

  void Stop() {
    std::lock_guard<std::mutex> once(stop_mu_);
    if (!started_ || stopped_) return;
    stopped_ = true;
    net::post(*io_, [this] {
      stopping_ = true;
      beast::error_code ec;
      acceptor_->close(ec);
      retry_->cancel();
      std::vector<std::shared_ptr<Connection>> open;
      {
        std::lock_guard<std::mutex> lock(connections_mu_);
        for (auto& [raw, weak] : connections_) {
          if (std::shared_ptr<Connection> c = weak.lock()) open.push_back(std::move(c));
        }
      }
      for (const std::shared_ptr<Connection>& c : open) Shutdown(*c);
    });
    {
      std::unique_lock<std::mutex> lock(connections_mu_);
      connections_cv_.wait(lock, [this] { return connections_.empty(); });
    }
    guard_.reset();
    io_->stop();
    if (thread_.joinable()) thread_.join();
    pool_->join();
  }

  std::size_t session_count() const {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    return sessions_.size();
  }

  std::size_t connection_count() const {
    std::lock_guard<std::mutex> lock(connections_mu_);
    return serving_;
  }

  std::string AnswerBytes(std::string_view requests, int max_requests) {
    used_ = true;
    MemoryStream stream(requests);
    beast::flat_buffer buffer;
    for (int i = 0; i < max_requests && (buffer.size() > 0 || !stream.exhausted()); ++i) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(kHeaderLimit);
      parser.body_limit(kNoBodyLimit);
      beast::error_code ec;
      http::read_header(stream, buffer, parser, ec);
      if (ec) {
        AnswerReadError(stream, ec);
        break;
      }
      const HttpRequest& req = parser.get();
      const bool head = req.method() == http::verb::head;
      if (std::optional<HttpResponse> early = AfterHeader(req, parser.content_length())) {
        MemoryExchange exchange(stream, req.keep_alive() && !DeclaresBody(req), head);
        exchange.Respond(std::move(*early));
        if (!exchange.keep_alive()) break;
        continue;
      }
      parser.body_limit(options_.max_body_bytes);
      if (ExpectsContinue(req)) http::write(stream, ContinueResponse(), ec);
      http::read(stream, buffer, parser, ec);
      if (ec) {
        AnswerReadError(stream, ec);
        break;
      }
      HttpRequest request = parser.release();
      MemoryExchange exchange(stream, request.keep_alive(), head);
      std::variant<HttpResponse, Call> prepared = Prepare(request);
      if (HttpResponse* answer = std::get_if<HttpResponse>(&prepared)) {
        exchange.Respond(std::move(*answer));
      } else {
        Run(std::get<Call>(prepared), exchange);
      }
      if (!exchange.keep_alive()) break;
    }
    return std::move(stream.out());
  }

 private:
  struct SessionEntry {
    std::string id;
    Session session;
  };
  using SessionPtr = std::shared_ptr<SessionEntry>;

  // A JSON-RPC message that passed every check, with the session it runs in.
  struct Call {
    Message message;
    SessionPtr session;
    Accepts accepts;
    bool initialize = false;
  };

  base::Status CheckOptions() const {
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
    if (options_.workers < 1) return base::Status::InvalidArgument("at least 1 worker is needed");
    if (options_.max_connections < 1 || options_.max_connections_per_address < 1) {
      return base::Status::InvalidArgument("the connection limits must be at least 1");
    }
    if (options_.header_timeout.count() <= 0 || options_.idle_timeout.count() <= 0) {
      return base::Status::InvalidArgument("the header and idle timeouts must be positive");
    }
    if (options_.port < 0 || options_.port > 65535) {
      return base::Status::InvalidArgument("port out of range: " + std::to_string(options_.port));
    }
    return base::Status();
  }

  void Accept();
  void OnAccepted(tcp::socket socket);
  static void Shutdown(Connection& c);

  // A new connection is registered; past a cap, the 503 it gets instead of being served.
  std::optional<HttpResponse> Admit(const std::shared_ptr<Connection>& c, const std::string& address,
                                    bool& counted) {
    std::lock_guard<std::mutex> lock(connections_mu_);
    connections_[c.get()] = c;
    counted = false;
    if (serving_ >= options_.max_connections) {
      return Unavailable("the server holds its maximum of " +
                         std::to_string(options_.max_connections) + " connections");
    }
    auto [it, added] = per_address_.try_emplace(address, 0);
    if (it->second >= options_.max_connections_per_address) {
      return Unavailable("this client address holds its maximum of " +
                         std::to_string(options_.max_connections_per_address) + " connections");
    }
    ++it->second;
    ++serving_;
    counted = true;
    if (options_.metrics) options_.metrics->HttpConnectionOpened();
    return std::nullopt;
  }

  HttpResponse Unavailable(const std::string& why) {
    if (options_.metrics) options_.metrics->HttpRequestRejected(503);
    HttpResponse res = ErrorResponse(503, kErrTransport, "Service Unavailable: " + why);
    res.set(http::field::retry_after, "1");
    res.keep_alive(false);
    return res;
  }

  void Release(const Connection* c, const std::string& address, bool counted) {
    std::lock_guard<std::mutex> lock(connections_mu_);
    connections_.erase(c);
    if (counted) {
      --serving_;
      auto it = per_address_.find(address);
      if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
      if (options_.metrics) options_.metrics->HttpConnectionClosed();
    }
    if (connections_.empty()) connections_cv_.notify_all();
  }

  static bool ExpectsContinue(const RequestHeader& req) {
    return beast::iequals(req[http::field::expect], "100-continue");
  }
  static StreamHead ContinueResponse() { return StreamHead{http::status::continue_, 11}; }

  // A request whose header or body could not be read: its answer, if any, and nothing more.
  void AnswerReadError(MemoryStream& stream, beast::error_code ec) {
    if (std::optional<HttpResponse> res = ReadErrorResponse(ec, options_.max_body_bytes)) {
      MemoryExchange(stream, false, false).Respond(std::move(*res));
    }
  }

  // Everything that is decided on the header alone: Host, Origin, token, path, method, and the
  // declared body length. nullopt: read the body and go on to Prepare().
  std::optional<HttpResponse> AfterHeader(const RequestHeader& req,
                                          boost::optional<std::uint64_t> content_length) {
    if (std::optional<HttpResponse> refused = Screen(req)) {
      if (options_.metrics) options_.metrics->HttpRequestRejected(refused->result_int());
      return refused;
    }
    if (std::optional<HttpResponse> routed = Route(req)) return routed;
    if (content_length && *content_length > options_.max_body_bytes) {
      return ErrorResponse(
          413, kErrTransport,
          "Payload Too Large: the limit is " + std::to_string(options_.max_body_bytes) + " bytes");
    }
    return std::nullopt;
  }

  // Host, Origin and token; the refusal, or nullopt.
  std::optional<HttpResponse> Screen(const RequestHeader& req) const {
    if (req.count(http::field::host) != 1) {
      return ErrorResponse(400, kErrTransport, "Bad Request: exactly one Host header is required");
    }
    const std::optional<std::string> host = AuthorityHost(req[http::field::host]);
    if (!host || allowed_hosts_.count(*host) == 0) {
      return ErrorResponse(403, kErrTransport, "Forbidden: invalid Host header");
    }
    if (HasHeader(req, "Origin")) {
      const std::string_view origin = req[http::field::origin];
      std::optional<std::string> origin_host;
      if (req.count(http::field::origin) == 1) {
        if (StartsWithNoCase(origin, "http://")) {
          origin_host = AuthorityHost(origin.substr(7));
        } else if (StartsWithNoCase(origin, "https://")) {
          origin_host = AuthorityHost(origin.substr(8));
        }
      }
      if (!origin_host || allowed_hosts_.count(*origin_host) == 0) {
        return ErrorResponse(403, kErrTransport, "Forbidden: invalid Origin header");
      }
    }
    if (options_.token && !Authorized(req)) {
      HttpResponse res =
          ErrorResponse(401, kErrTransport, "Unauthorized: a valid bearer token is required");
      res.set(http::field::www_authenticate, "Bearer realm=\"slurm-mcp\"");
      return res;
    }
    return std::nullopt;
  }

  bool Authorized(const RequestHeader& req) const {
    if (req.count(http::field::authorization) != 1) return false;
    const std::string_view header = req[http::field::authorization];
    if (!StartsWithNoCase(header, "bearer ")) return false;
    const std::string given(Trim(header.substr(7)));
    return ConstantTimeEquals(given, *options_.token);
  }

  // Path and method: the answer, or nullopt for a POST to the endpoint.
  std::optional<HttpResponse> Route(const RequestHeader& req) {
    const std::string_view path = TargetPath(req);
    if (options_.ready && path == options_.ready_path) {
      if (req.method() != http::verb::get) {
        HttpResponse res = ErrorResponse(405, kErrTransport, "Method Not Allowed: use GET");
        res.set(http::field::allow, "GET");
        return res;
      }
      HttpResponse res = JsonResponse(200, options_.ready());
      res.set(http::field::cache_control, "no-store");
      return res;
    }
    if (path != options_.path) {
      return ErrorResponse(404, kErrTransport, "Not Found: the MCP endpoint is " + options_.path);
    }
    if (req.method() == http::verb::post) return std::nullopt;
    if (req.method() == http::verb::delete_) return Delete(req);
    HttpResponse res = ErrorResponse(405, kErrTransport, "Method Not Allowed: use POST");
    res.set(http::field::allow, options_.sessions ? "POST, DELETE" : "POST");
    return res;
  }

  // The MCP-Protocol-Version header, when present, must name a revision we speak.
  std::optional<HttpResponse> VersionHeaderError(const RequestHeader& req) const {
    auto it = req.find("MCP-Protocol-Version");
    if (it == req.end() || IsSupportedVersion(it->value())) return std::nullopt;
    return ErrorResponse(
        400, kErrTransport,
        "Bad Request: unsupported MCP-Protocol-Version (supported: " + SupportedVersions() + ")");
  }

  // The session named by Mcp-Session-Id, or the 400 or 404 that says why there is none.
  std::variant<SessionPtr, HttpResponse> FindSession(const RequestHeader& req) {
    if (!HasHeader(req, "Mcp-Session-Id")) {
      return ErrorResponse(400, kErrTransport,
                           "Bad Request: Mcp-Session-Id header is required (send initialize first)");
    }
    const std::string id = HeaderValue(req, "Mcp-Session-Id");
    std::lock_guard<std::mutex> lock(sessions_mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) {
      return ErrorResponse(404, kErrSessionNotFound, "Session not found: initialize again");
    }
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
    return *it->second;
  }

  HttpResponse Delete(const RequestHeader& req) {
    if (!options_.sessions) {
      HttpResponse res =
          ErrorResponse(405, kErrTransport, "Method Not Allowed: this server keeps no sessions");
      res.set(http::field::allow, "POST");
      return res;
    }
    if (std::optional<HttpResponse> bad = VersionHeaderError(req)) return *bad;
    std::variant<SessionPtr, HttpResponse> found = FindSession(req);
    if (HttpResponse* refusal = std::get_if<HttpResponse>(&found)) return std::move(*refusal);
    const SessionPtr& session = std::get<SessionPtr>(found);
    {
      std::lock_guard<std::mutex> lock(sessions_mu_);
      auto it = sessions_.find(session->id);
      if (it != sessions_.end()) {
        lru_.erase(it->second);
        sessions_.erase(it);
      }
    }
    return EmptyResponse(200);
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

  // The checks that need the body: Accept, Content-Type, the JSON-RPC message, the protocol
  // version header and the session. The refusal, or the call to run.
  std::variant<HttpResponse, Call> Prepare(const HttpRequest& req) {
    Call call;
    call.accepts = ParseAccept(HeaderValue(req, "Accept"));
    if (!call.accepts.json) {
      return ErrorResponse(
          406, kErrTransport,
          "Not Acceptable: Accept must include application/json (and text/event-stream)");
    }
    if (HasHeader(req, "Content-Type")) {
      const std::string_view type = req[http::field::content_type];
      if (Lower(Trim(type.substr(0, type.find(';')))) != "application/json") {
        return ErrorResponse(415, kErrTransport,
                             "Unsupported Media Type: Content-Type must be application/json");
      }
    }
    ParsedMessage parsed = ParseMessage(req.body());
    if (!parsed.ok()) return JsonResponse(400, Dump(parsed.error));
    call.message = std::move(*parsed.message);
    call.initialize =
        call.message.kind == Message::Kind::kRequest && call.message.method == "initialize";
    if (!call.initialize) {
      if (std::optional<HttpResponse> bad = VersionHeaderError(req)) return std::move(*bad);
    }
    if (call.initialize) {
      call.session = std::make_shared<SessionEntry>();
    } else if (options_.sessions) {
      std::variant<SessionPtr, HttpResponse> found = FindSession(req);
      if (HttpResponse* refusal = std::get_if<HttpResponse>(&found)) return std::move(*refusal);
      call.session = std::get<SessionPtr>(std::move(found));
    } else {
      // Stateless: this exchange is its own session, already past the handshake.
      call.session = std::make_shared<SessionEntry>();
      Session& s = call.session->session;
      s.initialize_answered = true;
      s.initialized = true;
      s.protocol_version = HasHeader(req, "MCP-Protocol-Version")
                               ? HeaderValue(req, "MCP-Protocol-Version")
                               : "2025-03-26";
    }
    return call;
  }

  // A tools/call may wait on Slurm: it runs on the worker pool, everything else where it is read.
  static bool RunsOnWorker(const Call& call) {
    return call.message.kind == Message::Kind::kRequest && call.message.method == "tools/call";
  }

  void Run(Call& call, Exchange& exchange) {
    try {
      RunUnguarded(call, exchange);
    } catch (const std::exception& e) {
      exchange.Respond(
          ErrorResponse(500, kInternalError, std::string("internal error: ") + e.what()));
    } catch (...) {
      exchange.Respond(ErrorResponse(500, kInternalError, "internal error"));
    }
  }

  void RunUnguarded(Call& call, Exchange& exchange) {
    const Message& message = call.message;
    Session& session = call.session->session;
    if (message.kind != Message::Kind::kRequest) {
      server_.Handle(message, session, [](const Json&) {});
      return exchange.Respond(EmptyResponse(202));
    }
    if (call.accepts.sse && message.method == "tools/call" && HasProgressToken(message.params)) {
      return Stream(message, session, exchange);
    }
    std::vector<Json> notes;
    std::optional<Json> reply =
        server_.Handle(message, session, [&](const Json& note) { notes.push_back(note); });
    if (!reply) return exchange.Respond(EmptyResponse(202));  // cancelled: no answer wanted
    HttpResponse res{http::status::ok, 11};
    if (call.initialize && options_.sessions && reply->contains("result")) {
      Register(call.session);
      res.set("Mcp-Session-Id", call.session->id);
    }
    if (call.accepts.sse && !notes.empty()) {
      std::string events;
      for (const Json& note : notes) events += SseEvent(note);
      events += SseEvent(*reply);
      res.set(http::field::cache_control, "no-cache");
      res.set(http::field::content_type, "text/event-stream");
      res.body() = std::move(events);
    } else {
      res.set(http::field::content_type, "application/json");
      res.body() = Dump(*reply);
    }
    exchange.Respond(std::move(res));
  }

  // Answers with an SSE stream: each notification reaches the client as it is sent. A client
  // that goes away does not cancel the call (2025-11-25); what is left is not written.
  void Stream(const Message& message, Session& session, Exchange& exchange) {
    StreamHead head{http::status::ok, 11};
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    head.chunked(true);
    exchange.BeginStream(std::move(head));
    bool connected = true;
    auto write = [&](const Json& m) {
      if (connected) connected = exchange.Event(SseEvent(m));
    };
    std::optional<Json> reply;
    try {
      reply = server_.Handle(message, session, write);
    } catch (const std::exception& e) {
      reply = MakeError(message.id, kInternalError, std::string("internal error: ") + e.what());
    }
    if (reply) write(*reply);
    exchange.EndStream();
  }

  Server& server_;
  const HttpOptions options_;
  std::set<std::string> allowed_hosts_;
  std::atomic<bool> used_{false};

  // Serving (after Bind): the event loop, its acceptor, the workers.
  std::unique_ptr<net::io_context> io_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<net::steady_timer> retry_;  // accepting again after an accept error
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard_;
  std::optional<net::thread_pool> pool_;
  std::thread thread_;  // Start()'s
  bool started_ = false;
  std::atomic<bool> stopping_{false};  // set on the event thread by Stop()
  std::mutex stop_mu_;
  bool stopped_ = false;

  // Every connection not yet destroyed; the caps count the ones served.
  mutable std::mutex connections_mu_;
  std::condition_variable connections_cv_;  // notified when none is left
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::size_t serving_ = 0;

  mutable std::mutex sessions_mu_;
  std::list<SessionPtr> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<SessionPtr>::iterator> sessions_;
  std::mutex random_mu_;
  std::random_device random_;
};

// One accepted connection, on the event thread: waits for a request (idle timeout), reads its
// header and body (header timeout), answers what the header alone decides, hands the rest to
// Prepare() and Run() (a tools/call on the worker pool), and writes what the Exchange receives,
// in order, from whichever thread. Kept alive until the client or a limit closes it.
class HttpTransport::Impl::Connection : public std::enable_shared_from_this<Connection>,
                                        public Exchange {
 public:
  Connection(Impl& impl, tcp::socket socket, std::string address)
      : impl_(impl), stream_(std::move(socket)), address_(std::move(address)) {}
  ~Connection() override { impl_.Release(this, address_, counted_); }

  // Registers with the transport, then serves, or answers 503 when a cap is reached.
  void Open() {
    std::optional<HttpResponse> refusal = impl_.Admit(shared_from_this(), address_, counted_);
    if (!refusal) return WaitRequest();
    answering_ = true;
    keep_alive_ = false;
    Enqueue(Out{.kind = Out::kResponse,
                .response = std::make_shared<HttpResponse>(std::move(*refusal))});
  }

  // Stop(): a connection that is not being answered is closed now; one that is, after its
  // response.
  void Shutdown() {
    if (!answering_) Close();
  }

  // Exchange: called from the thread that runs the request; the writes happen on the event thread.
  void Respond(HttpResponse res) override {
    Post(Out{.kind = Out::kResponse, .response = std::make_shared<HttpResponse>(std::move(res))});
  }
  void BeginStream(StreamHead head) override {
    Post(Out{.kind = Out::kHead, .head = std::make_shared<StreamHead>(std::move(head))});
  }
  bool Event(std::string data) override {
    if (gone_) return false;
    Post(Out{.kind = Out::kChunk, .chunk = std::move(data)});
    return true;
  }
  void EndStream() override { Post(Out{.kind = Out::kLast}); }

 private:
  friend class Impl;

  // What is to be written: a whole response, or the parts of an SSE stream.
  struct Out {
    enum Kind { kResponse, kHead, kChunk, kLast } kind;
    std::shared_ptr<HttpResponse> response;
    std::shared_ptr<StreamHead> head;
    std::string chunk;
  };

  static constexpr std::size_t kIdleRead = 1024;

  void WaitRequest() {
    answering_ = false;
    head_request_ = false;
    if (closed_) return;
    if (impl_.stopping_) return Close();
    if (buffer_.size() > 0) return ReadHeader();  // pipelined: the next request is here
    stream_.expires_after(impl_.options_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kIdleRead),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->Close();
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kNoBodyLimit);  // the declared length is checked after the screen
    stream_.expires_after(impl_.options_.header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    answering_ = true;
    const HttpRequest& req = parser_->get();
    head_request_ = req.method() == http::verb::head;
    keep_alive_ = req.keep_alive();
    if (std::optional<HttpResponse> early = impl_.AfterHeader(req, parser_->content_length())) {
      // Its body, if any, is not read: it must not be taken for the next request.
      if (DeclaresBody(req)) keep_alive_ = false;
      return Respond(std::move(*early));
    }
    parser_->body_limit(impl_.options_.max_body_bytes);
    if (!ExpectsContinue(req)) return ReadBody();
    auto interim = std::make_shared<StreamHead>(ContinueResponse());
    stream_.expires_after(impl_.options_.header_timeout);
    http::async_write(stream_, *interim,
                      [self = shared_from_this(), interim](beast::error_code e, std::size_t) {
                        if (e) return self->Close();
                        self->ReadBody();
                      });
  }

  void ReadBody() {
    stream_.expires_after(impl_.options_.header_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->OnBody(ec);
                     });
  }

  void OnBody(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    stream_.expires_never();  // a call is bounded by the back-end's own timeouts
    HttpRequest request = parser_->release();
    parser_.reset();
    std::variant<HttpResponse, Call> prepared = impl_.Prepare(request);
    if (HttpResponse* answer = std::get_if<HttpResponse>(&prepared)) {
      return Respond(std::move(*answer));
    }
    Call& call = std::get<Call>(prepared);
    if (!RunsOnWorker(call)) return impl_.Run(call, *this);
    net::post(*impl_.pool_, [self = shared_from_this(), call = std::move(call)]() mutable {
      self->impl_.Run(call, *self);
      // This job may hold the last reference: it is let go on the event thread.
      auto executor = self->stream_.get_executor();
      net::post(executor, [self = std::move(self)] {});
    });
  }

  void OnReadError(beast::error_code ec) {
    std::optional<HttpResponse> res = ReadErrorResponse(ec, impl_.options_.max_body_bytes);
    if (!res) return Close();
    answering_ = true;
    keep_alive_ = false;
    Respond(std::move(*res));
  }

  void Post(Out out) {
    net::post(stream_.get_executor(), [self = shared_from_this(), out = std::move(out)]() mutable {
      self->Enqueue(std::move(out));
    });
  }

  void Enqueue(Out out) {
    if (closed_) return;
    queue_.push_back(std::move(out));
    if (!writing_) WriteNext();
  }

  void WriteNext() {
    if (queue_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    Out& out = queue_.front();
    // A client that reads nothing for the idle timeout is given up on.
    stream_.expires_after(impl_.options_.idle_timeout);
    auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->OnWritten(ec);
    };
    const bool keep_alive = keep_alive_ && !impl_.stopping_;
    switch (out.kind) {
      case Out::kResponse:
        Finish(*out.response, keep_alive && out.response->keep_alive(), head_request_);
        return http::async_write(stream_, *out.response, std::move(done));
      case Out::kHead:
        out.head->keep_alive(keep_alive);
        stream_keep_alive_ = keep_alive;
        serializer_.emplace(*out.head);
        return http::async_write_header(stream_, *serializer_, std::move(done));
      case Out::kChunk:
        return net::async_write(stream_, http::make_chunk(net::buffer(out.chunk)), std::move(done));
      case Out::kLast:
        return net::async_write(stream_, http::make_chunk_last(), std::move(done));
    }
  }

  void OnWritten(beast::error_code ec) {
    const Out out = std::move(queue_.front());
    queue_.pop_front();
    // Beast reports end_of_stream when the response it wrote says Connection: close.
    if (ec && ec != http::error::end_of_stream) {
      gone_ = true;
      return Close();
    }
    if (out.kind == Out::kHead || out.kind == Out::kChunk) return WriteNext();
    writing_ = false;
    serializer_.reset();
    const bool keep_alive =
        out.kind == Out::kResponse ? out.response->keep_alive() : stream_keep_alive_;
    if (keep_alive) return WaitRequest();
    Linger();
  }

  // After a response that closes the connection: stop sending, then read and drop what the
  // client still sends (the body of a refused request) for a moment, so that closing with unread
  // bytes does not reset the connection before the client has read the response.
  void Linger() {
    answering_ = false;
    gone_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec || impl_.stopping_) return Close();
    stream_.expires_after(std::chrono::seconds(2));
    Drain();
  }

  void Drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kIdleRead),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    gone_ = true;
    queue_.clear();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  Impl& impl_;
  beast::tcp_stream stream_;
  const std::string address_;
  bool counted_ = false;  // counts against the caps (set by Admit)

  // The event thread's alone:
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool answering_ = false;  // from a request's header until its response is written
  bool keep_alive_ = true;  // the request's, unless its body was left unread
  bool head_request_ = false;
  bool closed_ = false;
  bool writing_ = false;
  bool stream_keep_alive_ = false;
  std::deque<Out> queue_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;  // an SSE head's

  std::atomic<bool> gone_{false};  // read by Event() on a worker
};

void HttpTransport::Impl::Accept() {
  acceptor_->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (stopping_) return;
    if (!ec) {
      OnAccepted(std::move(socket));
      return Accept();
    }
    // Out of file descriptors or memory: the connection waits in the backlog; try again shortly
    // rather than spin. Anything else (a connection reset before it was accepted): at once.
    if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
        ec == net::error::no_memory) {
      retry_->expires_after(std::chrono::milliseconds(50));
      retry_->async_wait([this](beast::error_code e) {
        if (!e && !stopping_) Accept();
      });
      return;
    }
    Accept();
  });
}

void HttpTransport::Impl::OnAccepted(tcp::socket socket) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  std::make_shared<Connection>(*this, std::move(socket), remote.address().to_string())->Open();
}

void HttpTransport::Impl::Shutdown(Connection& c) { c.Shutdown(); }

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

std::size_t HttpTransport::connection_count() const { return impl_->connection_count(); }

std::string HttpTransport::AnswerBytes(std::string_view requests, int max_requests) {
  return impl_->AnswerBytes(requests, max_requests);
}

}  // namespace slurm_rca::mcp

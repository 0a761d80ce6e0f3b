#include "mcp/protocol/http_transport.h"

#include <algorithm>
#include <atomic>
#include <cctype>
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
#include <variant>

#include <openssl/evp.h>

#include "base/strings.h"
#include "mcp/protocol/http_core.h"

namespace slurm_rca::mcp {
namespace {

namespace http = http_core::http;
using http_core::Deferred;
using http_core::Exchange;
using http_core::RequestHeader;
using http_core::StreamHead;
using HttpRequest = http_core::Request;
using HttpResponse = http_core::Response;

// Implementation-defined JSON-RPC codes, as the TypeScript SDK uses them on HTTP.
constexpr int kErrTransport = -32000;
constexpr int kErrSessionNotFound = -32001;
// RFC 9728: where a protected resource publishes its metadata (HttpOptions::resource_metadata).
const std::string kMetadataPath = "/.well-known/oauth-protected-resource";

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

// One SSE event carrying one message, serialized already (Serialize).
std::string SseEventOfLine(std::string_view line) {
  return "event: message\ndata: " + std::string(line) + "\n\n";
}

std::string SseEvent(const Json& message) { return SseEventOfLine(Dump(message)); }

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

// A modern-era refusal: the JSON-RPC error response (with the request's id) on an HTTP status.
HttpResponse RpcErrorResponse(int status, const Json& error) { return JsonResponse(status, Dump(error)); }

// A header value as the 2026-07-28 client sends it: as is, or "=?base64?<UTF-8 as base64>?=" for
// a value that is not safe header text (streamable-http.mdx). nullopt: a badly encoded value.
std::optional<std::string> DecodeHeaderValue(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() || !StartsWithNoCase(value, kPrefix) ||
      value.substr(value.size() - kSuffix.size()) != kSuffix) {
    return std::string(value);
  }
  const std::string_view b64 =
      value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
  // EVP_DecodeBlock skips blanks and ignores what follows padding: check the alphabet first.
  if (b64.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  for (std::size_t i = 0; i < b64.size(); ++i) {
    const char c = b64[i];
    if (c == '=') {
      if (i + 2 < b64.size()) return std::nullopt;
      ++padding;
    } else if (padding > 0 || !(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/')) {
      return std::nullopt;
    }
  }
  std::string out(b64.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(b64.data()),
                                static_cast<int>(b64.size()));
  if (n < 0 || static_cast<std::size_t>(n) < padding) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - padding);
  return out;
}

// What Mcp-Name must carry for a modern request: params.name of tools/call and prompts/get,
// params.uri of resources/read; nullopt for other methods or when the body has no such string.
std::optional<std::string> McpNameOf(const Message& m) {
  const char* field = nullptr;
  if (m.method == "tools/call" || m.method == "prompts/get") field = "name";
  if (m.method == "resources/read") field = "uri";
  if (!field || !m.params.is_object()) return std::nullopt;
  auto it = m.params.find(field);
  if (it == m.params.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

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

class HttpTransport::Impl : public http_core::Handler {
 public:
  Impl(Server& server, HttpOptions options)
      : server_(server),
        options_(std::move(options)),
        core_(*this, http_core::Limits{.max_body_bytes = options_.max_body_bytes,
                                       .workers = options_.workers,
                                       .event_threads = options_.event_threads,
                                       .header_timeout = options_.header_timeout,
                                       .idle_timeout = options_.idle_timeout,
                                       .max_connections = options_.max_connections,
                                       .max_per_address = options_.max_connections_per_address,
                                       .metrics = options_.metrics,
                                       .tls_cert_file = options_.tls_cert_file,
                                       .tls_key_file = options_.tls_key_file}) {
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
    return core_.Bind(options_.host, options_.port);
  }

  void Listen() { core_.Run(); }

  base::Result<int> Start() {
    base::Result<int> r = Bind();
    if (r.ok()) thread_ = std::thread([this] { core_.Run(); });
    return r;
  }

  void Stop() {
    core_.Stop();
    if (thread_.joinable()) thread_.join();
  }

  std::size_t session_count() const {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    return sessions_.size();
  }

  std::size_t connection_count() const { return core_.connection_count(); }

  std::string AnswerBytes(std::string_view requests, int max_requests) {
    used_ = true;
    return core_.AnswerBytes(requests, max_requests);
  }

  // http_core::Handler
  std::optional<HttpResponse> OnHeader(const RequestHeader& req,
                                       std::optional<std::uint64_t> content_length) override {
    return AfterHeader(req, content_length);
  }

  std::variant<HttpResponse, Deferred> OnRequest(const HttpRequest& req) override {
    std::variant<HttpResponse, Call> prepared = Prepare(req);
    if (HttpResponse* answer = std::get_if<HttpResponse>(&prepared)) return std::move(*answer);
    Call& call = std::get<Call>(prepared);
    const bool on_worker = RunsOnWorker(call);
    return Deferred{.run = [this, call = std::move(call)](Exchange& exchange) mutable {
                      Run(call, exchange);
                    },
                    .on_worker = on_worker};
  }

  HttpResponse Error(int status, const std::string& message) override {
    return ErrorResponse(status, kErrTransport, message);
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
    bool modern = false;  // carries the 2026-07-28 claim: stateless, no session
    AuthOutcome auth;     // with OAuth: who asks (status 0)
  };

  base::Status CheckOptions() const {
    if (options_.token && options_.token->empty()) {
      return base::Status::InvalidArgument("the bearer token is empty");
    }
    if (options_.token && options_.authorize) {
      return base::Status::InvalidArgument("a shared bearer token and OAuth are exclusive");
    }
    if (!options_.token && !options_.authorize && !IsLoopback(options_.host)) {
      return base::Status::InvalidArgument(
          "refusing to serve " + options_.host +
          " without a bearer token: only loopback addresses may run without one");
    }
    if (!IsLoopback(options_.host) && options_.tls_cert_file.empty() &&
        !options_.tls_terminated_by_proxy) {
      return base::Status::InvalidArgument(
          "refusing to take bearer tokens on " + options_.host +
          " over plain HTTP: give a TLS certificate and key, or say that a reverse proxy in front "
          "terminates TLS");
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
    return base::Status();  // the limits and the port are the core's to check
  }

  // Everything that is decided on the header alone: Host, Origin, token, path, method, and the
  // declared body length. nullopt: read the body and go on to Prepare().
  std::optional<HttpResponse> AfterHeader(const RequestHeader& req,
                                          std::optional<std::uint64_t> content_length) {
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
    if (options_.authorize && !Public(req)) {
      AuthOutcome outcome = Authorize(req);
      if (outcome.status != 0) return Refusal(outcome);
    }
    return std::nullopt;
  }

  // With OAuth: the routes served without a token (the metadata, readiness).
  bool Public(const RequestHeader& req) const {
    const std::string_view path = TargetPath(req);
    return path == kMetadataPath || path == kMetadataPath + options_.path ||
           (options_.ready && path == options_.ready_path);
  }

  AuthOutcome Authorize(const RequestHeader& req, const Message* message = nullptr) const {
    std::optional<std::string_view> header;
    if (req.count(http::field::authorization) == 1) header = req[http::field::authorization];
    return options_.authorize(header, message);
  }

  static HttpResponse Refusal(const AuthOutcome& outcome) {
    const int status = outcome.status;
    const char* what = status == 401   ? "Unauthorized: "
                       : status == 403 ? "Forbidden: "
                                       : "Service Unavailable: ";
    HttpResponse res = ErrorResponse(status, kErrTransport, what + outcome.message);
    if (!outcome.www_authenticate.empty()) {
      res.set(http::field::www_authenticate, outcome.www_authenticate);
    }
    return res;
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
    if (options_.authorize && (path == kMetadataPath || path == kMetadataPath + options_.path)) {
      if (req.method() != http::verb::get) {
        HttpResponse res = ErrorResponse(405, kErrTransport, "Method Not Allowed: use GET");
        res.set(http::field::allow, "GET");
        return res;
      }
      HttpResponse res = JsonResponse(200, options_.resource_metadata);
      res.set(http::field::cache_control, "max-age=300");
      return res;
    }
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
    if (options_.authorize) {
      // Again with the body: the principal is the request's, whatever the header check saw.
      call.auth = Authorize(req, &call.message);
      if (call.auth.status != 0) return Refusal(call.auth);
    }
    if (HasModernClaim(call.message)) return PrepareModern(req, std::move(call));
    call.initialize =
        call.message.kind == Message::Kind::kRequest && call.message.method == "initialize";
    if (HasHeader(req, "MCP-Protocol-Version") &&
        IsModernVersion(HeaderValue(req, "MCP-Protocol-Version"))) {
      // A 2026-07-28 header on a body without the claim (ladder rungs 3 and 4).
      const Json& id = call.message.kind == Message::Kind::kRequest ? call.message.id : Json();
      if (call.initialize) {
        return RpcErrorResponse(
            400, MakeError(id, kHeaderMismatch,
                           "Header mismatch: MCP-Protocol-Version names a 2026-07-28 revision, "
                           "but initialize carries no _meta claim (send it without the header to "
                           "start a 2025 session)"));
      }
      return RpcErrorResponse(
          400, MakeError(id, kInvalidParams,
                         std::string("Invalid params: a 2026-07-28 request needs params._meta[\"") +
                             kMetaProtocolVersion + "\"] and [\"" + kMetaClientCapabilities +
                             "\"]"));
    }
    if (!call.initialize) {
      if (std::optional<HttpResponse> bad = VersionHeaderError(req)) return std::move(*bad);
    }
    if (call.initialize) {
      call.session = std::make_shared<SessionEntry>();
      call.session->session.principal = call.auth.principal;
      call.session->session.user = call.auth.user;
      call.session->session.scopes = call.auth.scopes;
    } else if (options_.sessions) {
      std::variant<SessionPtr, HttpResponse> found = FindSession(req);
      if (HttpResponse* refusal = std::get_if<HttpResponse>(&found)) return std::move(*refusal);
      call.session = std::get<SessionPtr>(std::move(found));
      if (options_.authorize && call.session->session.principal != call.auth.principal) {
        // Another principal's session: as if it did not exist (a session id is no credential).
        return ErrorResponse(404, kErrSessionNotFound, "Session not found: initialize again");
      }
      if (options_.authorize) {
        // The same principal may come back with another token (a step-up adds a scope, a
        // narrower one drops some): the session acts with the scopes of the latest request's.
        // Two requests of one principal at once with different tokens: either's scopes may
        // apply to both, never another principal's.
        std::lock_guard<std::mutex> lock(call.session->session.mu);
        call.session->session.user = call.auth.user;
        call.session->session.scopes = call.auth.scopes;
      }
    } else {
      // Stateless: this exchange is its own session, already past the handshake.
      call.session = std::make_shared<SessionEntry>();
      call.session->session.principal = call.auth.principal;
      call.session->session.user = call.auth.user;
      call.session->session.scopes = call.auth.scopes;
      Session& s = call.session->session;
      s.initialize_answered = true;
      s.initialized = true;
      s.protocol_version = HasHeader(req, "MCP-Protocol-Version")
                               ? HeaderValue(req, "MCP-Protocol-Version")
                               : "2025-03-26";
    }
    return call;
  }

  // The 2026-07-28 ladder after the body was read (reference mcp-2026-07-28.md §2, HTTP rungs
  // 2.1-2.6): envelope 400 -32602; headers that contradict the body 400 -32020; a revision we do
  // not serve 400 -32022; required headers missing 400 -32020; a method the era does not have 404
  // -32601. Mcp-Session-Id is ignored: the request runs in a Session of its own.
  std::variant<HttpResponse, Call> PrepareModern(const HttpRequest& req, Call call) {
    const Message& m = call.message;
    if (std::optional<Json> e = server_.ModernEnvelopeError(m)) return RpcErrorResponse(400, *e);
    const std::string claim = m.params["_meta"][kMetaProtocolVersion].get<std::string>();
    const bool request = m.kind == Message::Kind::kRequest;
    const std::optional<std::string> name = McpNameOf(m);
    auto mismatch = [&](const std::string& why) {
      return RpcErrorResponse(400, MakeError(request ? m.id : Json(), kHeaderMismatch,
                                             "Header mismatch: " + why));
    };
    struct Expected {
      const char* header;
      std::optional<std::string> value;  // what the body says; nullopt: nothing to compare
      bool required;
    };
    const Expected expected[] = {
        {"MCP-Protocol-Version", claim, true},
        {"Mcp-Method", m.method, request},
        {"Mcp-Name", name, name.has_value()},
    };
    for (const Expected& e : expected) {
      auto it = req.find(e.header);
      if (it == req.end()) continue;
      const std::optional<std::string> given = DecodeHeaderValue(it->value());
      if (!given) return mismatch(std::string(e.header) + " is not valid =?base64?...?= text");
      if (e.value && *given != *e.value) {
        return mismatch(std::string(e.header) + " does not match the body");
      }
    }
    if (std::optional<Json> e = server_.ModernVersionError(m)) return RpcErrorResponse(400, *e);
    for (const Expected& e : expected) {
      if (e.required && !HasHeader(req, e.header)) {
        return mismatch(std::string("the ") + e.header + " header is required");
      }
    }
    if (std::optional<Json> e = server_.ModernMethodError(m)) return RpcErrorResponse(404, *e);
    call.modern = true;
    call.session = std::make_shared<SessionEntry>();
    call.session->session.principal = call.auth.principal;
    call.session->session.user = call.auth.user;
    call.session->session.scopes = call.auth.scopes;
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
      return Stream(message, session, exchange, call.modern);
    }
    std::vector<Json> notes;
    std::optional<std::string> reply = server_.HandleSerialized(
        message, session, [&](const Json& note) { notes.push_back(note); });
    if (!reply) return exchange.Respond(EmptyResponse(202));  // cancelled: no answer wanted
    HttpResponse res{http::status::ok, 11};
    if (call.initialize && options_.sessions && Initialized(session)) {
      Register(call.session);
      res.set("Mcp-Session-Id", call.session->id);
    }
    if (call.accepts.sse && !notes.empty()) {
      std::string events;
      for (const Json& note : notes) events += SseEvent(note);
      events += SseEventOfLine(*reply);
      res.set(http::field::cache_control, "no-cache");
      res.set(http::field::content_type, "text/event-stream");
      res.body() = std::move(events);
    } else {
      res.set(http::field::content_type, "application/json");
      res.body() = std::move(*reply);
    }
    exchange.Respond(std::move(res));
  }

  // True once the session's initialize was answered with a result (not an error).
  static bool Initialized(Session& session) {
    std::lock_guard<std::mutex> lock(session.mu);
    return session.initialize_answered;
  }

  // Answers with an SSE stream: each notification reaches the client as it is sent. A legacy
  // client that goes away does not cancel the call (2025-11-25); a modern one does (2026-07-28:
  // closing the stream is the cancellation). Either way what is left is not written.
  void Stream(const Message& message, Session& session, Exchange& exchange, bool modern) {
    StreamHead head{http::status::ok, 11};
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    head.set("X-Accel-Buffering", "no");
    head.chunked(true);
    exchange.BeginStream(std::move(head));
    bool connected = true;
    auto write = [&](const Json& m) {
      if (!connected) return;
      connected = exchange.Event(SseEvent(m));
      if (!connected && modern) session.Cancel(message.id);
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

  http_core::HttpCore core_;
  std::thread thread_;  // Start()'s

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

std::size_t HttpTransport::connection_count() const { return impl_->connection_count(); }

std::string HttpTransport::AnswerBytes(std::string_view requests, int max_requests) {
  return impl_->AnswerBytes(requests, max_requests);
}

}  // namespace slurm_rca::mcp

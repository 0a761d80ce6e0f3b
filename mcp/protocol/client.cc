#include "mcp/protocol/client.h"

#include <errno.h>
#include <fcntl.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace slurm_rca::mcp {

using base::Result;
using base::Status;

Status RpcError(int code, std::string message, const Json& data) {
  return Status::RpcError(code, std::move(message), data.is_null() ? "" : data.dump());
}

Json RpcData(const Status& status) {
  if (status.code() != Status::Code::kRpcError || status.payload().empty()) return nullptr;
  return Json::parse(status.payload(), nullptr, /*allow_exceptions=*/false);
}

namespace {

// An HTTP response body longer than this is refused.
constexpr std::size_t kMaxBodyBytes = 64u << 20;

const char* const kSupportedVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// The modern revisions this client speaks.
const char* const kModernVersions[] = {"2026-07-28"};

// The `_meta` keys of the modern envelope (basic/index.mdx, "_meta").
constexpr char kMetaProtocolVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
constexpr char kMetaClientCapabilities[] = "io.modelcontextprotocol/clientCapabilities";
constexpr char kMetaLogLevel[] = "io.modelcontextprotocol/logLevel";
constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";
constexpr int kUnsupportedProtocolVersion = -32022;

bool IsModernVersion(const std::string& v) {
  for (const char* m : kModernVersions) {
    if (v == m) return true;
  }
  return false;
}

// The modern claim of a message: its params._meta protocol version, or "" when it has none.
std::string ModernClaim(const Json& message) {
  auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return "";
  auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) return "";
  auto v = meta->find(kMetaProtocolVersion);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : "";
}

// What Mcp-Name mirrors for a method (streamable-http.mdx; the TS SDK's MCP_NAME_HEADER_SOURCE),
// or nullptr when the method has no Mcp-Name.
const char* McpNameField(const std::string& method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") {
    return "taskId";
  }
  return nullptr;
}

// Base64 with padding and no line breaks (EVP_EncodeBlock: 4 characters per 3 bytes, then a NUL).
std::string Base64(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

// A value as an MCP header carries it: as is when it is safe header text, else
// =?base64?<base64 of its UTF-8>?= (streamable-http.mdx; the same test as the TS SDK's
// needsBase64, which also encodes a value that already looks encoded, to avoid ambiguity).
std::string McpHeaderValue(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?", kSuffix = "?=";
  bool safe = !value.empty() && !(value.size() >= kPrefix.size() + kSuffix.size() &&
                                  value.substr(0, kPrefix.size()) == kPrefix &&
                                  value.substr(value.size() - kSuffix.size()) == kSuffix);
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  if (safe && (space(value.front()) || space(value.back()))) safe = false;
  for (char c : value) {
    const auto b = static_cast<unsigned char>(c);
    if (!(b == '\t' || (b >= 0x20 && b <= 0x7e))) safe = false;
  }
  if (safe) return std::string(value);
  return std::string(kPrefix) + Base64(value) + std::string(kSuffix);
}

// Writes all of `data`. A server that went away yields EPIPE here rather than a SIGPIPE that
// would kill the caller: the signal is blocked for this thread and a pending one is consumed.
bool WriteAll(int fd, std::string_view data) {
  sigset_t pipe_set;
  sigset_t old_set;
  sigset_t pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  bool ok = true;
  int error = 0;
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      error = errno;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  if (!ok && error == EPIPE && !was_pending) {
    struct timespec zero {};
    sigtimedwait(&pipe_set, nullptr, &zero);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = error;
  return ok;
}

// Calls a user callback; what it throws must not end the reading thread.
void Deliver(const NotificationHandler& handler, const Json& notification) {
  if (!handler) return;
  try {
    handler(notification);
  } catch (...) {
  }
}

std::string Millis(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

// Incremental text/event-stream parser: feed bytes, get each event's data.
class SseParser {
 public:
  template <typename OnData>
  void Feed(std::string_view bytes, OnData&& on_data) {
    buffer_.append(bytes);
    std::size_t start = 0;
    for (;;) {
      std::size_t end = buffer_.find('\n', start);
      if (end == std::string::npos) break;
      std::string_view line(buffer_.data() + start, end - start);
      start = end + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) {  // end of event
        if (has_data_) on_data(data_);
        data_.clear();
        has_data_ = false;
        continue;
      }
      if (line.front() == ':') continue;  // comment (keep-alive)
      std::size_t colon = line.find(':');
      std::string_view field = line.substr(0, colon);
      std::string_view value = colon == std::string_view::npos ? "" : line.substr(colon + 1);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (field == "data") {
        if (has_data_) data_.push_back('\n');
        data_.append(value);
        has_data_ = true;
      }
      // id, event and retry need no action: resumption is not implemented.
    }
    buffer_.erase(0, start);
  }
  std::size_t buffered() const { return buffer_.size() + data_.size(); }

 private:
  std::string buffer_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace

// ---- StdioClientTransport ----

StdioClientTransport::StdioClientTransport(int read_fd, int write_fd)
    : read_fd_(read_fd), write_fd_(write_fd) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ended_ = std::string("cannot create the wake-up eventfd: ") + strerror(errno);
    return;
  }
  reader_ = std::thread([this] { ReadLoop(); });
}

StdioClientTransport::~StdioClientTransport() {
  Close();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void StdioClientTransport::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
  }
  cv_.notify_all();
  reader_cv_.notify_all();
  Wake();
  if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
}

void StdioClientTransport::Wake() {
  if (wake_fd_ < 0) return;
  const std::uint64_t one = 1;
  // EAGAIN: the counter is full, so a wake-up is pending anyway.
  while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void StdioClientTransport::SetNotificationHandler(NotificationHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_ = std::move(handler);
}

Status StdioClientTransport::WriteLine(const Json& message) {
  std::string line = Serialize(message);
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(write_mu_);
  if (!WriteAll(write_fd_, line)) {
    return RpcError(kTransportError,
                         std::string("cannot write to the server: ") + strerror(errno));
  }
  return Status();
}

Status StdioClientTransport::Notify(const Json& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return RpcError(kTransportError, "transport closed");
  }
  return WriteLine(message);
}

Result<Json> StdioClientTransport::Request(const Json& request, std::chrono::milliseconds timeout) {
  if (!request.is_object() || !IsValidId(request.value("id", Json()))) {
    return RpcError(kTransportError, "a request needs a string or integer id");
  }
  const std::string key = Serialize(request["id"]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return RpcError(kTransportError, "transport closed");
    if (!ended_.empty()) return RpcError(kTransportError, ended_);
    if (pending_.count(key)) return RpcError(kTransportError, "duplicate request id " + key);
    pending_[key] = std::nullopt;
  }
  // Written while the reading thread still reads: a server that writes while we write (a full
  // pipe each way) is never left unread.
  const Status written = WriteLine(request);

  std::unique_lock<std::mutex> lock(mu_);
  ++waiting_;
  ++calls_started_;
  // The reading thread takes no turn while calls come; one it holds, it gives up.
  if (reading_thread_reads_) Wake();
  while (written.ok()) {
    auto it = pending_.find(key);
    if (it->second.has_value() || closed_ || !ended_.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    if (reading_) {
      // Another caller leads (or the reading thread has yet to step aside): it hands our
      // response over, or the turn when it has its own.
      cv_.wait_until(lock, deadline);
      continue;
    }
    // Lead: read on this thread until the response comes.
    reading_ = true;
    lock.unlock();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    ReadSome(static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    lock.lock();
    reading_ = false;
    cv_.notify_all();  // the turn is free: a waiting caller leads, or the reading thread reads
  }
  --waiting_;
  auto node = pending_.extract(key);
  if (!written.ok()) return written;
  if (!node.empty() && node.mapped().has_value()) return std::move(*node.mapped());
  if (!ended_.empty()) return RpcError(kTransportError, ended_);
  if (closed_) return RpcError(kTransportError, "transport closed");
  return RpcError(kRequestTimeout, "no response within " + Millis(timeout));
}

void StdioClientTransport::ReadLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  std::uint64_t seen = 0;  // calls_started_ when last looked at
  for (;;) {
    if (closed_ || !ended_.empty()) break;
    if (waiting_ > 0 || reading_ || calls_started_ != seen) {
      // Calls are coming, and they read for themselves: look again later, so that back-to-back
      // calls never have to wake this thread.
      seen = calls_started_;
      reader_cv_.wait_for(lock, kIdleBeforeReading);
      continue;
    }
    reading_ = true;
    reading_thread_reads_ = true;
    lock.unlock();
    const ReadStep step = ReadSome(-1);
    lock.lock();
    reading_ = false;
    reading_thread_reads_ = false;
    cv_.notify_all();  // a caller that woke us leads now
    if (step == ReadStep::kEnded) break;
  }
  if (ended_.empty()) ended_ = "transport closed";
  lock.unlock();
  cv_.notify_all();
}

StdioClientTransport::ReadStep StdioClientTransport::ReadSome(int timeout_ms) {
  auto end = [this](std::string why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (ended_.empty()) ended_ = std::move(why);
    }
    cv_.notify_all();
    reader_cv_.notify_all();
    return ReadStep::kEnded;
  };
  struct pollfd fds[2] = {{read_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  const int r = ::poll(fds, 2, timeout_ms);
  if (r < 0 && errno == EINTR) return ReadStep::kIdle;
  if (r < 0) return end(std::string("poll failed: ") + strerror(errno));
  if (fds[1].revents != 0) {
    std::uint64_t count;
    while (::read(wake_fd_, &count, sizeof(count)) < 0 && errno == EINTR) {
    }
    return ReadStep::kWoken;
  }
  if (fds[0].revents == 0) return ReadStep::kIdle;
  char chunk[1 << 16];
  const ssize_t n = ::read(read_fd_, chunk, sizeof(chunk));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return ReadStep::kIdle;
  if (n < 0) return end(std::string("cannot read from the server: ") + strerror(errno));
  if (n == 0) return end("the server closed its output (EOF)");
  lines_.Feed(std::string_view(chunk, static_cast<std::size_t>(n)),
              [this](std::string_view line) { Dispatch(line); }, [] {});
  return ReadStep::kRead;
}

void StdioClientTransport::Dispatch(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  ParsedMessage parsed = ParseMessage(line);
  if (!parsed.ok()) return;  // not ours to answer: a server never sends us garbage on purpose
  const Message& m = *parsed.message;
  switch (m.kind) {
    case Message::Kind::kResponse: {
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pending_.find(Serialize(m.id));
        if (it == pending_.end()) return;  // late answer to a request that timed out
        Json response = {{"jsonrpc", "2.0"}, {"id", m.id}};
        if (m.error.is_null()) {
          response["result"] = m.result;
        } else {
          response["error"] = m.error;
        }
        it->second = std::move(response);
      }
      cv_.notify_all();
      return;
    }
    case Message::Kind::kNotification: {
      NotificationHandler handler;
      {
        std::lock_guard<std::mutex> lock(mu_);
        handler = handler_;
      }
      Deliver(handler, MakeNotification(m.method, m.params));
      return;
    }
    case Message::Kind::kRequest:
      // The only server-to-client request we support is ping; others are refused.
      if (m.method == "ping") {
        WriteLine(MakeResult(m.id, Json::object()));
      } else {
        WriteLine(MakeError(m.id, kMethodNotFound, "Method not found: " + m.method));
      }
      return;
  }
}

// ---- HttpClientTransport ----

HttpClientTransport::HttpClientTransport(std::string host, int port, std::string path,
                                         std::optional<std::string> bearer_token)
    : host_(std::move(host)),
      port_(port),
      path_(std::move(path)),
      bearer_token_(std::move(bearer_token)) {}

HttpClientTransport::HttpClientTransport(std::string host, int port, std::string path,
                                         TokenSource source)
    : host_(std::move(host)),
      port_(port),
      path_(std::move(path)),
      token_source_(std::move(source)) {}

HttpClientTransport::~HttpClientTransport() { Close(); }

Result<std::optional<std::string>> HttpClientTransport::Bearer(bool refresh) {
  if (!token_source_) return bearer_token_;
  Result<std::string> token = token_source_(refresh);
  if (!token.ok()) {
    return RpcError(kTransportError, "no access token: " + token.status().message());
  }
  return std::optional<std::string>(std::move(*token));
}

void HttpClientTransport::SetNotificationHandler(NotificationHandler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_ = std::move(handler);
}

void HttpClientTransport::SetProtocolVersion(const std::string& version) {
  std::lock_guard<std::mutex> lock(mu_);
  protocol_version_ = version;
}

std::string HttpClientTransport::session_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_id_;
}

void HttpClientTransport::Close() {
  std::string session;
  std::vector<std::unique_ptr<httplib::Client>> idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    session = session_id_;
    idle.swap(idle_);
  }
  if (session.empty()) return;  // `idle` closes its connections
  std::unique_ptr<httplib::Client> cli;
  if (idle.empty()) {
    cli = NewConnection();
  } else {
    cli = std::move(idle.back());
    idle.pop_back();
  }
  cli->set_connection_timeout(std::chrono::seconds(2));
  cli->set_read_timeout(std::chrono::seconds(2));
  cli->set_write_timeout(std::chrono::seconds(2));
  httplib::Headers headers = {{"Mcp-Session-Id", session}};
  Result<std::optional<std::string>> bearer = Bearer(false);
  if (bearer.ok() && *bearer) headers.emplace("Authorization", "Bearer " + **bearer);
  cli->Delete(path_, headers);  // 200, 204 or 405: all fine; failures change nothing here
}

std::unique_ptr<httplib::Client> HttpClientTransport::TakeConnection() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<httplib::Client> cli = std::move(idle_.back());
      idle_.pop_back();
      return cli;
    }
  }
  return NewConnection();
}

void HttpClientTransport::UseTls(std::string ca_file) {
  tls_ = true;
  ca_file_ = std::move(ca_file);
}

std::unique_ptr<httplib::Client> HttpClientTransport::NewConnection() const {
  if (tls_) {
    const std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
    auto cli = std::make_unique<httplib::Client>("https://" + host + ":" + std::to_string(port_));
    cli->enable_server_certificate_verification(true);
    if (!ca_file_.empty()) cli->set_ca_cert_path(ca_file_.c_str());
    cli->set_keep_alive(true);
    cli->set_tcp_nodelay(true);
    return cli;
  }
  auto cli = std::make_unique<httplib::Client>(host_, port_);
  cli->set_keep_alive(true);
  // A request written in two parts must not wait for the server's delayed ACK of the first.
  cli->set_tcp_nodelay(true);
  return cli;
}

void HttpClientTransport::GiveBack(std::unique_ptr<httplib::Client> connection) {
  if (!connection->is_socket_open()) return;  // httplib closed it: an error, or Connection: close
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || idle_.size() >= kMaxIdleConnections) return;
  idle_.push_back(std::move(connection));
}

Result<Json> HttpClientTransport::Request(const Json& request, std::chrono::milliseconds timeout) {
  if (!request.is_object() || !IsValidId(request.value("id", Json()))) {
    return RpcError(kTransportError, "a request needs a string or integer id");
  }
  return Post(request, request["id"], timeout);
}

Status HttpClientTransport::Notify(const Json& message) {
  Result<Json> r = Post(message, nullptr, std::chrono::seconds(10));
  return r.ok() ? Status() : r.status();
}

Result<Json> HttpClientTransport::Post(const Json& message, const Json& id,
                                       std::chrono::milliseconds timeout) {
  Result<std::optional<std::string>> bearer = Bearer(false);
  if (!bearer.ok()) return bearer.status();
  Result<Json> r = PostOnce(message, id, timeout, *bearer);
  if (!token_source_ || r.ok()) return r;
  const Json data = RpcData(r.status());
  if (!data.is_object() || data.value("httpStatus", 0) != 401) return r;
  bearer = Bearer(true);
  if (!bearer.ok()) return bearer.status();
  return PostOnce(message, id, timeout, *bearer);
}

Result<Json> HttpClientTransport::PostOnce(const Json& message, const Json& id,
                                           std::chrono::milliseconds timeout,
                                           const std::optional<std::string>& token) {
  std::string session;
  std::string version;
  NotificationHandler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return RpcError(kTransportError, "transport closed");
    session = session_id_;
    version = protocol_version_;
    handler = handler_;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;

  httplib::Request req;
  req.method = "POST";
  req.path = path_;
  req.body = Serialize(message);
  req.set_header("Content-Type", "application/json");
  req.set_header("Accept", "application/json, text/event-stream");
  const std::string claim = ModernClaim(message);
  const bool modern = !claim.empty();
  if (modern) {
    // Stateless: the headers mirror the body (and the server checks that they do).
    const std::string method = message.value("method", std::string());
    req.set_header("MCP-Protocol-Version", claim);
    req.set_header("Mcp-Method", method);
    const char* field = McpNameField(method);
    const Json& params = message["params"];
    auto name = field ? params.find(field) : params.end();
    if (name != params.end() && name->is_string()) {
      req.set_header("Mcp-Name", McpHeaderValue(name->get_ref<const std::string&>()));
    }
  } else {
    if (!session.empty()) req.set_header("Mcp-Session-Id", session);
    if (!version.empty()) req.set_header("MCP-Protocol-Version", version);
  }
  if (token) req.set_header("Authorization", "Bearer " + *token);

  bool answered = false;  // the status line and headers arrived
  bool sse = false;
  bool too_big = false;
  bool timed_out = false;
  std::string body;
  SseParser parser;
  std::optional<Json> response;
  req.response_handler = [&](const httplib::Response& r) {
    answered = true;
    sse = r.get_header_value("Content-Type").rfind("text/event-stream", 0) == 0;
    std::string issued = r.get_header_value("Mcp-Session-Id");
    if (!issued.empty() && !modern) {
      std::lock_guard<std::mutex> lock(mu_);
      session_id_ = issued;
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t total) {
    if (std::chrono::steady_clock::now() > deadline) {
      timed_out = true;
      return false;
    }
    if (!sse) {
      if (body.size() + length > kMaxBodyBytes) {
        too_big = true;
        return false;
      }
      body.append(data, length);
      return true;
    }
    // After the response, the rest of a body of known length is read (and ignored) so that the
    // connection can serve the next request; a chunked stream is not waited for.
    if (response) return total > 0 && total <= kMaxBodyBytes;
    parser.Feed(std::string_view(data, length), [&](const std::string& event) {
      ParsedMessage p = ParseMessage(event);
      if (!p.ok()) return;
      const Message& m = *p.message;
      if (m.kind == Message::Kind::kNotification) {
        Deliver(handler, MakeNotification(m.method, m.params));
      } else if (m.kind == Message::Kind::kResponse && m.id == id && !response) {
        response = Json::parse(event);
      }
    });
    if (parser.buffered() > kMaxBodyBytes) {
      too_big = true;
      return false;
    }
    return !response.has_value() || (total > 0 && total <= kMaxBodyBytes);
  };

  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  bool sent = false;
  std::unique_ptr<httplib::Client> cli = TakeConnection();
  for (int attempt = 0;; ++attempt) {
    // Rounded up, so that a read that times out ends after the deadline.
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const bool reused = cli->is_socket_open();
    cli->set_connection_timeout(std::min<std::chrono::milliseconds>(left, std::chrono::seconds(5)));
    cli->set_read_timeout(left);
    cli->set_write_timeout(left);
    sent = cli->send(req, res, error);
    // A kept-alive connection the server closed as this request went out fails before any byte
    // of a response: send it once more on a new connection. (httplib reports a read timeout as
    // the same error; that one ends past the deadline, and the test above stops the loop.)
    const bool dropped = error == httplib::Error::Read || error == httplib::Error::Write;
    if (sent || attempt > 0 || !reused || answered || !dropped) break;
    cli = NewConnection();
  }
  GiveBack(std::move(cli));
  if (response) return std::move(*response);
  if (timed_out || std::chrono::steady_clock::now() > deadline) {
    return RpcError(kRequestTimeout, "no response within " + Millis(timeout));
  }
  if (too_big) return RpcError(kTransportError, "response larger than 64 MiB");
  if (!sent) {
    return RpcError(kTransportError, "HTTP request to " + host_ + ":" + std::to_string(port_) +
                                              path_ + " failed: " + httplib::to_string(error));
  }
  const Json http = {{"httpStatus", res.status}};
  if (res.status == 202 && id.is_null()) return Json(nullptr);  // notification accepted
  if (res.status >= 200 && res.status < 300 && !sse && !id.is_null()) {
    ParsedMessage p = ParseMessage(body);
    if (p.ok() && p.message->kind == Message::Kind::kResponse && p.message->id == id) {
      return Json::parse(body);
    }
    return RpcError(kTransportError, "the server's reply is not the response to this request",
                         http);
  }
  if (res.status >= 200 && res.status < 300) {
    return RpcError(kTransportError,
                         sse ? "the event stream ended before the response"
                             : "HTTP " + std::to_string(res.status) + " without a response",
                         http);
  }
  // An error status may carry a JSON-RPC error. A modern one answers the request (the spec sends
  // -32602, -32020, -32021, -32022 with 400 and -32601 with 404); elsewhere its message is the
  // most useful part of the transport error.
  ParsedMessage p = ParseMessage(body);
  const bool rpc_error = p.ok() && p.message->kind == Message::Kind::kResponse &&
                         p.message->error.is_object() &&
                         (p.message->id == id || p.message->id.is_null());
  if (modern && !id.is_null() && rpc_error && !sse && res.status >= 400 && res.status < 500 &&
      res.status != 401 && res.status != 403) {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", p.message->error}};
  }
  std::string why = "HTTP " + std::to_string(res.status);
  if (res.status == 404 && !session.empty() && !modern) {
    why += " (session expired: initialize again)";
  }
  if (p.ok() && p.message->kind == Message::Kind::kResponse && p.message->error.is_object()) {
    why += ": " + p.message->error.value("message", std::string());
  } else if (!p.ok() && p.error.is_object() && body.size() < 1000) {
    why += body.empty() ? "" : ": " + body;
  }
  return RpcError(kTransportError, why, http);
}

// ---- Client ----

std::string ToolCallResult::Text() const {
  std::string text;
  if (!content.is_array()) return text;
  for (const Json& block : content) {
    if (!block.is_object() || block.value("type", Json()) != "text") continue;
    auto t = block.find("text");
    if (t == block.end() || !t->is_string()) continue;
    if (!text.empty()) text.push_back('\n');
    text += t->get_ref<const std::string&>();
  }
  return text;
}

Client::Client(std::unique_ptr<ClientTransport> transport, ClientOptions options)
    : transport_(std::move(transport)), options_(std::move(options)) {
  transport_->SetNotificationHandler([this](const Json& n) { OnNotification(n); });
}

Client::~Client() {
  transport_->Close();
  transport_->SetNotificationHandler(nullptr);
}

void Client::OnNotification(const Json& notification) {
  if (notification.value("method", Json()) == "notifications/progress") {
    const Json params = notification.value("params", Json::object());
    ProgressCallback callback;
    if (params.is_object() && params.contains("progressToken")) {
      std::lock_guard<std::mutex> lock(progress_mu_);
      auto it = progress_.find(Serialize(params["progressToken"]));
      if (it != progress_.end()) callback = it->second;
    }
    auto progress = params.find("progress");
    if (callback && progress != params.end() && progress->is_number()) {
      std::optional<double> total;
      auto t = params.find("total");
      if (t != params.end() && t->is_number()) total = t->get<double>();
      auto message = params.find("message");
      callback(progress->get<double>(), total,
               message != params.end() && message->is_string() ? message->get<std::string>()
                                                               : std::string());
    }
  }
  if (options_.on_notification) options_.on_notification(notification);
}

const char* EraName(Era era) { return era == Era::kModern ? "modern" : "legacy"; }

Json Client::Envelope() const {
  Json meta = {{kMetaProtocolVersion, connection_.protocol_version},
               {kMetaClientInfo, client_info_},
               {kMetaClientCapabilities, Json::object()}};
  std::lock_guard<std::mutex> lock(log_level_mu_);
  if (!log_level_.empty()) meta[kMetaLogLevel] = log_level_;
  return meta;
}

Status Client::RefusedInModern(const std::string& method) const {
  // What 2026-07-28 removed (changelog.mdx; schema.ts ClientRequest, ClientNotification).
  static const char* const kRemoved[] = {"initialize",
                                         "notifications/initialized",
                                         "ping",
                                         "logging/setLevel",
                                         "resources/subscribe",
                                         "resources/unsubscribe",
                                         "notifications/roots/list_changed",
                                         "notifications/elicitation/complete"};
  for (const char* removed : kRemoved) {
    if (method == removed) {
      return RpcError(kMethodNotFound, method + " does not exist in MCP " +
                                           connection_.protocol_version +
                                           ", the revision this client connected with");
    }
  }
  return Status();
}

namespace {

// Stamps the modern envelope on params: the keys the caller did not set.
Status AddEnvelope(const std::string& method, const Json& envelope, Json& params) {
  if (params.is_null()) params = Json::object();
  if (!params.is_object()) {
    return RpcError(kInvalidParams, method + ": params of a modern message must be an object");
  }
  Json& meta = params["_meta"];
  if (!meta.is_object()) meta = Json::object();
  for (const auto& [key, value] : envelope.items()) {
    if (!meta.contains(key)) meta[key] = value;
  }
  return Status();
}

}  // namespace

Result<Json> Client::Call(const std::string& method, Json params,
                          std::optional<std::chrono::milliseconds> timeout) {
  const bool modern = connection_.era == Era::kModern;
  if (modern) {
    if (Status refused = RefusedInModern(method); !refused.ok()) return refused;
    if (Status bad = AddEnvelope(method, Envelope(), params); !bad.ok()) return bad;
  }
  const Json id = next_id_.fetch_add(1);
  Json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) request["params"] = std::move(params);
  Result<Json> r = transport_->Request(request, timeout.value_or(options_.timeout));
  if (!r.ok()) {
    if (r.status().rpc_code() == kRequestTimeout && method != "initialize") {
      Notify("notifications/cancelled", {{"requestId", id}, {"reason", "request timed out"}});
    }
    return r.status();
  }
  const Json& response = r.value();
  auto error = response.find("error");
  if (error != response.end() && error->is_object()) {
    auto code = error->find("code");
    auto message = error->find("message");
    return RpcError(
        code != error->end() && code->is_number_integer() ? code->get<int>() : kInternalError,
        message != error->end() && message->is_string() ? message->get<std::string>()
                                                        : std::string("error without a message"),
        error->value("data", Json()));
  }
  auto result = response.find("result");
  if (result == response.end()) {
    return RpcError(kTransportError, method + ": response without a result");
  }
  if (modern && result->is_object()) {
    // An absent resultType means complete (basic/index.mdx, "ResultType").
    auto type = result->find("resultType");
    if (type != result->end() && *type != "complete") {
      return RpcError(kTransportError, method + ": the server answered resultType " + type->dump() +
                                           ", which this client does not handle");
    }
  }
  return *result;
}

Status Client::Notify(const std::string& method, Json params) {
  if (connection_.era == Era::kModern) {
    if (Status refused = RefusedInModern(method); !refused.ok()) return refused;
    if (Status bad = AddEnvelope(method, Envelope(), params); !bad.ok()) return bad;
  }
  return transport_->Notify(MakeNotification(method, std::move(params)));
}

struct Client::Probe {
  enum class Verdict { kModern, kRetry, kLegacy, kError };
  Verdict verdict = Verdict::kLegacy;
  Json result;        // kModern: the DiscoverResult
  std::string retry;  // kRetry: the revision to probe next
  Status status;      // kLegacy (when an error decided it) and kError: why
  std::string why;    // kLegacy: what decided it, for Connection::fallback
};

Client::Probe Client::Discover(const std::string& version) {
  Probe p;
  auto legacy = [&p](std::string why, Status status = Status()) {
    p.verdict = Probe::Verdict::kLegacy;
    p.why = "server/discover: " + why;
    p.status = status.ok() ? RpcError(kTransportError, p.why) : std::move(status);
    return p;
  };
  Json request = {{"jsonrpc", "2.0"},
                  {"id", next_id_.fetch_add(1)},
                  {"method", "server/discover"},
                  {"params",
                   {{"_meta",
                     {{kMetaProtocolVersion, version},
                      {kMetaClientInfo, client_info_},
                      {kMetaClientCapabilities, Json::object()}}}}}};
  Result<Json> r = transport_->Request(request, options_.timeout);
  if (!r.ok()) {
    // No JSON-RPC answer. Over HTTP a 4xx without a modern error body is a server that does not
    // know the modern era; 401/403, 5xx, a timeout and a refused connection say nothing about
    // the era. Over stdio a timeout or EOF is a legacy server's answer to an unknown first
    // message (the TS SDK falls back on both).
    const Status& s = r.status();
    const Json data = RpcData(s);
    const Json http = data.is_object() ? data.value("httpStatus", Json()) : Json();
    const int status = http.is_number_integer() ? http.get<int>() : 0;
    if (status >= 400 && status < 500 && status != 401 && status != 403) {
      return legacy(s.message(), s);
    }
    if (status != 0 || transport_->kind() == ClientTransport::Kind::kHttp) {
      p.verdict = Probe::Verdict::kError;
      p.status = RpcError(s.rpc_code(), "server/discover: " + s.message(), data);
      return p;
    }
    return legacy(s.message(), s);
  }
  const Json& response = r.value();
  auto error = response.find("error");
  if (error != response.end() && error->is_object()) {
    const Json code = error->value("code", Json());
    const std::string message = error->value("message", std::string());
    const Json data = error->value("data", Json());
    Status status =
        RpcError(code.is_number_integer() ? code.get<int>() : kInternalError, message, data);
    if (code == kUnsupportedProtocolVersion) {
      // A modern server that does not serve `version`: try one it lists, if this client speaks
      // it; a server that lists only legacy revisions is a legacy server.
      const Json supported = data.is_object() ? data.value("supported", Json()) : Json();
      if (supported.is_array()) {
        for (const Json& v : supported) {
          if (v.is_string() && IsModernVersion(v.get<std::string>())) {
            p.verdict = Probe::Verdict::kRetry;
            p.retry = v.get<std::string>();
            p.status = std::move(status);
            return p;
          }
        }
      }
      return legacy("error -32022 (" + message + "), supported " + supported.dump(),
                    std::move(status));
    }
    return legacy("error " + code.dump() + ": " + message, std::move(status));
  }
  const Json result = response.value("result", Json());
  const Json versions = result.is_object() ? result.value("supportedVersions", Json()) : Json();
  if (!versions.is_array() || !result.value("capabilities", Json()).is_object()) {
    return legacy("the result is not a DiscoverResult (supportedVersions, capabilities)");
  }
  std::string mutual;
  for (const Json& v : versions) {
    if (v == version) {
      p.verdict = Probe::Verdict::kModern;
      p.result = result;
      return p;
    }
    if (v.is_string() && mutual.empty() && IsModernVersion(v.get<std::string>())) mutual = v;
  }
  if (!mutual.empty()) {
    p.verdict = Probe::Verdict::kRetry;
    p.retry = mutual;
    p.status = RpcError(kUnsupportedProtocolVersion, "supportedVersions lacks " + version);
    return p;
  }
  return legacy("supportedVersions " + versions.dump() + " has no revision this client speaks");
}

Result<Connection> Client::Connect(const std::string& client_name,
                                   const std::string& client_version, EraMode mode) {
  client_info_ = {{"name", client_name}, {"version", client_version}};
  std::string fallback;
  if (mode != EraMode::kLegacy) {
    std::string version = options_.modern_protocol_version;
    for (int attempt = 0;; ++attempt) {
      Probe p = Discover(version);
      if (p.verdict == Probe::Verdict::kModern) {
        Connection c;
        c.era = Era::kModern;
        c.protocol_version = version;
        const Json meta = p.result.value("_meta", Json::object());
        c.server_info =
            meta.is_object() ? meta.value(kMetaServerInfo, Json::object()) : Json::object();
        c.capabilities = p.result["capabilities"];
        const Json instructions = p.result.value("instructions", Json());
        if (instructions.is_string()) c.instructions = instructions.get<std::string>();
        for (const Json& v : p.result["supportedVersions"]) {
          if (v.is_string()) c.supported_versions.push_back(v.get<std::string>());
        }
        connection_ = std::move(c);
        return connection_;
      }
      if (p.verdict == Probe::Verdict::kError) return p.status;
      if (p.verdict == Probe::Verdict::kRetry) {
        // Once: a server that refuses the revision it just listed will not agree on another.
        if (attempt == 0) {
          version = p.retry;
          continue;
        }
        return RpcError(p.status.rpc_code(),
                        "server/discover: the server refused " + version +
                            ", a revision it lists: " + p.status.message(),
                        RpcData(p.status));
      }
      if (mode == EraMode::kModern) {
        return RpcError(p.status.rpc_code(),
                        "the client is pinned to MCP " + options_.modern_protocol_version +
                            " and the server does not speak it: " + p.why,
                        RpcData(p.status));
      }
      fallback = p.why;
      break;
    }
  }
  Result<InitializeResult> init = Initialize(client_name, client_version);
  if (!init.ok()) {
    if (fallback.empty()) return init.status();
    return RpcError(init.status().rpc_code(),
                    "initialize (after " + fallback + "): " + init.status().message(),
                    RpcData(init.status()));
  }
  connection_.fallback = fallback;
  return connection_;
}

Result<InitializeResult> Client::Initialize(const std::string& client_name,
                                            const std::string& client_version) {
  Json params = {{"protocolVersion", options_.protocol_version},
                 {"capabilities", Json::object()},
                 {"clientInfo", {{"name", client_name}, {"version", client_version}}}};
  Result<Json> r = Call("initialize", std::move(params));
  if (!r.ok()) return r.status();
  const Json& result = r.value();
  if (!result.is_object() || !result.contains("protocolVersion") ||
      !result["protocolVersion"].is_string()) {
    return RpcError(kTransportError, "initialize: result without protocolVersion");
  }
  InitializeResult init;
  init.protocol_version = result["protocolVersion"].get<std::string>();
  bool supported = false;
  for (const char* v : kSupportedVersions) supported = supported || init.protocol_version == v;
  if (!supported) {
    return RpcError(kTransportError, "initialize: the server chose protocol " +
                                         init.protocol_version +
                                         ", which this client does not speak");
  }
  init.server_info = result.value("serverInfo", Json::object());
  init.capabilities = result.value("capabilities", Json::object());
  auto instructions = result.find("instructions");
  if (instructions != result.end() && instructions->is_string()) {
    init.instructions = instructions->get<std::string>();
  }
  Connection c;
  c.era = Era::kLegacy;
  c.protocol_version = init.protocol_version;
  c.server_info = init.server_info;
  c.capabilities = init.capabilities;
  c.instructions = init.instructions;
  connection_ = std::move(c);
  client_info_ = {{"name", client_name}, {"version", client_version}};
  transport_->SetProtocolVersion(init.protocol_version);
  Status s = Notify("notifications/initialized", nullptr);
  if (!s.ok()) return s;
  return init;
}

Result<std::vector<Json>> Client::ListTools() {
  std::vector<Json> tools;
  Json cursor;
  for (int page = 0; page < 1000; ++page) {
    Json params = Json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    Result<Json> r = Call("tools/list", std::move(params));
    if (!r.ok()) return r.status();
    const Json& result = r.value();
    if (!result.is_object() || !result.contains("tools") || !result["tools"].is_array()) {
      return RpcError(kTransportError, "tools/list: result without a tools array");
    }
    for (const Json& t : result["tools"]) tools.push_back(t);
    auto next = result.find("nextCursor");
    if (next == result.end() || !next->is_string()) return tools;
    cursor = *next;
  }
  return RpcError(kTransportError, "tools/list: more than 1000 pages");
}

Result<ToolCallResult> Client::CallTool(const std::string& name, const Json& arguments,
                                        ProgressCallback on_progress,
                                        std::optional<std::chrono::milliseconds> timeout) {
  Json params = {{"name", name}, {"arguments", arguments.is_null() ? Json::object() : arguments}};
  std::string token_key;
  if (on_progress) {
    const Json token = "progress-" + std::to_string(next_id_.fetch_add(1));
    token_key = Serialize(token);
    params["_meta"] = {{"progressToken", token}};
    std::lock_guard<std::mutex> lock(progress_mu_);
    progress_[token_key] = std::move(on_progress);
  }
  Result<Json> r = Call("tools/call", std::move(params), timeout);
  if (!token_key.empty()) {
    std::lock_guard<std::mutex> lock(progress_mu_);
    progress_.erase(token_key);
  }
  if (!r.ok()) return r.status();
  const Json& result = r.value();
  if (!result.is_object() || !result.contains("content") || !result["content"].is_array()) {
    return RpcError(kTransportError, "tools/call: result without a content array");
  }
  ToolCallResult call;
  call.content = result["content"];
  auto is_error = result.find("isError");
  call.is_error = is_error != result.end() && is_error->is_boolean() && is_error->get<bool>();
  auto structured = result.find("structuredContent");
  if (structured != result.end() && !structured->is_null()) call.structured = *structured;
  return call;
}

Status Client::Ping() {
  Result<Json> r = Call("ping", nullptr);
  if (!r.ok()) return r.status();
  if (!r.value().is_object()) return RpcError(kTransportError, "ping: result is not {}");
  return Status();
}

Status Client::SetLogLevel(const std::string& level) {
  if (connection_.era == Era::kModern) {
    std::lock_guard<std::mutex> lock(log_level_mu_);
    log_level_ = level;
    return Status();
  }
  Result<Json> r = Call("logging/setLevel", {{"level", level}});
  return r.ok() ? Status() : r.status();
}

}  // namespace slurm_rca::mcp

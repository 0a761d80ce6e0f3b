// A C++ MCP client for tests and agents. It speaks both eras of the protocol: the modern one
// (2026-07-28: no handshake, no session, every request carries its `_meta` envelope) and the
// legacy one (2025-11-25, negotiating down like the server: initialize, then a session).
//
// A Client speaks the protocol over a ClientTransport: StdioClientTransport talks to a server
// through a pair of file descriptors the caller already has (it never starts a process: the
// caller starts the server outside the read path and hands over pipes), HttpClientTransport
// talks Streamable HTTP (JSON or SSE responses, the era's headers, optional bearer token) over
// kept-alive connections.
//
//   Client client(std::make_unique<StdioClientTransport>(from_server_fd, to_server_fd));
//   base::Result<Connection> c = client.Connect("rca-agent", "0.1.0");   // modern, else legacy
//   if (!c.ok()) return Fail(c.status().ToString());
//   base::Result<ToolCallResult> r = client.CallTool("slurm_query", {{"topic", "queue"}},
//       [](double p, std::optional<double> total, const std::string& msg) { ... });
//   if (r.ok() && !r->is_error) Use(r->structured);
//
// Connect picks the era the way the spec's dual-era client does (shared/reference/
// mcp-2026-07-28.md, section 2): it probes with server/discover; a DiscoverResult that lists
// 2026-07-28 means modern; -32022 naming a modern revision this client speaks is probed again,
// once, at it; -32022 naming only legacy revisions, any other JSON-RPC error, an HTTP 4xx without
// a modern error body, or (stdio) a probe that times out or ends in EOF falls back to initialize.
// HTTP 401/403, 5xx and network failures are errors: they say nothing about the era. EraMode pins
// either era instead. Initialize() is the legacy handshake alone, for callers that want only it.
//
// Errors are values: nothing throws out of this API. A JSON-RPC error from the server keeps its
// code and message; a transport failure is kTransportError (-32000), an expired per-request
// timeout kRequestTimeout (-32001, and notifications/cancelled is sent for the request). A tool
// that fails is not an error of the call: it is a ToolCallResult with is_error set. A method the
// connected era does not have (ping, initialize or logging/setLevel in the modern era) fails here,
// without a request, as kMethodNotFound.
//
// Threads: Connect (or Initialize) runs before any other request, on one thread; afterwards
// requests may be issued from several threads at once. Notification and progress callbacks run on
// the thread that reads the server (stdio: a waiting caller's own, or the transport's reading
// thread between calls) or the requesting thread (HTTP); they must not issue
// requests themselves.
#ifndef SLURM_RCA_MCP_PROTOCOL_CLIENT_H_
#define SLURM_RCA_MCP_PROTOCOL_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "mcp/protocol/jsonrpc.h"

namespace httplib {
class Client;
}

namespace slurm_rca::mcp {

inline constexpr int kTransportError = -32000;  // I/O failure, EOF, HTTP status, bad reply
inline constexpr int kRequestTimeout = -32001;  // no response within the request's timeout

// Errors as values (base/status.h). A JSON-RPC error, or a transport failure named by one of the
// codes above, is an RpcError status: its code is rpc_code(), its data (e.g. {"httpStatus": 404})
// the payload, read back with RpcData.
base::Status RpcError(int code, std::string message, const Json& data = nullptr);
// The data of an RpcError status; null when it had none or is another kind.
Json RpcData(const base::Status& status);

using NotificationHandler = std::function<void(const Json& notification)>;

// Moves JSON-RPC messages to and from one server.
class ClientTransport {
 public:
  virtual ~ClientTransport() = default;
  // Sends a request and waits up to `timeout` for the response carrying its id. Returns the whole
  // response message (result or error), or a transport Status.
  virtual base::Result<Json> Request(const Json& request, std::chrono::milliseconds timeout) = 0;
  // Sends a notification (or a response); nothing comes back.
  virtual base::Status Notify(const Json& message) = 0;
  // Receives every notification the server sends. Set before the first request.
  virtual void SetNotificationHandler(NotificationHandler handler) = 0;
  // The negotiated legacy revision (HTTP sends it as MCP-Protocol-Version on later requests).
  // Modern requests name their revision in their own `_meta`; the transport reads it there.
  virtual void SetProtocolVersion(const std::string& version) {}
  // kHttp: a failed request carries its HTTP status, and a timeout or a refused connection is an
  // error of the network. kStream (stdio): a server that never answers an unknown method, or
  // exits on one, may still speak the legacy era. Connect reads the failed probe by it.
  enum class Kind { kStream, kHttp };
  virtual Kind kind() const { return Kind::kStream; }
  // Ends the connection; later requests fail. Idempotent.
  virtual void Close() {}
};

// Newline-delimited JSON over two descriptors (the server's stdout and stdin). It neither opens
// nor closes them: close write_fd after Close() (or destruction) to tell the server to exit.
//
// Who reads the server (leader/follower): while a call waits, a waiting caller reads on its own
// thread (it leads: it dispatches every line it reads, its own response, other callers'
// responses, notifications, the server's pings, which it answers, and EOF; the other callers
// wait to be handed theirs, and one of them leads when the leader has its answer). Between
// calls a reading thread that runs from construction to Close() reads, so that the server is
// never left unread for long: it starts once no call has started for kIdleBeforeReading, and a
// call that starts while it reads wakes it (wake_fd_) to step aside. Calls that follow each
// other closely thus wake no other thread; the first call after a pause pays one wake-up
// (bench/README.md, "MCP client").
class StdioClientTransport : public ClientTransport {
 public:
  StdioClientTransport(int read_fd, int write_fd);
  ~StdioClientTransport() override;
  StdioClientTransport(const StdioClientTransport&) = delete;
  StdioClientTransport& operator=(const StdioClientTransport&) = delete;

  base::Result<Json> Request(const Json& request, std::chrono::milliseconds timeout) override;
  base::Status Notify(const Json& message) override;
  void SetNotificationHandler(NotificationHandler handler) override;
  void Close() override;

 private:
  enum class ReadStep { kRead, kIdle, kWoken, kEnded };
  // How long after the last call started the reading thread waits before it reads.
  static constexpr std::chrono::milliseconds kIdleBeforeReading{10};

  // The reading thread: reads while no call waits, until Close() or the end of the server.
  void ReadLoop();
  // Waits up to timeout_ms (-1: no limit) for the server's output or wake_fd_, reads one chunk
  // and dispatches every whole line in it. Only the holder of the reading turn (reading_) calls
  // it. kIdle: nothing to read in time; kWoken: wake_fd_ fired (it is drained); kEnded: EOF or
  // an error, recorded in ended_.
  ReadStep ReadSome(int timeout_ms);
  void Dispatch(std::string_view line);
  void Wake();  // makes a ReadSome that waits return kWoken
  base::Status WriteLine(const Json& message);

  const int read_fd_;
  const int write_fd_;
  int wake_fd_ = -1;  // an eventfd: Close(), or a caller wants the reading thread to step aside
  std::thread reader_;

  // The line being read; only the holder of the reading turn touches them.
  LineSplitter lines_{64u << 20};  // a line over 64 MiB is dropped (its request then times out)

  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;         // for callers: a response, the reading turn, the end
  std::condition_variable reader_cv_;  // for the reading thread: the end
  std::map<std::string, std::optional<Json>> pending_;  // serialized id -> response
  int waiting_ = 0;                                     // callers waiting for their response
  std::uint64_t calls_started_ = 0;                     // calls that started waiting, ever
  bool reading_ = false;                                // someone holds the reading turn
  bool reading_thread_reads_ = false;                   // ... and it is the reading thread
  NotificationHandler handler_;
  bool closed_ = false;  // Close() was called
  std::string ended_;    // why reading stopped (EOF, error), empty while it runs
};

// Streamable HTTP (one POST per message) with cpp-httplib. Plain HTTP only.
//
// The era of each message is read from the message itself. A request or notification whose
// params._meta carries "io.modelcontextprotocol/protocolVersion" is modern: it goes out with
// MCP-Protocol-Version (that claim), Mcp-Method (its method) and, for tools/call and prompts/get,
// Mcp-Name = params.name (resources/read: params.uri; tasks/*: params.taskId), a value that is not
// safe header text (a byte outside 0x20-0x7E or tab, leading or trailing white space, empty, or
// already of the form =?base64?...?=) sent as =?base64?<base64 of its UTF-8>?=. It never carries
// Mcp-Session-Id, a session id the server issues in answer is ignored, and an HTTP 4xx (but
// 401/403) whose body is a JSON-RPC error answers the request with that error. Any other message
// is legacy: Mcp-Session-Id once the server issued one, the revision of SetProtocolVersion, and
// an HTTP error status is kTransportError with data {"httpStatus": N}.
//
// Connections are kept alive: a POST takes an idle connection (the most recently used) or opens
// one, and gives it back when its response was read to the end, so one caller at a time uses one
// TCP connection for the whole session, and concurrent requests each hold their own (a long SSE
// call never blocks another). At most kMaxIdleConnections stay open between requests; Close()
// closes them. A streamed (chunked) SSE response ends the exchange at the response event, so its
// connection is closed rather than reused.
//
// The server may close an idle connection at any time. One found closed before a request is
// replaced; one that fails with no byte of the response read, when it had already served a
// request, is replaced and the request sent once more. In that one case a request can reach the
// server twice (if the server read it and then dropped the connection without answering); all of
// slurm-mcp's tools only read.
//
// What keeping alive asks of the server: TCP_NODELAY (else each answer written in two parts
// waits 40 ms for our delayed ACK), and no thread held per open connection (a server with N such
// threads serves N clients at once; the others wait, bench/README.md "MCP client").
// Where a client's bearer tokens come from when they expire (OAuth): called with refresh false
// for the token to send (it may keep one), and with refresh true after the server answered 401
// to it, for a new one. An error is the request's error.
using TokenSource = std::function<base::Result<std::string>(bool refresh)>;

class HttpClientTransport : public ClientTransport {
 public:
  HttpClientTransport(std::string host, int port, std::string path = "/mcp",
                      std::optional<std::string> bearer_token = std::nullopt);
  // Tokens from `source`: a request the server answers with 401 is sent once more with a token
  // from source(true).
  HttpClientTransport(std::string host, int port, std::string path, TokenSource source);
  ~HttpClientTransport() override;

  base::Result<Json> Request(const Json& request, std::chrono::milliseconds timeout) override;
  base::Status Notify(const Json& message) override;
  void SetNotificationHandler(NotificationHandler handler) override;
  void SetProtocolVersion(const std::string& version) override;
  Kind kind() const override { return Kind::kHttp; }
  // Ends the session with DELETE when the server issued one (405 is accepted); modern requests
  // never get one, so a client that stayed modern sends no DELETE.
  void Close() override;

  std::string session_id() const;

  // https from the next connection on: the server's certificate checked against the PEM CAs in
  // `ca_file` ('' : the system's) and its name against the host. Before the first request.
  void UseTls(std::string ca_file);

  static constexpr std::size_t kMaxIdleConnections = 4;

 private:
  // POSTs one message; `id` is the request id awaited, or null for a notification. With a token
  // source, once more with a new token after a 401.
  base::Result<Json> Post(const Json& message, const Json& id, std::chrono::milliseconds timeout);
  base::Result<Json> PostOnce(const Json& message, const Json& id,
                              std::chrono::milliseconds timeout,
                              const std::optional<std::string>& token);
  // The token to send: the fixed one, or the source's.
  base::Result<std::optional<std::string>> Bearer(bool refresh);
  // An idle connection, or a new one (connected on its first request).
  std::unique_ptr<httplib::Client> TakeConnection();
  std::unique_ptr<httplib::Client> NewConnection() const;
  // Keeps a connection still open for the next request, unless enough are kept or we closed.
  void GiveBack(std::unique_ptr<httplib::Client> connection);

  const std::string host_;
  const int port_;
  const std::string path_;
  const std::optional<std::string> bearer_token_;
  const TokenSource token_source_;
  bool tls_ = false;
  std::string ca_file_;
  mutable std::mutex mu_;
  std::string session_id_;
  std::string protocol_version_;
  NotificationHandler handler_;
  bool closed_ = false;
  std::vector<std::unique_ptr<httplib::Client>> idle_;  // most recently used last
};

struct ClientOptions {
  std::chrono::milliseconds timeout{60000};     // per request (server/discover too), unless a
                                                // call says otherwise
  std::string protocol_version = "2025-11-25";  // requested in initialize
  // The revision the first server/discover probe asks for. A server that answers -32022 listing
  // one this client speaks (only 2026-07-28) is probed once more at that one.
  std::string modern_protocol_version = "2026-07-28";
  NotificationHandler on_notification;  // every notification the server sends
};

// The two eras of MCP. kModern: 2026-07-28, stateless, server/discover; kLegacy: 2025-11-25 and
// the revisions before it, initialize and (over HTTP) a session.
enum class Era { kLegacy, kModern };
// "modern" or "legacy".
const char* EraName(Era era);

// How Connect picks the era.
enum class EraMode {
  kAuto,    // probe with server/discover, fall back to initialize (see the top of this file)
  kModern,  // probe; any outcome but a DiscoverResult is an error, initialize is never sent
  kLegacy,  // no probe: initialize, as Initialize() does
};

// What Connect found. In the modern era it comes from the DiscoverResult, in the legacy era from
// the InitializeResult.
struct Connection {
  Era era = Era::kLegacy;
  std::string protocol_version;  // 2026-07-28, or what initialize negotiated
  Json server_info;              // {name, version, ...}; modern: the result's _meta serverInfo
  Json capabilities;
  std::string instructions;
  std::vector<std::string> supported_versions;  // modern: DiscoverResult.supportedVersions
  // kAuto that ended legacy: the probe's outcome that decided it ("server/discover: error
  // -32601: Method not found"); empty otherwise.
  std::string fallback;
};

struct InitializeResult {
  std::string protocol_version;  // negotiated
  Json server_info;              // {name, title?, version}
  Json capabilities;
  std::string instructions;
};

struct ToolCallResult {
  Json content = Json::array();
  std::optional<Json> structured;  // structuredContent
  bool is_error = false;
  std::string Text() const;  // the text blocks of content, joined by newlines
};

// progress strictly increases; total and message are optional.
using ProgressCallback =
    std::function<void(double progress, std::optional<double> total, const std::string& message)>;

class Client {
 public:
  explicit Client(std::unique_ptr<ClientTransport> transport, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Picks the era (see the top of this file) and connects in it: modern, nothing more is sent;
  // legacy, initialize then notifications/initialized. Errors: the probe's HTTP 401/403 (the
  // transport's status, data.httpStatus), 5xx or network failure; kModern and a server that does
  // not speak 2026-07-28; a server that answers -32022 to the probe at the version it listed;
  // and whatever initialize returns.
  base::Result<Connection> Connect(const std::string& client_name,
                                   const std::string& client_version,
                                   EraMode mode = EraMode::kAuto);
  // The legacy handshake alone: initialize, then notifications/initialized. Fails when the server
  // picks a revision this client does not speak.
  base::Result<InitializeResult> Initialize(const std::string& client_name,
                                            const std::string& client_version);
  // Every tool, following nextCursor.
  base::Result<std::vector<Json>> ListTools();
  // `on_progress` (when set) adds a progressToken and receives notifications/progress.
  base::Result<ToolCallResult> CallTool(
      const std::string& name, const Json& arguments, ProgressCallback on_progress = nullptr,
      std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Legacy only: the modern era has no ping (kMethodNotFound, nothing sent).
  base::Status Ping();
  // Legacy: logging/setLevel. Modern (no such method): every later request carries the level as
  // _meta "io.modelcontextprotocol/logLevel"; without it the server sends no log notifications.
  base::Status SetLogLevel(const std::string& level);

  // Any request: its result, or the server's error as a Status. On timeout the request is
  // cancelled with notifications/cancelled. In the modern era `params` (null or an object) gets
  // the `_meta` envelope (protocolVersion, clientInfo, clientCapabilities {}, the log level when
  // one was set; keys already in params._meta, such as progressToken, are kept), and a result
  // whose resultType is not "complete" (input_required, task) is an error: this client answers
  // no server requests.
  base::Result<Json> Call(const std::string& method, Json params,
                          std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // A notification; in the modern era with the same envelope (the transport reads its revision).
  base::Status Notify(const std::string& method, Json params);

  // kLegacy until Connect picks modern.
  Era era() const { return connection_.era; }
  // What Connect (or Initialize) found; default-constructed before.
  const Connection& connection() const { return connection_; }
  const std::string& protocol_version() const { return connection_.protocol_version; }
  ClientTransport& transport() { return *transport_; }

 private:
  struct Probe;
  void OnNotification(const Json& notification);
  // One server/discover at `version`, and what its outcome means.
  Probe Discover(const std::string& version);
  // params._meta of a modern message.
  Json Envelope() const;
  base::Status RefusedInModern(const std::string& method) const;

  std::unique_ptr<ClientTransport> transport_;
  ClientOptions options_;
  std::atomic<long long> next_id_{1};
  Connection connection_;              // written by Connect/Initialize only, before other requests
  Json client_info_ = Json::object();  // {name, version}, sent in every modern request
  mutable std::mutex log_level_mu_;
  std::string log_level_;  // modern: SetLogLevel's level, stamped on later requests
  std::mutex progress_mu_;
  std::map<std::string, ProgressCallback> progress_;  // serialized token -> callback
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_CLIENT_H_

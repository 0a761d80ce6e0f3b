// The MCP server core: lifecycle, version negotiation, ping, logging, tools/list, tools/call,
// progress and cancellation, and read-only resources (resources/list, resources/read,
// resources/templates/list), independent of any transport.
//
// Transports (stdio, HTTP) parse bytes into Messages and call Server::Handle with the Session the
// message belongs to. Handle is thread-safe: a transport may run tool calls on worker threads so
// that ping and cancellation are never blocked behind a slow Slurm read. The dispatcher keeps all
// per-connection state in Session, so a stateless (2026-07-28) front can be added later.
//
//   Server server(ServerOptions{.name = "slurm-mcp", .version = "0.1.0", .tools = tools});
//   Session session;
//   std::optional<Json> reply = server.Handle(message, session, [&](Json note) { write(note); });
#ifndef SLURM_RCA_MCP_PROTOCOL_SERVER_H_
#define SLURM_RCA_MCP_PROTOCOL_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcp/protocol/jsonrpc.h"

namespace slurm_rca::mcp {

// Protocol revisions, newest first. The first is the wire revision; older ones are negotiated.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

// What a tool handler may do while it runs.
class ToolContext {
 public:
  virtual ~ToolContext() = default;
  // Sends notifications/progress when the caller gave a progressToken; otherwise nothing.
  virtual void Progress(double progress, std::optional<double> total, const std::string& message) = 0;
  // Sends notifications/message when level is at or above the session's level.
  virtual void Log(const std::string& level, const Json& data) = 0;
  // True once the caller sent notifications/cancelled for this request.
  virtual bool Cancelled() const = 0;
};

struct ToolResult {
  Json content = Json::array();       // text blocks, etc.
  std::optional<Json> structured;     // structuredContent; never set together with is_error
  bool is_error = false;
};

struct Tool {
  std::string name;         // ^[a-zA-Z0-9_-]{1,64}$
  std::string title;
  std::string description;
  Json input_schema;        // a JSON Schema object
  Json output_schema;       // null when the tool has none
  Json annotations;         // readOnlyHint, ...
  // Runs the tool on validated-by-the-handler arguments. Errors in arguments are returned as
  // is_error results (2025-11-25), never thrown.
  std::function<ToolResult(const Json& arguments, ToolContext& context)> run;

  Json Describe() const;    // the tools/list entry
};

// A read-only text resource (slurm-mcp serves the runbooks as skill://<name>/SKILL.md). The
// content is fixed when the server is built; resources/read returns it as is.
struct Resource {
  std::string uri;          // unique among the server's resources
  std::string name;
  std::string title;        // may be empty
  std::string description;  // may be empty
  std::string mime_type = "text/markdown";
  std::string text;

  Json Describe() const;  // the resources/list entry (uri, name, title, description, mimeType, size)
};

// JSON-RPC error code of resources/read for a URI the server does not offer (MCP specification).
inline constexpr int kResourceNotFound = -32002;

// Per-connection state (a stdio connection, or an HTTP session / sessionless exchange).
struct Session {
  std::mutex mu;
  bool initialize_answered = false;
  bool initialized = false;     // notifications/initialized received
  std::string protocol_version; // negotiated
  std::string log_level = "info";
  std::set<std::string> cancelled;  // request ids (dumped) the client cancelled
  Json client_info;
};

struct ServerOptions {
  std::string name = "slurm-mcp";
  std::string title = "Slurm (read-only)";
  std::string version = "0.1.0";
  std::string instructions;
  std::vector<Tool> tools;  // in the order tools/list returns them
  // In the order resources/list returns them. Empty: the resources capability is not declared
  // and the resources/* methods answer "Method not found", as for any method not offered.
  std::vector<Resource> resources;
};

class Server {
 public:
  explicit Server(ServerOptions options);

  // Handles one message. Returns the response for requests (nullopt for notifications and
  // responses, and for a request cancelled while it ran). `notify` sends notifications that
  // belong to this request (progress, log messages); it may be called from the calling thread
  // only, before Handle returns.
  std::optional<Json> Handle(const Message& message, Session& session,
                             const std::function<void(const Json&)>& notify);

  const ServerOptions& options() const { return options_; }
  const std::vector<Tool>& tools() const { return options_.tools; }

 private:
  ServerOptions options_;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_SERVER_H_

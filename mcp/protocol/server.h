// The MCP server core: lifecycle, version negotiation, ping, logging, tools/list, tools/call,
// progress and cancellation, read-only resources (resources/list, resources/read,
// resources/templates/list) and prompts (prompts/list, prompts/get), independent of any transport.
//
// Two eras on one Server, chosen per message (the 2026-07-28 revision's basic/versioning.mdx,
// "Backward Compatibility"):
//   modern  a message whose params._meta carries "io.modelcontextprotocol/protocolVersion" (the
//           claim) is served statelessly by the 2026-07-28 rules: no handshake, every request
//           carries its client's envelope, server/discover describes the server, every result
//           carries resultType and _meta.serverInfo, list and read results carry cache hints
//           (ttlMs, cacheScope), log messages only for a request that names a logLevel, and the
//           Skills extension (skills/list, skills/get) when the server has skills;
//   legacy  any other message is 2025-era (2025-11-25, negotiated down to 2025-03-26): initialize
//           first, state in the Session, exactly as before the modern era existed.
// The modern checks run in the order of the detection ladder (reference: mcp-2026-07-28.md, §2):
// envelope (-32602), revision (-32022), method (-32601); an HTTP transport puts its header checks
// between them (ModernEnvelopeError, ModernVersionError and ModernMethodError are public for it).
//
// Transports (stdio, HTTP) parse bytes into Messages and call Server::Handle with the Session the
// message belongs to. Handle is thread-safe: a transport may run tool calls on worker threads so
// that ping and cancellation are never blocked behind a slow Slurm read. A modern request uses
// its Session only for cancellation (notifications/cancelled by request id, on stdio).
//
//   Server server(ServerOptions{.name = "slurm-mcp", .version = "0.1.0", .tools = tools});
//   Session session;
//   std::optional<Json> reply = server.Handle(message, session, [&](Json note) { write(note); });
#ifndef SLURM_RCA_MCP_PROTOCOL_SERVER_H_
#define SLURM_RCA_MCP_PROTOCOL_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/protocol/jsonrpc.h"

namespace slurm_rca::mcp {

// Legacy (2025-era) protocol revisions, newest first. The first is the wire revision; older ones
// are negotiated by initialize.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

// Modern (stateless) revisions a request may claim in params._meta, newest first.
inline constexpr const char* kModernVersions[] = {"2026-07-28"};

// The keys of a modern request's params._meta (2026-07-28 basic/index.mdx, "_meta").
inline constexpr char kMetaProtocolVersion[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char kMetaClientCapabilities[] = "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kMetaLogLevel[] = "io.modelcontextprotocol/logLevel";
inline constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";

// The Skills extension's id, declared in server/discover's capabilities.extensions.
inline constexpr char kSkillsExtension[] = "io.modelcontextprotocol/skills";

// Error codes of the modern era (2026-07-28 basic/index.mdx, "Error Codes").
inline constexpr int kHeaderMismatch = -32020;              // HTTP header missing or not the body's
inline constexpr int kMissingClientCapability = -32021;     // not used: no tool needs one
inline constexpr int kUnsupportedProtocolVersion = -32022;  // data: {supported, requested}

// True when the message carries the modern claim (the protocolVersion key in params._meta, of any
// type): it is served by the 2026-07-28 rules. Everything else is legacy.
bool HasModernClaim(const Message& message);

// True for a revision in kModernVersions / kProtocolVersions.
bool IsModernVersion(std::string_view version);
bool IsLegacyVersion(std::string_view version);

// What a tool handler may do while it runs.
// Who makes a call, when the transport authorizes (OAuth, mcp/auth): the token's principal, the
// Slurm user it maps to (empty when it maps to none) and its scopes. All empty without
// authorization (stdio, a shared --token-file secret).
struct Caller {
  std::string principal;
  std::string user;
  std::set<std::string> scopes;
};

class ToolContext {
 public:
  virtual ~ToolContext() = default;
  // The caller of this request; the default (no authorization) is empty.
  virtual Caller caller() const { return {}; }
  // Sends notifications/progress when the caller gave a progressToken; otherwise nothing.
  virtual void Progress(double progress, std::optional<double> total, const std::string& message) = 0;
  // Sends notifications/message when level is at or above the session's level.
  virtual void Log(const std::string& level, const Json& data) = 0;
  // True once the caller sent notifications/cancelled for this request.
  virtual bool Cancelled() const = 0;
};

// What a tool answers. Read it through Fields(): a result may share an answer rather than hold
// one (`shared`).
struct ToolResult {
  Json content = Json::array();       // text blocks, etc.
  std::optional<Json> structured;     // structuredContent; never set together with is_error
  bool is_error = false;
  // SerializeToolResult(*this), when the tool has it already: an answer given to many calls
  // (mcp/topics/answer_cache.h) is serialized once, and Server::HandleSerialized writes these
  // bytes instead of serializing it on every call. Null: the server serializes the fields above.
  std::shared_ptr<const std::string> serialized;
  // An answer given to many calls, shared by each call's result instead of copied into it: the
  // fields above are then left at their defaults, and Fields() is the shared answer's. One
  // level: a shared answer shares no other.
  std::shared_ptr<const ToolResult> shared;

  // The fields of this result: the shared answer's, or its own.
  const ToolResult& Fields() const { return shared ? *shared : *this; }
};

// A result sharing `answer` (ToolResult::shared), which must not be null.
ToolResult SharedResult(std::shared_ptr<const ToolResult> answer);

// The result object tools/call answers for `r` ({"content": [...], "structuredContent": {...}}),
// serialized as Serialize writes it. For a result that is not an error; a shared one's answer.
std::string SerializeToolResult(const ToolResult& r);

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

// A prompt (prompts/list, prompts/get): slurm-mcp offers each runbook as one, to be shown as a
// slash command. Argument values are strings (the specification's PromptArgument).
struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct Prompt {
  std::string name;         // unique among the server's prompts
  std::string title;        // may be empty
  std::string description;  // may be empty
  std::vector<PromptArgument> arguments;
  // The prompts/get messages, given a value for every required argument (and only for declared
  // ones: the server refuses others with -32602 before calling it).
  std::function<Json(const std::map<std::string, std::string>& arguments)> render;

  Json Describe() const;  // the prompts/list entry
};

// A skill of the Skills extension (io.modelcontextprotocol/skills, SEP-2640): its SKILL.md's URI
// (a resource the server also serves), its frontmatter as JSON, and every file of it, each a
// served resource, with the SHA-256 digest and the size of exactly the bytes resources/read
// returns.
struct SkillFile {
  std::string uri;
  std::string digest;  // "sha256:" + 64 lower-case hex digits
  std::size_t size = 0;
};

struct SkillEntry {
  std::string uri;   // skill://<name>/SKILL.md
  Json frontmatter;  // an object with at least name and description
  std::vector<SkillFile> files;

  Json Describe() const;  // the skills/list entry: {uri, frontmatter, resources}
};

// JSON-RPC error code of a legacy resources/read for a URI the server does not offer
// (2025-11-25). The modern era answers -32602 instead (2026-07-28 server/resources.mdx).
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
  // Who opened it, when the transport authorizes (OAuth, mcp/auth): the token's principal and
  // scopes. A session is used only by its own principal. Empty without authorization.
  std::string principal;
  std::string user;  // the Slurm user the principal maps to; empty when none
  std::set<std::string> scopes;

  // Marks request `id` cancelled (notifications/cancelled, or a transport that saw the client go
  // away). Locks mu; keeps at most 1,024 ids, dropping the oldest-sorted, since cancellations of
  // ids that never arrive would otherwise pile up.
  void Cancel(const Json& id);
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
  // Likewise for prompts/* (both eras) and for the Skills extension (modern era only; offered
  // only beside resources, which the extension requires).
  std::vector<Prompt> prompts;
  std::vector<SkillEntry> skills;
  // Cache hint of the static lists and reads (discover, tools/list, resources/*, prompts/list,
  // skills/*): nothing on them changes while the process runs, and nothing carries cluster state,
  // so they are "public". tools/call and prompts/get results carry no cache hint.
  std::int64_t static_ttl_ms = 3'600'000;
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

  // Handle, serialized (Serialize): the line a transport writes. A tool result that came
  // serialized (ToolResult::serialized) is written from its bytes.
  std::optional<std::string> HandleSerialized(const Message& message, Session& session,
                                              const std::function<void(const Json&)>& notify);

  // The modern checks of a message with the claim, in ladder order; each is the error response
  // (with the message's id), or nullopt. Envelope: params and _meta objects, the claim a string,
  // clientCapabilities an object (-32602). Version: the claim is in kModernVersions (-32022 with
  // data {supported, requested}). Method: a request method the modern era offers here, or a
  // notification (-32601).
  std::optional<Json> ModernEnvelopeError(const Message& message) const;
  std::optional<Json> ModernVersionError(const Message& message) const;
  std::optional<Json> ModernMethodError(const Message& message) const;

  const ServerOptions& options() const { return options_; }
  const std::vector<Tool>& tools() const { return options_.tools; }

 private:
  // Handle; with `serialized_result` non-null, a tools/call result that came serialized is
  // left there and the response returned holds no result.
  std::optional<Json> Respond(const Message& message, Session& session,
                              const std::function<void(const Json&)>& notify,
                              std::shared_ptr<const std::string>* serialized_result);

  ServerOptions options_;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_SERVER_H_

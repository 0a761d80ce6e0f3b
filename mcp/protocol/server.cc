#include "mcp/protocol/server.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <utility>

namespace slurm_rca::mcp {
namespace {

// RFC 5424 severities as MCP names them, least severe first.
constexpr const char* kLogLevels[] = {"debug", "info",     "notice", "warning",
                                      "error", "critical", "alert",  "emergency"};

// Index of `level` in kLogLevels, or -1.
int LogRank(const std::string& level) {
  for (int i = 0; i < static_cast<int>(std::size(kLogLevels)); ++i) {
    if (level == kLogLevels[i]) return i;
  }
  return -1;
}

// Session::Cancel's bound: cancellations of ids that never arrive would pile up forever.
constexpr std::size_t kMaxCancelled = 1024;

std::string Key(const Json& id) { return Serialize(id); }

// Takes the cancellation of `key` out of the session; true when there was one.
bool TakeCancelled(Session& session, const std::string& key) {
  std::lock_guard<std::mutex> lock(session.mu);
  return session.cancelled.erase(key) > 0;
}

std::string TypeName(const Json& j) { return j.type_name(); }

// The log messages a call may send: a legacy call those at or above its session's level
// (logging/setLevel), a modern call those at or above the logLevel its request named, and none
// when it named none (2026-07-28 server/utilities/logging.mdx).
struct LogPolicy {
  bool from_session = true;
  int threshold = -1;  // modern: the least rank sent; -1 sends nothing
};

class CallContext : public ToolContext {
 public:
  CallContext(Session& session, std::string key, Json progress_token,
              const std::function<void(const Json&)>& notify, LogPolicy logs)
      : session_(session),
        key_(std::move(key)),
        progress_token_(std::move(progress_token)),
        notify_(notify),
        logs_(logs) {}

  void Progress(double progress, std::optional<double> total, const std::string& message) override {
    if (progress_token_.is_null() || !std::isfinite(progress) || Cancelled()) return;
    if (last_progress_ && progress <= *last_progress_) return;  // must strictly increase
    last_progress_ = progress;
    Json params = {{"progressToken", progress_token_}, {"progress", progress}};
    if (total && std::isfinite(*total)) params["total"] = *total;
    if (!message.empty()) params["message"] = message;
    if (notify_) notify_(MakeNotification("notifications/progress", std::move(params)));
  }

  void Log(const std::string& level, const Json& data) override {
    int rank = LogRank(level);
    if (rank < 0) rank = LogRank("info");
    int threshold = logs_.threshold;
    if (logs_.from_session) {
      std::lock_guard<std::mutex> lock(session_.mu);
      threshold = LogRank(session_.log_level);
    }
    if (threshold < 0 || rank < threshold || Cancelled() || !notify_) return;
    notify_(MakeNotification(
        "notifications/message",
        Json{{"level", kLogLevels[rank]}, {"logger", "slurm-mcp"}, {"data", data}}));
  }

  bool Cancelled() const override {
    std::lock_guard<std::mutex> lock(session_.mu);
    return session_.cancelled.count(key_) > 0;
  }

  Caller caller() const override {
    std::lock_guard<std::mutex> lock(session_.mu);
    return Caller{session_.principal, session_.user, session_.scopes};
  }

 private:
  Session& session_;
  const std::string key_;
  const Json progress_token_;
  const std::function<void(const Json&)>& notify_;
  const LogPolicy logs_;
  std::optional<double> last_progress_;
};

Json TextContent(const std::string& text) {
  return Json::array({Json{{"type", "text"}, {"text", text}}});
}

// The result object of tools/call; takes the tool's JSON over (moved, not copied: a 200-row
// answer is thousands of nodes). An error's content is never empty (CallTool fills it).
Json ToolResultJson(ToolResult r) {
  Json result;
  result["content"] = r.content.is_array() ? std::move(r.content) : Json::array();
  if (r.is_error) {
    result["isError"] = true;  // and never structuredContent: clients do not validate errors
  } else if (r.structured) {
    result["structuredContent"] = std::move(*r.structured);
  }
  return result;
}

}  // namespace

std::string SerializeToolResult(const ToolResult& r) {
  ToolResult copy = r.Fields();
  copy.serialized = nullptr;
  return Serialize(ToolResultJson(std::move(copy)));
}

ToolResult SharedResult(std::shared_ptr<const ToolResult> answer) {
  ToolResult r;
  r.shared = std::move(answer);
  return r;
}

Json Tool::Describe() const {
  Json d = {{"name", name}};
  if (!title.empty()) d["title"] = title;
  d["description"] = description;  // optional in the spec, required by conformance
  d["inputSchema"] = input_schema.is_object()
                         ? input_schema
                         : Json{{"type", "object"}, {"additionalProperties", false}};
  if (!output_schema.is_null()) d["outputSchema"] = output_schema;
  if (!annotations.is_null()) d["annotations"] = annotations;
  return d;
}

Json Resource::Describe() const {
  Json d = {{"uri", uri}, {"name", name}};
  if (!title.empty()) d["title"] = title;
  if (!description.empty()) d["description"] = description;
  d["mimeType"] = mime_type;
  d["size"] = text.size();
  return d;
}

Json Prompt::Describe() const {
  Json d = {{"name", name}};
  if (!title.empty()) d["title"] = title;
  if (!description.empty()) d["description"] = description;
  Json args = Json::array();
  for (const PromptArgument& a : arguments) {
    Json arg = {{"name", a.name}};
    if (!a.description.empty()) arg["description"] = a.description;
    arg["required"] = a.required;
    args.push_back(std::move(arg));
  }
  d["arguments"] = std::move(args);
  return d;
}

Json SkillEntry::Describe() const {
  Json resources = Json::array();
  for (const SkillFile& f : files) {
    resources.push_back(Json{{"uri", f.uri}, {"digest", f.digest}, {"size", f.size}});
  }
  return Json{{"uri", uri}, {"frontmatter", frontmatter}, {"resources", std::move(resources)}};
}

namespace {
Json ModernVersionList() {
  Json list = Json::array();
  for (const char* v : kModernVersions) list.push_back(v);
  return list;
}
}  // namespace

bool HasModernClaim(const Message& message) {
  if (!message.params.is_object()) return false;
  auto meta = message.params.find("_meta");
  return meta != message.params.end() && meta->is_object() && meta->contains(kMetaProtocolVersion);
}

bool IsModernVersion(std::string_view version) {
  return std::find(std::begin(kModernVersions), std::end(kModernVersions), version) !=
         std::end(kModernVersions);
}

bool IsLegacyVersion(std::string_view version) {
  return std::find(std::begin(kProtocolVersions), std::end(kProtocolVersions), version) !=
         std::end(kProtocolVersions);
}

void Session::Cancel(const Json& id) {
  std::lock_guard<std::mutex> lock(mu);
  if (cancelled.size() >= kMaxCancelled) cancelled.erase(cancelled.begin());
  cancelled.insert(Key(id));
}

Server::Server(ServerOptions options) : options_(std::move(options)) {}

std::optional<Json> Server::ModernEnvelopeError(const Message& m) const {
  const Json& meta = m.params["_meta"];
  auto invalid = [&](const std::string& why) {
    return MakeError(m.id, kInvalidParams, "Invalid params: " + why);
  };
  if (!meta[kMetaProtocolVersion].is_string()) {
    return invalid(std::string("_meta[\"") + kMetaProtocolVersion + "\"] must be a string");
  }
  auto capabilities = meta.find(kMetaClientCapabilities);
  if (capabilities == meta.end() || !capabilities->is_object()) {
    return invalid(std::string("_meta[\"") + kMetaClientCapabilities +
                   "\"] is required, an object ({} declares none)");
  }
  auto info = meta.find(kMetaClientInfo);
  if (info != meta.end() && !info->is_object()) {
    return invalid(std::string("_meta[\"") + kMetaClientInfo + "\"] must be an object");
  }
  auto level = meta.find(kMetaLogLevel);
  if (level != meta.end() && (!level->is_string() || LogRank(level->get<std::string>()) < 0)) {
    return invalid(std::string("_meta[\"") + kMetaLogLevel +
                   "\"] must be one of debug, info, notice, warning, error, critical, alert, "
                   "emergency");
  }
  return std::nullopt;
}

std::optional<Json> Server::ModernVersionError(const Message& m) const {
  const std::string requested = m.params["_meta"][kMetaProtocolVersion].get<std::string>();
  if (IsModernVersion(requested)) return std::nullopt;
  return MakeError(m.id, kUnsupportedProtocolVersion, "Unsupported protocol version",
                   Json{{"supported", ModernVersionList()},
                        {"requested", requested}});
}

std::optional<Json> Server::ModernMethodError(const Message& m) const {
  if (m.kind != Message::Kind::kRequest) return std::nullopt;
  const std::string& method = m.method;
  const bool resources = !options_.resources.empty();
  const bool offered =
      method == "server/discover" || method == "tools/list" || method == "tools/call" ||
      (resources && (method == "resources/list" || method == "resources/read" ||
                     method == "resources/templates/list")) ||
      (!options_.prompts.empty() && (method == "prompts/list" || method == "prompts/get")) ||
      (resources && !options_.skills.empty() && (method == "skills/list" || method == "skills/get"));
  if (offered) return std::nullopt;
  return MakeError(m.id, kMethodNotFound, "Method not found: " + method);
}

namespace {

// The request handlers. Each returns the whole response (result or error), or nullopt.
class Dispatch {
 public:
  Dispatch(const Server& server, const Message& m, Session& session,
           const std::function<void(const Json&)>& notify,
           std::shared_ptr<const std::string>* serialized_result)
      : server_(server),
        options_(server.options()),
        m_(m),
        session_(session),
        notify_(notify),
        modern_(HasModernClaim(m)),
        serialized_result_(serialized_result) {}

  std::optional<Json> Request() { return modern_ ? ModernRequest() : LegacyRequest(); }

  // The 2026-07-28 era: the ladder's checks, then the method, its result decorated.
  std::optional<Json> ModernRequest() {
    if (std::optional<Json> e = server_.ModernEnvelopeError(m_)) return e;
    if (std::optional<Json> e = server_.ModernVersionError(m_)) return e;
    if (std::optional<Json> e = server_.ModernMethodError(m_)) return e;
    const std::string& method = m_.method;
    std::optional<Json> reply;
    bool cacheable = true;
    if (method == "server/discover") {
      reply = Discover();
    } else if (method == "tools/list") {
      reply = ListTools();
    } else if (method == "resources/list") {
      reply = ListResources();
    } else if (method == "resources/read") {
      reply = ReadResource();
    } else if (method == "resources/templates/list") {
      reply = ListResourceTemplates();
    } else if (method == "prompts/list") {
      reply = ListPrompts();
    } else if (method == "skills/list") {
      reply = ListSkills();
    } else if (method == "skills/get") {
      reply = GetSkill();
    } else {
      cacheable = false;
      reply = method == "prompts/get" ? GetPrompt() : CallTool();
    }
    if (reply && reply->contains("result")) Decorate((*reply)["result"], cacheable);
    return reply;
  }

  std::optional<Json> LegacyRequest() {
    const std::string& method = m_.method;
    if (method == "initialize") return Initialize();
    if (method == "ping") return MakeResult(m_.id, Json::object());

    const bool resources = !options_.resources.empty() &&
                           (method == "resources/list" || method == "resources/read" ||
                            method == "resources/templates/list");
    const bool prompts =
        !options_.prompts.empty() && (method == "prompts/list" || method == "prompts/get");
    const bool known = method == "tools/list" || method == "tools/call" ||
                       method == "logging/setLevel" || resources || prompts;
    bool answered;
    {
      std::lock_guard<std::mutex> lock(session_.mu);
      answered = session_.initialize_answered;
    }
    // Early requests get an immediate error, never silence: a 2026-07-28 client probing with
    // server/discover falls back to initialize on any error.
    if (!known) return Error(kMethodNotFound, "Method not found: " + method);
    if (!answered) {
      return Error(kInvalidRequest, "not initialized: send initialize before " + method);
    }
    if (method == "logging/setLevel") return SetLevel();
    if (method == "tools/list") return ListTools();
    if (method == "resources/list") return ListResources();
    if (method == "resources/read") return ReadResource();
    if (method == "resources/templates/list") return ListResourceTemplates();
    if (method == "prompts/list") return ListPrompts();
    if (method == "prompts/get") return GetPrompt();
    return CallTool();
  }

  void Notification() {
    const std::string& method = m_.method;
    if (method == "notifications/initialized" && !modern_) {
      std::lock_guard<std::mutex> lock(session_.mu);
      session_.initialized = true;
    } else if (method == "notifications/cancelled") {
      if (!m_.params.is_object()) return;
      auto id = m_.params.find("requestId");
      if (id == m_.params.end() || !IsValidId(*id)) return;
      session_.Cancel(*id);
    }
    // Other notifications (roots/list_changed, progress, ...) need nothing from a tools server.
  }

 private:
  Json Error(int code, const std::string& message, Json data = nullptr) const {
    return MakeError(m_.id, code, message, std::move(data));
  }

  // Checks that params is an object or absent; fills `error` otherwise.
  bool ParamsObject(std::optional<Json>& error) const {
    if (m_.params.is_null() || m_.params.is_object()) return true;
    error =
        Error(kInvalidParams, m_.method + ": params must be an object, not " + TypeName(m_.params));
    return false;
  }

  // What every modern result carries: resultType, and serverInfo in _meta; list and read results
  // also the cache hint (2026-07-28 basic/index.mdx "ResultType", server/utilities/caching.mdx).
  void Decorate(Json& result, bool cacheable) const {
    result["resultType"] = "complete";
    result["_meta"][kMetaServerInfo] = ServerInfo();
    if (cacheable) {
      result["ttlMs"] = options_.static_ttl_ms;
      result["cacheScope"] = "public";
    }
  }

  Json ServerInfo() const {
    Json info = {{"name", options_.name}, {"version", options_.version}};
    if (!options_.title.empty()) info["title"] = options_.title;
    return info;
  }

  std::optional<Json> Discover() const {
    Json capabilities = {{"tools", Json::object()}, {"logging", Json::object()}};
    if (!options_.resources.empty()) capabilities["resources"] = Json::object();
    if (!options_.prompts.empty()) capabilities["prompts"] = Json::object();
    if (!options_.resources.empty() && !options_.skills.empty()) {
      capabilities["extensions"] = {{kSkillsExtension, Json::object()}};
    }
    Json result = {
        {"supportedVersions", ModernVersionList()},
        {"capabilities", std::move(capabilities)}};
    if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
    return MakeResult(m_.id, std::move(result));
  }

  std::optional<Json> ListPrompts() { return List(options_.prompts, "prompts"); }

  std::optional<Json> GetPrompt() {
    auto name = m_.params.is_object() ? m_.params.find("name") : m_.params.end();
    if (!m_.params.is_object() || name == m_.params.end() || !name->is_string()) {
      return Error(kInvalidParams, "prompts/get: params.name must be a string");
    }
    const std::string& wanted = name->get_ref<const std::string&>();
    auto prompt = std::find_if(options_.prompts.begin(), options_.prompts.end(),
                               [&](const Prompt& p) { return p.name == wanted; });
    if (prompt == options_.prompts.end()) {
      return Error(kInvalidParams, "Unknown prompt: " + wanted, Json{{"name", wanted}});
    }
    std::map<std::string, std::string> values;
    auto args = m_.params.find("arguments");
    if (args != m_.params.end() && !args->is_null()) {
      if (!args->is_object()) {
        return Error(kInvalidParams, "prompts/get: params.arguments must be an object");
      }
      for (auto it = args->begin(); it != args->end(); ++it) {
        const bool declared =
            std::any_of(prompt->arguments.begin(), prompt->arguments.end(),
                        [&](const PromptArgument& a) { return a.name == it.key(); });
        if (!declared) {
          return Error(kInvalidParams,
                       "prompts/get: prompt " + wanted + " has no argument " + it.key());
        }
        if (!it.value().is_string()) {
          return Error(kInvalidParams,
                       "prompts/get: argument " + it.key() + " must be a string");
        }
        values[it.key()] = it.value().get<std::string>();
      }
    }
    for (const PromptArgument& a : prompt->arguments) {
      if (a.required && values.count(a.name) == 0) {
        return Error(kInvalidParams,
                     "prompts/get: prompt " + wanted + " needs the argument " + a.name);
      }
    }
    Json result = {{"messages", prompt->render ? prompt->render(values) : Json::array()}};
    if (!prompt->description.empty()) result["description"] = prompt->description;
    return MakeResult(m_.id, std::move(result));
  }

  std::optional<Json> ListSkills() { return List(options_.skills, "skills"); }

  std::optional<Json> GetSkill() {
    auto uri = m_.params.is_object() ? m_.params.find("uri") : m_.params.end();
    if (!m_.params.is_object() || uri == m_.params.end() || !uri->is_string()) {
      return Error(kInvalidParams, "skills/get: params.uri must be a string");
    }
    const std::string& wanted = uri->get_ref<const std::string&>();
    for (const SkillEntry& s : options_.skills) {
      if (s.uri == wanted) return MakeResult(m_.id, Json{{"skill", s.Describe()}});
    }
    return Error(kInvalidParams, "Skill not found: " + wanted, Json{{"uri", wanted}});
  }

  std::optional<Json> Initialize() {
    std::optional<Json> error;
    if (!ParamsObject(error)) return error;
    const Json params = m_.params.is_object() ? m_.params : Json::object();
    auto version = params.find("protocolVersion");
    if (version == params.end() || !version->is_string()) {
      return Error(kInvalidParams, "initialize: params.protocolVersion must be a string");
    }
    for (const char* field : {"capabilities", "clientInfo"}) {
      auto it = params.find(field);
      if (it != params.end() && !it->is_object()) {
        return Error(kInvalidParams,
                     std::string("initialize: params.") + field + " must be an object");
      }
    }
    const std::string requested = version->get<std::string>();
    std::string negotiated = kProtocolVersions[0];
    for (const char* v : kProtocolVersions) {
      if (requested == v) negotiated = v;
    }
    {
      std::lock_guard<std::mutex> lock(session_.mu);
      if (session_.initialize_answered) {
        return Error(kInvalidRequest, "already initialized: initialize may be sent only once");
      }
      session_.initialize_answered = true;
      session_.protocol_version = negotiated;
      session_.client_info = params.value("clientInfo", Json::object());
    }
    Json capabilities = {{"tools", {{"listChanged", false}}}, {"logging", Json::object()}};
    if (!options_.resources.empty()) {
      capabilities["resources"] = {{"subscribe", false}, {"listChanged", false}};
    }
    if (!options_.prompts.empty()) capabilities["prompts"] = {{"listChanged", false}};
    Json result = {
        {"protocolVersion", negotiated},
        {"capabilities", std::move(capabilities)},
        {"serverInfo",
         {{"name", options_.name}, {"title", options_.title}, {"version", options_.version}}},
    };
    if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
    return MakeResult(m_.id, std::move(result));
  }

  std::optional<Json> SetLevel() {
    if (!m_.params.is_object()) {
      return Error(kInvalidParams, "logging/setLevel: params must be an object with \"level\"");
    }
    auto level = m_.params.find("level");
    if (level == m_.params.end() || !level->is_string() || LogRank(level->get<std::string>()) < 0) {
      return Error(kInvalidParams,
                   "logging/setLevel: level must be one of debug, info, notice, warning, error, "
                   "critical, alert, emergency");
    }
    std::lock_guard<std::mutex> lock(session_.mu);
    session_.log_level = level->get<std::string>();
    return MakeResult(m_.id, Json::object());
  }

  std::optional<Json> ListTools() { return List(options_.tools, "tools"); }

  // Checks that params is an object or absent and that any cursor is null (one page).
  std::optional<Json> SinglePage() const {
    std::optional<Json> error;
    if (!ParamsObject(error)) return error;
    if (m_.params.is_object()) {
      auto cursor = m_.params.find("cursor");
      if (cursor != m_.params.end() && !cursor->is_null()) {
        return Error(kInvalidParams, "invalid cursor: " + m_.method + " has a single page");
      }
    }
    return std::nullopt;
  }

  std::optional<Json> ListResources() { return List(options_.resources, "resources"); }

  // A single-page list: each item's Describe() under `key`.
  template <typename Item>
  std::optional<Json> List(const std::vector<Item>& items, const char* key) const {
    if (std::optional<Json> error = SinglePage()) return error;
    Json list = Json::array();
    for (const Item& item : items) list.push_back(item.Describe());
    return MakeResult(m_.id, Json{{key, std::move(list)}});
  }

  std::optional<Json> ListResourceTemplates() {
    if (std::optional<Json> error = SinglePage()) return error;
    return MakeResult(m_.id, Json{{"resourceTemplates", Json::array()}});
  }

  std::optional<Json> ReadResource() {
    auto uri = m_.params.is_object() ? m_.params.find("uri") : m_.params.end();
    if (!m_.params.is_object() || uri == m_.params.end() || !uri->is_string()) {
      return Error(kInvalidParams, "resources/read: params.uri must be a string");
    }
    const std::string wanted = uri->get<std::string>();
    for (const Resource& r : options_.resources) {
      if (r.uri != wanted) continue;
      Json content = {{"uri", r.uri}, {"mimeType", r.mime_type}, {"text", r.text}};
      return MakeResult(m_.id, Json{{"contents", Json::array({std::move(content)})}});
    }
    // 2026-07-28 renumbered "not found" to -32602 and forbids -32002 in modern responses.
    return Error(modern_ ? kInvalidParams : kResourceNotFound, "Resource not found: " + wanted,
                 Json{{"uri", wanted}});
  }

  std::optional<Json> CallTool() {
    if (!m_.params.is_object()) {
      return Error(kInvalidParams, "tools/call: params must be an object with \"name\"");
    }
    auto name = m_.params.find("name");
    if (name == m_.params.end() || !name->is_string()) {
      return Error(kInvalidParams, "tools/call: params.name must be a string");
    }
    const std::string& tool_name = name->get_ref<const std::string&>();
    auto tool = std::find_if(options_.tools.begin(), options_.tools.end(),
                             [&](const Tool& t) { return t.name == tool_name; });
    if (tool == options_.tools.end()) return Error(kInvalidParams, "Unknown tool: " + tool_name);

    static const Json kNoArguments = Json::object();
    const Json* arguments = &kNoArguments;  // the request's own, not a copy
    auto args = m_.params.find("arguments");
    if (args != m_.params.end() && !args->is_null()) {
      if (!args->is_object()) {
        return Error(kInvalidParams,
                     "tools/call: params.arguments must be an object, not " + TypeName(*args));
      }
      arguments = &*args;
    }
    Json progress_token;
    auto meta = m_.params.find("_meta");
    if (meta != m_.params.end() && !meta->is_null()) {
      if (!meta->is_object()) {
        return Error(kInvalidParams, "tools/call: params._meta must be an object");
      }
      auto token = meta->find("progressToken");
      if (token != meta->end()) {
        if (!IsValidId(*token)) {
          return Error(kInvalidParams,
                       "tools/call: params._meta.progressToken must be a string or an integer");
        }
        progress_token = *token;
      }
    }

    const std::string key = Key(m_.id);
    if (TakeCancelled(session_, key)) return std::nullopt;  // cancelled before it started
    LogPolicy logs;
    if (modern_) {
      const Json& meta = m_.params["_meta"];
      auto level = meta.find(kMetaLogLevel);
      logs = LogPolicy{.from_session = false,
                       .threshold = level == meta.end() ? -1 : LogRank(level->get<std::string>())};
    }
    CallContext context(session_, key, progress_token, notify_, logs);
    ToolResult r;
    if (!tool->run) {
      r.is_error = true;
      r.content = TextContent("tool " + tool_name + " has no implementation");
    } else {
      try {
        r = tool->run(*arguments, context);
      } catch (const std::exception& e) {
        r = ToolResult{};
        r.is_error = true;
        r.content = TextContent("tool " + tool_name + " failed: " + e.what());
      } catch (...) {
        r = ToolResult{};
        r.is_error = true;
        r.content = TextContent("tool " + tool_name + " failed with an unknown error");
      }
    }
    if (TakeCancelled(session_, key)) return std::nullopt;  // the client no longer wants it

    // A modern result is decorated after this (Decorate): it is serialized whole.
    const ToolResult& fields = r.Fields();
    if (serialized_result_ != nullptr && fields.serialized != nullptr && !fields.is_error &&
        !modern_) {
      *serialized_result_ = fields.serialized;  // the caller writes these bytes
      return MakeResult(m_.id, nullptr);
    }
    // The response takes the result over; a shared answer is copied, the one copy it needs.
    if (r.shared) r = ToolResult(*r.shared);
    if (r.is_error && (!r.content.is_array() || r.content.empty())) {
      r.content = TextContent("tool " + tool_name + " failed");
    }
    return MakeResult(m_.id, ToolResultJson(std::move(r)));
  }

  const Server& server_;
  const ServerOptions& options_;
  const Message& m_;
  Session& session_;
  const std::function<void(const Json&)>& notify_;
  const bool modern_;  // the message carries the 2026-07-28 claim
  std::shared_ptr<const std::string>* serialized_result_;  // may be null
};

}  // namespace

std::optional<Json> Server::Handle(const Message& message, Session& session,
                                   const std::function<void(const Json&)>& notify) {
  return Respond(message, session, notify, nullptr);
}

std::optional<std::string> Server::HandleSerialized(
    const Message& message, Session& session, const std::function<void(const Json&)>& notify) {
  std::shared_ptr<const std::string> serialized_result;
  std::optional<Json> reply = Respond(message, session, notify, &serialized_result);
  if (!reply) return std::nullopt;
  if (serialized_result) return SerializeResult(message.id, *serialized_result);
  return Serialize(*reply);
}

std::optional<Json> Server::Respond(const Message& message, Session& session,
                                    const std::function<void(const Json&)>& notify,
                                    std::shared_ptr<const std::string>* serialized_result) {
  Dispatch dispatch(*this, message, session, notify, serialized_result);
  switch (message.kind) {
    case Message::Kind::kResponse:
      return std::nullopt;  // we send no requests, so no response is awaited
    case Message::Kind::kNotification:
      try {
        dispatch.Notification();
      } catch (const std::exception&) {
        // A notification gets no answer, not even an error.
      }
      return std::nullopt;
    case Message::Kind::kRequest:
      break;
  }
  try {
    std::optional<Json> reply = dispatch.Request();
    if (reply && message.method != "initialize" && message.method != "tools/call" &&
        TakeCancelled(session, Key(message.id))) {
      return std::nullopt;
    }
    return reply;
  } catch (const std::exception& e) {
    return MakeError(message.id, kInternalError,
                     std::string("internal error in ") + message.method + ": " + e.what());
  }
}

}  // namespace slurm_rca::mcp

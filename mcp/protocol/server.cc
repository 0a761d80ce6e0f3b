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

// Cancellations of ids that never arrive (or already finished) would pile up forever.
constexpr std::size_t kMaxCancelled = 1024;

std::string Key(const Json& id) { return Serialize(id); }

// Takes the cancellation of `key` out of the session; true when there was one.
bool TakeCancelled(Session& session, const std::string& key) {
  std::lock_guard<std::mutex> lock(session.mu);
  return session.cancelled.erase(key) > 0;
}

std::string TypeName(const Json& j) { return j.type_name(); }

class CallContext : public ToolContext {
 public:
  CallContext(Session& session, std::string key, Json progress_token,
              const std::function<void(const Json&)>& notify)
      : session_(session),
        key_(std::move(key)),
        progress_token_(std::move(progress_token)),
        notify_(notify) {}

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
    int threshold;
    {
      std::lock_guard<std::mutex> lock(session_.mu);
      threshold = LogRank(session_.log_level);
    }
    if (rank < threshold || Cancelled() || !notify_) return;
    notify_(MakeNotification(
        "notifications/message",
        Json{{"level", kLogLevels[rank]}, {"logger", "slurm-mcp"}, {"data", data}}));
  }

  bool Cancelled() const override {
    std::lock_guard<std::mutex> lock(session_.mu);
    return session_.cancelled.count(key_) > 0;
  }

 private:
  Session& session_;
  const std::string key_;
  const Json progress_token_;
  const std::function<void(const Json&)>& notify_;
  std::optional<double> last_progress_;
};

Json TextContent(const std::string& text) {
  return Json::array({Json{{"type", "text"}, {"text", text}}});
}

}  // namespace

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

Server::Server(ServerOptions options) : options_(std::move(options)) {}

namespace {

// The request handlers. Each returns the whole response (result or error), or nullopt.
class Dispatch {
 public:
  Dispatch(const ServerOptions& options, const Message& m, Session& session,
           const std::function<void(const Json&)>& notify)
      : options_(options), m_(m), session_(session), notify_(notify) {}

  std::optional<Json> Request() {
    const std::string& method = m_.method;
    if (method == "initialize") return Initialize();
    if (method == "ping") return MakeResult(m_.id, Json::object());

    const bool resources = !options_.resources.empty() &&
                           (method == "resources/list" || method == "resources/read" ||
                            method == "resources/templates/list");
    const bool known = method == "tools/list" || method == "tools/call" ||
                       method == "logging/setLevel" || resources;
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
    return CallTool();
  }

  void Notification() {
    const std::string& method = m_.method;
    if (method == "notifications/initialized") {
      std::lock_guard<std::mutex> lock(session_.mu);
      session_.initialized = true;
    } else if (method == "notifications/cancelled") {
      if (!m_.params.is_object()) return;
      auto id = m_.params.find("requestId");
      if (id == m_.params.end() || !IsValidId(*id)) return;
      std::lock_guard<std::mutex> lock(session_.mu);
      if (session_.cancelled.size() >= kMaxCancelled) {
        session_.cancelled.erase(session_.cancelled.begin());
      }
      session_.cancelled.insert(Key(*id));
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

  std::optional<Json> ListTools() {
    std::optional<Json> error;
    if (!ParamsObject(error)) return error;
    if (m_.params.is_object()) {
      auto cursor = m_.params.find("cursor");
      if (cursor != m_.params.end() && !cursor->is_null()) {
        return Error(kInvalidParams, "invalid cursor: tools/list has a single page");
      }
    }
    Json tools = Json::array();
    for (const Tool& t : options_.tools) tools.push_back(t.Describe());
    return MakeResult(m_.id, Json{{"tools", std::move(tools)}});
  }

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

  std::optional<Json> ListResources() {
    if (std::optional<Json> error = SinglePage()) return error;
    Json resources = Json::array();
    for (const Resource& r : options_.resources) resources.push_back(r.Describe());
    return MakeResult(m_.id, Json{{"resources", std::move(resources)}});
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
    return Error(kResourceNotFound, "Resource not found: " + wanted, Json{{"uri", wanted}});
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

    Json arguments = Json::object();
    auto args = m_.params.find("arguments");
    if (args != m_.params.end() && !args->is_null()) {
      if (!args->is_object()) {
        return Error(kInvalidParams,
                     "tools/call: params.arguments must be an object, not " + TypeName(*args));
      }
      arguments = *args;
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
    CallContext context(session_, key, progress_token, notify_);
    ToolResult r;
    if (!tool->run) {
      r.is_error = true;
      r.content = TextContent("tool " + tool_name + " has no implementation");
    } else {
      try {
        r = tool->run(arguments, context);
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

    Json result;
    result["content"] = r.content.is_array() ? r.content : Json::array();
    if (r.is_error) {
      if (result["content"].empty())
        result["content"] = TextContent("tool " + tool_name + " failed");
      result["isError"] = true;  // and never structuredContent: clients do not validate errors
    } else if (r.structured) {
      result["structuredContent"] = *r.structured;
    }
    return MakeResult(m_.id, std::move(result));
  }

  const ServerOptions& options_;
  const Message& m_;
  Session& session_;
  const std::function<void(const Json&)>& notify_;
};

}  // namespace

std::optional<Json> Server::Handle(const Message& message, Session& session,
                                   const std::function<void(const Json&)>& notify) {
  Dispatch dispatch(options_, message, session, notify);
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

// Anthropic Messages API with tool use.
#include "agents/llm/http_backend_base.h"
#include "agents/llm/http_backends.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

using Json = nlohmann::json;

Json AnthropicRequest(const BackendConfig& config, const std::vector<Message>& conversation,
                      const std::vector<ToolSpec>& tools) {
  std::string system;
  Json messages = Json::array();
  // Appends content blocks to the last message when it has the same role (the API wants user and
  // assistant turns to alternate; tool results are user content).
  auto add = [&](const std::string& role, Json blocks) {
    if (!messages.empty() && messages.back()["role"] == role) {
      for (Json& b : blocks) messages.back()["content"].push_back(std::move(b));
    } else {
      messages.push_back({{"role", role}, {"content", std::move(blocks)}});
    }
  };
  for (const Message& m : conversation) {
    switch (m.role) {
      case Message::Role::kSystem:
        system += (system.empty() ? "" : "\n\n") + m.text;
        break;
      case Message::Role::kUser:
        add("user", Json::array({{{"type", "text"}, {"text", m.text}}}));
        break;
      case Message::Role::kAssistant: {
        Json blocks = Json::array();
        if (!m.text.empty()) blocks.push_back({{"type", "text"}, {"text", m.text}});
        for (const ToolCall& c : m.tool_calls) {
          blocks.push_back(
              {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.arguments}});
        }
        if (!blocks.empty()) add("assistant", std::move(blocks));
        break;
      }
      case Message::Role::kTool: {
        Json block = {{"type", "tool_result"}, {"tool_use_id", m.tool_call_id},
                      {"content", m.text}};
        if (m.is_error) block["is_error"] = true;
        add("user", Json::array({block}));
        break;
      }
    }
  }
  Json body = {{"model", config.model},
               {"max_tokens", config.max_tokens},
               {"temperature", config.temperature},
               {"messages", messages}};
  // The stable prefix (tools, then system: the API's cache order) is marked for prompt caching
  // with a breakpoint at the end of each, so that every turn after the first reads it from the
  // cache (usage.cache_read_input_tokens) instead of paying for it again.
  const Json ephemeral = {{"type", "ephemeral"}};
  if (!system.empty()) {
    body["system"] =
        Json::array({{{"type", "text"}, {"text", system}, {"cache_control", ephemeral}}});
  }
  if (!tools.empty()) {
    Json t = Json::array();
    for (const ToolSpec& s : tools) {
      Json schema = s.input_schema.is_null() ? Json{{"type", "object"}} : s.input_schema;
      t.push_back({{"name", s.name}, {"description", s.description}, {"input_schema", schema}});
    }
    t.back()["cache_control"] = ephemeral;
    body["tools"] = t;
  }
  return body;
}

Result<Reply> ParseAnthropicReply(const std::string& body) {
  Result<Json> parsed = ParseReplyObject(body);
  if (!parsed.ok()) return parsed.status();
  Json& j = *parsed;
  if (j.contains("type") && j["type"] == "error") {
    return Status::MalformedReply("the server answered an error: " +
                                  (j.contains("error") ? j["error"].dump() : std::string("?")));
  }
  if (!j.contains("content") || !j["content"].is_array()) {
    return Status::MalformedReply("content is missing or not an array");
  }
  Reply r;
  int index = 0;
  for (const Json& b : j["content"]) {
    const std::string where = "content[" + std::to_string(index++) + "]";
    if (!b.is_object() || !b.contains("type") || !b["type"].is_string()) {
      return Status::MalformedReply(where + " has no type");
    }
    const std::string type = b["type"];
    if (type == "text") {
      if (!b.contains("text") || !b["text"].is_string()) {
        return Status::MalformedReply(where + ".text is missing");
      }
      if (!r.text.empty()) r.text += "\n";
      r.text += b["text"].get<std::string>();
    } else if (type == "tool_use") {
      if (!b.contains("id") || !b["id"].is_string() || !b.contains("name") ||
          !b["name"].is_string()) {
        return Status::MalformedReply(where + " (tool_use) lacks id or name");
      }
      if (!b.contains("input") || !b["input"].is_object()) {
        return Status::MalformedReply(where + ".input is not a JSON object");
      }
      r.tool_calls.push_back({b["id"], b["name"], b["input"]});
    }
    // Other block types (thinking, …) carry nothing the loop uses.
  }
  if (j.contains("stop_reason") && j["stop_reason"].is_string()) r.stop_reason = j["stop_reason"];
  ReadUsage(j, "input_tokens", "output_tokens", &r.usage);
  // Anthropic's input_tokens leaves out the cached part; Usage::input_tokens counts all of it.
  r.usage.cached_input_tokens = UsageNumber(j, {"cache_read_input_tokens"});
  r.usage.cache_creation_input_tokens = UsageNumber(j, {"cache_creation_input_tokens"});
  r.usage.input_tokens += r.usage.cached_input_tokens + r.usage.cache_creation_input_tokens;
  ReadModel(j, &r);
  return r;
}

namespace {

class AnthropicBackend : public HttpBackendBase {
 public:
  AnthropicBackend(const BackendConfig& config, Endpoint endpoint, std::string key)
      : HttpBackendBase("anthropic", config, std::move(endpoint), std::move(key)) {}

  Result<Reply> Complete(const std::vector<Message>& conversation,
                         const std::vector<ToolSpec>& tools) override {
    std::multimap<std::string, std::string> headers = {{"x-api-key", key()},
                                                       {"anthropic-version", kAnthropicVersion}};
    Result<HttpReply> http =
        PostJson("/v1/messages", headers, AnthropicRequest(config(), conversation, tools));
    if (!http.ok()) return http.status();
    Result<Reply> reply = ParseAnthropicReply(http->body);
    if (reply.ok()) {
      reply->attempts = http->attempts;
      SettleTokens(*http, reply->usage);
    }
    return reply;
  }
};

}  // namespace

std::unique_ptr<Backend> NewAnthropicBackend(const BackendConfig& config, Endpoint endpoint,
                                             std::string api_key) {
  return std::make_unique<AnthropicBackend>(config, std::move(endpoint), std::move(api_key));
}

}  // namespace slurm_rca::agents

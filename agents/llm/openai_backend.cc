// OpenAI-compatible chat completions with tool calling (api.openai.com, vLLM, llama.cpp server,
// Ollama).
#include "agents/llm/http_backend_base.h"
#include "agents/llm/http_backends.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

using Json = nlohmann::json;

Json OpenAiRequest(const BackendConfig& config, const std::vector<Message>& conversation,
                   const std::vector<ToolSpec>& tools, OpenAiQuirks quirks) {
  Json messages = Json::array();
  for (const Message& m : conversation) {
    switch (m.role) {
      case Message::Role::kSystem:
        messages.push_back({{"role", "system"}, {"content", m.text}});
        break;
      case Message::Role::kUser:
        messages.push_back({{"role", "user"}, {"content", m.text}});
        break;
      case Message::Role::kAssistant: {
        Json a = {{"role", "assistant"}};
        a["content"] = m.text.empty() && !m.tool_calls.empty() ? Json(nullptr) : Json(m.text);
        if (!m.tool_calls.empty()) {
          Json calls = Json::array();
          for (const ToolCall& c : m.tool_calls) {
            calls.push_back({{"id", c.id},
                             {"type", "function"},
                             {"function", {{"name", c.name}, {"arguments", c.arguments.dump()}}}});
          }
          a["tool_calls"] = calls;
        }
        messages.push_back(a);
        break;
      }
      case Message::Role::kTool:
        messages.push_back({{"role", "tool"},
                            {"tool_call_id", m.tool_call_id},
                            {"content", m.is_error ? "ERROR: " + m.text : m.text}});
        break;
    }
  }
  Json body = {{"model", config.model}, {"messages", messages}};
  body[quirks.max_completion_tokens ? "max_completion_tokens" : "max_tokens"] = config.max_tokens;
  if (!quirks.omit_temperature) body["temperature"] = config.temperature;
  if (config.seed && !quirks.omit_seed) body["seed"] = *config.seed;
  if (!tools.empty()) {
    Json t = Json::array();
    for (const ToolSpec& s : tools) {
      t.push_back({{"type", "function"},
                   {"function",
                    {{"name", s.name},
                     {"description", s.description},
                     {"parameters", s.input_schema.is_null() ? Json::object() : s.input_schema}}}});
    }
    body["tools"] = t;
    body["tool_choice"] = "auto";
  }
  return body;
}

Result<Reply> ParseOpenAiReply(const std::string& body) {
  Result<Json> parsed = ParseReplyObject(body);
  if (!parsed.ok()) return parsed.status();
  Json& j = *parsed;
  if (j.contains("error") && !j["error"].is_null()) {
    return Status::MalformedReply("the server answered an error: " + j["error"].dump());
  }
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
    return Status::MalformedReply("no choices in the reply");
  }
  const Json& choice = j["choices"][0];
  if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object()) {
    return Status::MalformedReply("choices[0].message is missing");
  }
  const Json& msg = choice["message"];
  Reply r;
  if (msg.contains("content") && !msg["content"].is_null()) {
    if (!msg["content"].is_string()) {
      return Status::MalformedReply("choices[0].message.content is not a string");
    }
    r.text = msg["content"];
  }
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string()) {
    r.stop_reason = choice["finish_reason"];
  }
  if (msg.contains("tool_calls") && !msg["tool_calls"].is_null()) {
    if (!msg["tool_calls"].is_array()) {
      return Status::MalformedReply("choices[0].message.tool_calls is not an array");
    }
    int index = 0;
    for (const Json& c : msg["tool_calls"]) {
      const std::string where = "tool_calls[" + std::to_string(index) + "]";
      if (!c.is_object() || !c.contains("function") || !c["function"].is_object()) {
        return Status::MalformedReply(where + ".function is missing");
      }
      const Json& f = c["function"];
      if (!f.contains("name") || !f["name"].is_string() || f["name"].get<std::string>().empty()) {
        return Status::MalformedReply(where + ".function.name is missing");
      }
      ToolCall call;
      call.name = f["name"];
      call.id = c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : "";
      if (call.id.empty()) call.id = "call_" + std::to_string(index);
      const Json& args = f.contains("arguments") ? f["arguments"] : Json();
      if (args.is_string()) {
        const std::string& text = args.get_ref<const std::string&>();
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
          call.arguments = Json::object();
        } else {
          call.arguments = Json::parse(text, nullptr, false);
          if (call.arguments.is_discarded()) {
            return Status::MalformedReply(where + ".function.arguments is not JSON: " +
                                          text.substr(0, 200));
          }
        }
      } else if (args.is_null()) {
        call.arguments = Json::object();
      } else {
        call.arguments = args;
      }
      if (!call.arguments.is_object()) {
        return Status::MalformedReply(where + ".function.arguments is not a JSON object");
      }
      r.tool_calls.push_back(std::move(call));
      ++index;
    }
  }
  ReadUsage(j, "prompt_tokens", "completion_tokens", &r.usage);
  r.usage.cached_input_tokens = UsageNumber(j, {"prompt_tokens_details", "cached_tokens"});
  ReadModel(j, &r);
  return r;
}

namespace {

class OpenAiBackend : public HttpBackendBase {
 public:
  OpenAiBackend(const BackendConfig& config, Endpoint endpoint, std::string key)
      : HttpBackendBase("openai", config, std::move(endpoint), std::move(key)) {}

  Result<Reply> Complete(const std::vector<Message>& conversation,
                         const std::vector<ToolSpec>& tools) override {
    std::multimap<std::string, std::string> headers;
    if (!key().empty()) headers.emplace("Authorization", "Bearer " + key());
    int attempts = 0;
    for (;;) {
      Result<HttpReply> http = PostJson("/chat/completions", headers,
                                        OpenAiRequest(config(), conversation, tools, quirks_));
      if (!http.ok()) {
        const std::string& m = http.status().message();
        const bool bad_request = http.status().code() == Status::Code::kHttpError &&
                                 m.rfind("HTTP 400 ", 0) == 0;
        if (bad_request && !quirks_.max_completion_tokens &&
            m.find("max_completion_tokens") != std::string::npos) {
          quirks_.max_completion_tokens = true;
          ++attempts;  // a 400 is not retried: one request
          continue;
        }
        if (bad_request && !quirks_.omit_temperature &&
            m.find("temperature") != std::string::npos) {
          quirks_.omit_temperature = true;
          ++attempts;
          continue;
        }
        if (bad_request && config().seed && !quirks_.omit_seed &&
            m.find("seed") != std::string::npos) {
          quirks_.omit_seed = true;
          ++attempts;
          continue;
        }
        return http.status();
      }
      Result<Reply> reply = ParseOpenAiReply(http->body);
      if (reply.ok()) {
        reply->attempts = attempts + http->attempts;
        SettleTokens(*http, reply->usage);
      }
      return reply;
    }
  }

  Json SamplingSent() const override {
    Json sent = HttpBackendBase::SamplingSent();
    if (quirks_.omit_temperature) sent["temperature"] = "not sent";
    if (quirks_.omit_seed) sent["seed"] = "not sent";
    return sent;
  }

 private:
  OpenAiQuirks quirks_;
};

}  // namespace

std::unique_ptr<Backend> NewOpenAiBackend(const BackendConfig& config, Endpoint endpoint,
                                          std::string api_key) {
  return std::make_unique<OpenAiBackend>(config, std::move(endpoint), std::move(api_key));
}

}  // namespace slurm_rca::agents

#include "agents/llm/scripted_backend.h"

#include <fstream>
#include <set>
#include <sstream>

namespace slurm_rca::agents {

using base::Result;
using base::Status;

using Json = nlohmann::json;

namespace {

struct Entry {
  std::string when_tool;  // empty: always eligible
  std::string text;
  std::vector<ToolCall> tool_calls;  // ids empty unless given
};

int64_t Quarter(size_t chars) { return static_cast<int64_t>((chars + 3) / 4); }

class ScriptedBackend : public Backend {
 public:
  ScriptedBackend(std::vector<Entry> entries, std::string name)
      : entries_(std::move(entries)), name_(std::move(name)) {}

  std::string Describe() const override { return "scripted:" + name_; }

  Result<Reply> Complete(const std::vector<Message>& conversation,
                         const std::vector<ToolSpec>& tools) override {
    std::set<std::string> offered;
    for (const ToolSpec& t : tools) offered.insert(t.name);
    size_t n = 0;
    size_t input_chars = 0;
    for (const Message& m : conversation) {
      if (m.role == Message::Role::kAssistant) ++n;
      input_chars += m.text.size();
      for (const ToolCall& c : m.tool_calls) input_chars += c.arguments.dump().size();
    }
    Reply r;
    r.stop_reason = "end_turn";
    size_t k = 0;
    const Entry* chosen = nullptr;
    for (const Entry& e : entries_) {
      if (!e.when_tool.empty() && !offered.count(e.when_tool)) continue;
      if (k++ == n) {
        chosen = &e;
        break;
      }
    }
    size_t output_chars = 0;
    if (!chosen) {
      r.text = kScriptExhausted;
    } else {
      r.text = chosen->text;
      for (size_t i = 0; i < chosen->tool_calls.size(); ++i) {
        ToolCall c = chosen->tool_calls[i];
        if (c.id.empty()) c.id = "call_" + std::to_string(n) + "_" + std::to_string(i);
        output_chars += c.arguments.dump().size();
        r.tool_calls.push_back(std::move(c));
      }
      if (!r.tool_calls.empty()) r.stop_reason = "tool_use";
    }
    output_chars += r.text.size();
    r.usage.input_tokens = Quarter(input_chars);
    r.usage.output_tokens = Quarter(output_chars);
    return r;
  }

 private:
  std::vector<Entry> entries_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Backend>> MakeScriptedBackend(const Json& script, const std::string& name) {
  if (!script.is_object() || !script.contains("replies") || !script["replies"].is_array()) {
    return Status::InvalidArgument("script " + name + ": expected {\"replies\": [...]}");
  }
  for (auto it = script.begin(); it != script.end(); ++it) {
    if (it.key() != "replies" && it.key() != "comment") {
      return Status::InvalidArgument("script " + name + ": unknown key '" + it.key() + "'");
    }
  }
  std::vector<Entry> entries;
  int i = 0;
  for (const Json& e : script["replies"]) {
    const std::string where = "script " + name + ": replies[" + std::to_string(i++) + "]";
    if (!e.is_object()) return Status::InvalidArgument(where + " is not an object");
    Entry entry;
    for (auto it = e.begin(); it != e.end(); ++it) {
      const std::string& k = it.key();
      if (k == "when_tool" || k == "text") {
        if (!it->is_string()) return Status::InvalidArgument(where + "." + k + " is not a string");
        (k == "text" ? entry.text : entry.when_tool) = it->get<std::string>();
      } else if (k == "tool_calls") {
        if (!it->is_array()) return Status::InvalidArgument(where + ".tool_calls is not an array");
        for (const Json& c : *it) {
          if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) {
            return Status::InvalidArgument(where + ": a tool call without a name");
          }
          for (auto ck = c.begin(); ck != c.end(); ++ck) {
            if (ck.key() != "name" && ck.key() != "arguments" && ck.key() != "id") {
              return Status::InvalidArgument(where + ": unknown tool-call key '" + ck.key() + "'");
            }
          }
          ToolCall call;
          call.name = c["name"];
          call.arguments = c.value("arguments", Json::object());
          if (!call.arguments.is_object()) {
            return Status::InvalidArgument(where + ": arguments of " + call.name +
                                           " are not an object");
          }
          if (c.contains("id")) {
            if (!c["id"].is_string()) return Status::InvalidArgument(where + ": id not a string");
            call.id = c["id"];
          }
          entry.tool_calls.push_back(std::move(call));
        }
      } else if (k != "comment") {
        return Status::InvalidArgument(where + ": unknown key '" + k + "'");
      }
    }
    entries.push_back(std::move(entry));
  }
  return std::unique_ptr<Backend>(std::make_unique<ScriptedBackend>(std::move(entries), name));
}

Result<std::unique_ptr<Backend>> MakeScriptedBackendFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read script " + path);
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("script " + path + " is not JSON");
  return MakeScriptedBackend(j, path);
}

}  // namespace slurm_rca::agents

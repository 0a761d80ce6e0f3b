#include "mcp/protocol/jsonrpc.h"

#include <utility>

namespace slurm_rca::mcp {
namespace {

// Deeper documents are refused before nlohmann builds them: no MCP message needs more, and a
// line of a million '[' would otherwise cost hundreds of megabytes.
constexpr int kMaxDepth = 128;

// Returns the nesting depth of `text` seen outside strings, stopping early past kMaxDepth.
int NestingDepth(std::string_view text) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) max_depth = depth;
      if (max_depth > kMaxDepth) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

ParsedMessage Fail(const Json& id, int code, const std::string& message) {
  ParsedMessage p;
  p.error = MakeError(id, code, message);
  return p;
}

}  // namespace

bool IsValidId(const Json& id) { return id.is_string() || id.is_number_integer(); }

std::string Serialize(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

ParsedMessage ParseMessage(std::string_view text) {
  if (NestingDepth(text) > kMaxDepth) {
    return Fail(nullptr, kParseError,
                "Parse error: JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.what() may quote the offending bytes; the position is enough and always valid UTF-8.
    return Fail(nullptr, kParseError,
                "Parse error: invalid JSON at byte " + std::to_string(e.byte));
  } catch (const Json::exception&) {
    // A number that overflows a double (1e999) is out_of_range, not parse_error.
    return Fail(nullptr, kParseError, "Parse error: a number is out of range");
  }
  if (doc.is_array()) {
    return Fail(nullptr, kInvalidRequest, "batches are not supported (removed in MCP 2025-06-18)");
  }
  if (!doc.is_object()) {
    return Fail(nullptr, kInvalidRequest, "a JSON-RPC message must be a JSON object");
  }

  // The id is echoed in every later error when it is readable.
  const bool has_id = doc.contains("id");
  const Json id = has_id && IsValidId(doc["id"]) ? doc["id"] : Json(nullptr);

  auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() || *version != "2.0") {
    return Fail(id, kInvalidRequest, "\"jsonrpc\" must be the string \"2.0\"");
  }

  auto method = doc.find("method");
  if (method == doc.end()) {
    const bool has_result = doc.contains("result");
    const bool has_error = doc.contains("error");
    if (!has_result && !has_error) {
      return Fail(id, kInvalidRequest,
                  "a message needs \"method\" (request or notification) or \"result\"/\"error\" "
                  "(response)");
    }
    if (has_result && has_error) {
      return Fail(id, kInvalidRequest, "a response carries \"result\" or \"error\", not both");
    }
    if (!has_id) return Fail(nullptr, kInvalidRequest, "a response needs an \"id\"");
    // An error response may carry id null (its sender could not read our id).
    if (!IsValidId(doc["id"]) && !(has_error && doc["id"].is_null())) {
      return Fail(nullptr, kInvalidRequest, "\"id\" must be a string or an integer");
    }
    if (has_error && !doc["error"].is_object()) {
      return Fail(id, kInvalidRequest, "\"error\" must be an object");
    }
    Message m;
    m.kind = Message::Kind::kResponse;
    m.id = doc["id"];
    if (has_result) m.result = doc["result"];
    if (has_error) m.error = doc["error"];
    ParsedMessage p;
    p.message = std::move(m);
    return p;
  }

  if (has_id && !IsValidId(doc["id"])) {
    return Fail(nullptr, kInvalidRequest,
                "\"id\" must be a string or an integer (not null, fractional, boolean, object or "
                "array)");
  }
  if (!method->is_string() || method->get_ref<const std::string&>().empty()) {
    return Fail(id, kInvalidRequest, "\"method\" must be a non-empty string");
  }
  auto params = doc.find("params");
  if (params != doc.end() && !params->is_object() && !params->is_array()) {
    return Fail(id, kInvalidRequest, "\"params\" must be an object or an array when present");
  }

  Message m;
  m.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  m.id = id;
  m.method = method->get<std::string>();
  if (params != doc.end()) m.params = std::move(*params);  // doc is dropped on return
  ParsedMessage p;
  p.message = std::move(m);
  return p;
}

Json MakeResult(const Json& id, Json result) {
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

std::string SerializeResult(const Json& id, std::string_view serialized_result) {
  // Serialize writes an object's keys in order (nlohmann::json keeps them in a std::map):
  // "id", "jsonrpc", "result".
  static constexpr std::string_view kHead = "{\"id\":";
  static constexpr std::string_view kMiddle = ",\"jsonrpc\":\"2.0\",\"result\":";
  const std::string id_text = Serialize(id);
  std::string line;
  line.reserve(kHead.size() + id_text.size() + kMiddle.size() + serialized_result.size() + 1);
  line.append(kHead).append(id_text).append(kMiddle).append(serialized_result).push_back('}');
  return line;
}

Json MakeError(const Json& id, int code, const std::string& message, Json data) {
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

Json MakeNotification(const std::string& method, Json params) {
  Json n = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

}  // namespace slurm_rca::mcp

// JSON-RPC 2.0 messages for MCP: parsing one message, and building results, errors and
// notifications. Batches (JSON arrays) are refused with -32600: MCP removed them in 2025-06-18.
//
//   ParsedMessage p = ParseMessage(line);
//   if (!p.ok()) send(p.error);                 // -32700 or -32600, id null when unreadable
//   else if (p.message.kind == Message::Kind::kRequest) ...
#ifndef SLURM_RCA_MCP_PROTOCOL_JSONRPC_H_
#define SLURM_RCA_MCP_PROTOCOL_JSONRPC_H_

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace slurm_rca::mcp {

using Json = nlohmann::json;

enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
};

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  Json id;            // string or integer for requests and responses; null for notifications
  std::string method; // requests and notifications
  Json params;        // object, or null when absent
  Json result;        // responses
  Json error;         // error responses
};

struct ParsedMessage {
  std::optional<Message> message;
  Json error;  // the error response to send when !ok() (may carry id null)
  bool ok() const { return message.has_value(); }
};

// Parses exactly one JSON-RPC message. Invalid JSON → -32700; a batch, a non-object, a wrong
// "jsonrpc", a null/fractional/boolean id, a non-string method or non-object/array params →
// -32600 (with the id when it could be read).
ParsedMessage ParseMessage(std::string_view text);

// True for a usable request id: a string or an integer (never null, fractional or boolean).
bool IsValidId(const Json& id);

// One message as one compact line (no newline added): `\n` inside strings is escaped, and
// invalid UTF-8 is replaced with U+FFFD rather than throwing. Transports use this for every write.
std::string Serialize(const Json& message);

// Splits newline-delimited bytes into lines across reads (stdio framing, both directions). A line
// longer than `max_bytes` is dropped whole, up to its newline; on_too_long runs once for it.
//
//   LineSplitter lines(4u << 20);
//   lines.Feed(chunk, [&](std::string_view line) { Handle(line); }, [&] { Refuse(); });
//   if (eof && !lines.partial().empty()) Handle(lines.partial());   // a last line without '\n'
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  template <typename OnLine, typename OnTooLong>
  void Feed(std::string_view data, OnLine&& on_line, OnTooLong&& on_too_long) {
    while (!data.empty()) {
      const std::size_t newline = data.find('\n');
      const std::string_view piece = data.substr(0, newline);
      if (!skipping_) {
        if (line_.size() + piece.size() > max_bytes_) {
          on_too_long();
          line_.clear();
          skipping_ = true;
        } else {
          line_.append(piece);
        }
      }
      if (newline == std::string_view::npos) break;
      data.remove_prefix(newline + 1);
      if (!skipping_) on_line(std::string_view(line_));
      line_.clear();
      skipping_ = false;
    }
  }

  // The bytes after the last newline ("" while a too-long line is being dropped).
  std::string_view partial() const { return skipping_ ? std::string_view() : line_; }

 private:
  const std::size_t max_bytes_;
  std::string line_;
  bool skipping_ = false;  // inside a line that was too long
};

Json MakeResult(const Json& id, Json result);
// Serialize(MakeResult(id, result)) where `serialized_result` is Serialize(result): the same
// bytes, without serializing the result again (a tool answer reused for many calls).
std::string SerializeResult(const Json& id, std::string_view serialized_result);
Json MakeError(const Json& id, int code, const std::string& message, Json data = nullptr);
Json MakeNotification(const std::string& method, Json params);

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_PROTOCOL_JSONRPC_H_

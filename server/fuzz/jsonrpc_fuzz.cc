// libFuzzer target for JSON-RPC message handling: each line of the input is one message, parsed
// by ParseMessage and, when it parses, handled by the server (demo_server.h) in one Session, so
// that a seed can initialize and then call tools. Aborts on:
//   - a refusal that is not a JSON-RPC error (-32700 or -32600, id null, string or integer);
//   - a parsed message that does not survive Serialize and ParseMessage unchanged;
//   - an answer to a request that is not a response to that id (exactly one of result and error,
//     an integer error code), or any answer or notification whose serialized line does not parse
//     back as a valid message of its kind;
//   - a result to a request with the 2026-07-28 claim without resultType "complete" and
//     _meta.serverInfo, an error to one with the legacy code -32002, or a notifications/message
//     sent for one that named no logLevel;
//   - an exception escaping ParseMessage or Server::Handle (libFuzzer reports it as a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/fuzz/demo_server.h"
#include "mcp/protocol/jsonrpc.h"

namespace {

using slurm_rca::mcp::Json;
using slurm_rca::mcp::Message;
using slurm_rca::mcp::ParsedMessage;
using slurm_rca::mcp::ParseMessage;
using slurm_rca::mcp::Serialize;

constexpr int kMaxMessages = 12;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "JSONRPC INVARIANT: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The message as the wire carries it.
Json Wire(const Message& m) {
  Json j = {{"jsonrpc", "2.0"}};
  switch (m.kind) {
    case Message::Kind::kRequest:
      j["id"] = m.id;
      [[fallthrough]];
    case Message::Kind::kNotification:
      j["method"] = m.method;
      if (!m.params.is_null()) j["params"] = m.params;
      break;
    case Message::Kind::kResponse:
      j["id"] = m.id;
      if (!m.error.is_null()) {
        j["error"] = m.error;
      } else {
        j["result"] = m.result;
      }
      break;
  }
  return j;
}

bool Same(const Message& a, const Message& b) {
  return a.kind == b.kind && a.id == b.id && a.method == b.method && a.params == b.params &&
         a.result == b.result && a.error == b.error;
}

void CheckRefusal(const Json& error, std::string_view line) {
  const bool well_formed =
      error.is_object() && error.value("jsonrpc", "") == "2.0" && error.contains("id") &&
      (error["id"].is_null() || slurm_rca::mcp::IsValidId(error["id"])) &&
      error.contains("error") && error["error"].is_object() &&
      error["error"].contains("code") && error["error"]["message"].is_string() &&
      (error["error"]["code"] == -32700 || error["error"]["code"] == -32600);
  if (!well_formed) Fail("malformed refusal", Serialize(error) + " for " + std::string(line));
}

// A line the server writes must be one line that parses back as a message of `kind`.
Message Reparse(const Json& written, Message::Kind kind) {
  const std::string text = Serialize(written);
  if (text.find('\n') != std::string::npos) Fail("written message spans lines", text);
  ParsedMessage again = ParseMessage(text);
  if (!again.ok()) Fail("written message does not parse", text);
  if (again.message->kind != kind) Fail("written message of the wrong kind", text);
  return *again.message;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  slurm_rca::mcp::Server& server = slurm_rca::server::fuzz::DemoServer();
  slurm_rca::mcp::Session session;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int n = 0; n < kMaxMessages && !input.empty(); ++n) {
    const std::size_t end = input.find('\n');
    const std::string_view line = input.substr(0, end);
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);

    ParsedMessage parsed = ParseMessage(line);
    if (!parsed.ok()) {
      CheckRefusal(parsed.error, line);
      continue;
    }
    const Message& message = *parsed.message;
    const std::string wire = Serialize(Wire(message));
    ParsedMessage round = ParseMessage(wire);
    if (!round.ok() || !Same(*round.message, message)) Fail("round trip", wire);

    const bool modern = slurm_rca::mcp::HasModernClaim(message);
    const bool log_level_named =
        modern && message.params["_meta"].contains(slurm_rca::mcp::kMetaLogLevel);
    auto notify = [&](const Json& note) {
      const Message n = Reparse(note, Message::Kind::kNotification);
      if (modern && !log_level_named && n.method == "notifications/message") {
        Fail("a log message for a modern request without logLevel", wire);
      }
    };
    std::optional<Json> reply = server.Handle(message, session, notify);
    if (message.kind != Message::Kind::kRequest) {
      if (reply) Fail("answered a notification or response", wire);
      continue;
    }
    if (!reply) continue;  // cancelled while it ran
    const Message answer = Reparse(*reply, Message::Kind::kResponse);
    if (answer.id != message.id) Fail("answer to another id", Serialize(*reply));
    if (answer.result.is_null() == answer.error.is_null()) {
      Fail("answer without exactly one of result and error", Serialize(*reply));
    }
    if (!answer.error.is_null() && !answer.error["code"].is_number_integer()) {
      Fail("error without an integer code", Serialize(*reply));
    }
    if (modern && !answer.result.is_null() &&
        (answer.result.value("resultType", "") != "complete" ||
         !answer.result["_meta"].contains(slurm_rca::mcp::kMetaServerInfo))) {
      Fail("a modern result without resultType or serverInfo", Serialize(*reply));
    }
    if (modern && !answer.error.is_null() && answer.error["code"] == -32002) {
      Fail("the legacy -32002 in a modern answer", Serialize(*reply));
    }
  }
  return 0;
}

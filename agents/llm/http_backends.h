// The two HTTP model back-ends, and their request and reply formats as pure functions (so that
// tests can check a shape without a server). Use MakeBackend (backend.h) to build them.
//
//   nlohmann::json body = OpenAiRequest(config, conversation, tools);
//   Result<Reply> r = ParseOpenAiReply(http_body);     // kMalformedReply on a bad shape
//
// Format notes:
//   OpenAI    a tool result with is_error is sent as a role=tool message whose content starts
//             "ERROR: " (the API has no error flag). Tool-call arguments are a JSON string that
//             must parse to an object ("" is taken as {}); a server that sends an object is
//             accepted too. A tool call without an id gets "call_<index>".
//   Anthropic consecutive tool results (and a user message after them) are merged into one user
//             message, as the API requires alternating roles; an assistant turn with neither text
//             nor tool calls is left out.
#ifndef SLURM_RCA_AGENTS_LLM_HTTP_BACKENDS_H_
#define SLURM_RCA_AGENTS_LLM_HTTP_BACKENDS_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/llm/backend.h"
#include "agents/llm/http_client.h"

namespace slurm_rca::agents {

// OpenAI's reasoning models refuse max_tokens (they want max_completion_tokens) and a temperature
// other than the default. The back-end starts with the classic fields, which every compatible
// server takes, and on a 400 that names max_completion_tokens, or temperature, resends once with
// the field changed, and keeps the change for later turns.
struct OpenAiQuirks {
  bool max_completion_tokens = false;  // send max_completion_tokens instead of max_tokens
  bool omit_temperature = false;
  bool omit_seed = false;  // the server refused "seed" (400 naming it)
};
nlohmann::json OpenAiRequest(const BackendConfig& config, const std::vector<Message>& conversation,
                             const std::vector<ToolSpec>& tools, OpenAiQuirks quirks = {});
base::Result<Reply> ParseOpenAiReply(const std::string& body);

nlohmann::json AnthropicRequest(const BackendConfig& config,
                                const std::vector<Message>& conversation,
                                const std::vector<ToolSpec>& tools);
base::Result<Reply> ParseAnthropicReply(const std::string& body);

// `config` has been checked by MakeBackend: endpoint parsed, key read from its variable (through
// the EnvLookup main passed).
std::unique_ptr<Backend> NewOpenAiBackend(const BackendConfig& config, Endpoint endpoint,
                                          std::string api_key);
std::unique_ptr<Backend> NewAnthropicBackend(const BackendConfig& config, Endpoint endpoint,
                                             std::string api_key);

inline constexpr char kAnthropicVersion[] = "2023-06-01";

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_HTTP_BACKENDS_H_

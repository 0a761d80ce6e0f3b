// The scripted back-end: a deterministic stand-in for a model, for tests and benches. It replays
// a JSON script and keeps no state between calls, so one script can drive a supervisor and each
// specialist sub-agent (each has its own conversation).
//
//   {"replies": [
//     {"when_tool": "slurm_query",                       // optional
//      "text": "Looking at the queue.",                  // optional
//      "tool_calls": [{"name": "slurm_query", "arguments": {"topic": "queue"}}]},
//     {"tool_calls": [{"name": "submit_diagnosis",
//                      "arguments": {"root_cause": "db.mysql", "confidence": 0.8}}]}]}
//
// Selection: the eligible entries are those without when_tool and those whose when_tool names a
// tool of the offered list, in file order; the reply is eligible entry number N, where N is the
// number of assistant messages already in the conversation. Past the last eligible entry the reply
// is the text "script exhausted" with no tool calls. Tool-call ids are "call_<N>_<k>" unless the
// entry gives "id". Unknown keys and arguments that are not objects are refused when the script is
// loaded.
//
// Usage is not a tokenizer's: input_tokens = ceil(characters / 4) over the conversation's texts
// and tool-call arguments (as JSON), output_tokens = ceil(characters / 4) over the reply's text and
// tool-call arguments. Enough to exercise token budgets deterministically.
#ifndef SLURM_RCA_AGENTS_LLM_SCRIPTED_BACKEND_H_
#define SLURM_RCA_AGENTS_LLM_SCRIPTED_BACKEND_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "agents/llm/backend.h"

namespace slurm_rca::agents {

inline constexpr char kScriptExhausted[] = "script exhausted";

// Builds the back-end from a script's JSON; `name` goes into Describe() ("scripted:<name>").
base::Result<std::unique_ptr<Backend>> MakeScriptedBackend(const nlohmann::json& script,
                                                           const std::string& name);
// Reads the script from a file. Error: unreadable file, bad JSON, a script of the wrong shape.
base::Result<std::unique_ptr<Backend>> MakeScriptedBackendFromFile(const std::string& path);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_SCRIPTED_BACKEND_H_

// Model back-ends: one call of a chat model with tools, whatever serves it.
//
//   BackendConfig cfg;
//   cfg.kind = "openai";                      // or "anthropic", or "scripted" (tests)
//   cfg.base_url = "http://127.0.0.1:8000/v1"; // vLLM, llama.cpp server, Ollama, api.openai.com …
//   cfg.model = "qwen2.5-32b-instruct";
//   Result<std::unique_ptr<Backend>> b = MakeBackend(cfg, cli::ProcessEnvironment());
//   if (!b.ok()) return Fail(b.status().ToString());   // names the missing key variable, bad URL…
//   Result<Reply> r = (*b)->Complete(conversation, tools);
//   if (r.ok()) for (const ToolCall& c : r->tool_calls) ...;
//
// Kinds:
//   openai     POST {base}/chat/completions, tools as {"type":"function"}, tool results as
//              role=tool messages, usage.prompt_tokens / completion_tokens. base_url defaults to
//              $OPENAI_BASE_URL, else https://api.openai.com/v1 (the base includes /v1). Key from
//              $api_key_env (default OPENAI_API_KEY), sent as "Authorization: Bearer …"; a local
//              server (http://127.0.0.1, http://localhost) may have no key.
//   anthropic  POST {base}/v1/messages with x-api-key and anthropic-version: 2023-06-01;
//              tool_use / tool_result content blocks, the system prompt as the top-level field
//              (one text block), system and last tool marked cache_control ephemeral;
//              usage.input_tokens / output_tokens. base_url defaults to https://api.anthropic.com
//              (without /v1). Key from $api_key_env (default ANTHROPIC_API_KEY), required.
//   scripted   replays a JSON script, for tests; see scripted_backend.h for its format and its
//              token count (characters / 4, not a tokenizer).
//
// HTTP back-ends speak HTTPS through cpp-httplib and OpenSSL (the system's CA store, or
// BackendConfig::ca_file). They retry 429 and 5xx answers and transport failures with exponential
// backoff (backoff_initial_s, doubling, each wait capped at backoff_max_s; a Retry-After header in
// seconds replaces the computed wait, up to the same cap), at most max_retries times; other 4xx
// answers and an untrusted server certificate are not retried. With BackendConfig::limiter the
// waits of a 429 are the limiter's: every back-end sharing it waits (endpoint_limiter.h).
// A reply that is not the JSON the API promises (bad JSON, missing fields, tool arguments that are
// not a JSON object) is a kMalformedReply status, never a crash. Nothing here throws.
//
// Threads: a Backend is used by one thread at a time (one agent run = one thread). Distinct
// Backend objects may be used from distinct threads.
#ifndef SLURM_RCA_AGENTS_LLM_BACKEND_H_
#define SLURM_RCA_AGENTS_LLM_BACKEND_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/llm/endpoint_limiter.h"
#include "base/status.h"

namespace slurm_rca::agents {

// A tool the model may call; input_schema is a JSON Schema object.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::json input_schema;
};

// One call the model asked for. `arguments` is always a JSON object (back-ends refuse others).
struct ToolCall {
  std::string id;
  std::string name;
  nlohmann::json arguments;
};

struct Message {
  enum class Role { kSystem, kUser, kAssistant, kTool };
  Role role;
  std::string text;
  std::vector<ToolCall> tool_calls;  // kAssistant: the calls the model made
  std::string tool_call_id;          // kTool: the call this answers
  std::string tool_name;             // kTool
  bool is_error = false;             // kTool: the call failed (the text says why)
};

// Tokens of one reply (or summed over replies). input_tokens counts every prompt token, the
// cached ones included, whatever the API calls them: OpenAI's usage.prompt_tokens already includes
// usage.prompt_tokens_details.cached_tokens; Anthropic's usage.input_tokens does not, so the
// Anthropic back-end adds cache_read_input_tokens and cache_creation_input_tokens to it.
struct Usage {
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  // Prompt tokens read from the server's prompt cache (OpenAI cached_tokens, Anthropic
  // cache_read_input_tokens); part of input_tokens.
  int64_t cached_input_tokens = 0;
  // Prompt tokens written to the cache (Anthropic cache_creation_input_tokens; OpenAI reports
  // none); part of input_tokens.
  int64_t cache_creation_input_tokens = 0;
  int64_t total() const { return input_tokens + output_tokens; }
  Usage& operator+=(const Usage& o) {
    input_tokens += o.input_tokens;
    output_tokens += o.output_tokens;
    cached_input_tokens += o.cached_input_tokens;
    cache_creation_input_tokens += o.cache_creation_input_tokens;
    return *this;
  }
};

struct Reply {
  std::string text;
  std::vector<ToolCall> tool_calls;
  Usage usage;              // from the reply's usage block (0 when the server gives none)
  std::string stop_reason;  // as the API says it: "stop", "tool_calls", "end_turn", "tool_use" …
  int attempts = 1;         // HTTP requests made for this reply (retries + 1)
  std::string model;        // the model the server says answered (its reply's "model"); "" if none
};

struct BackendConfig {
  std::string kind;         // openai | anthropic | scripted
  std::string base_url;     // empty: the kind's default (above)
  std::string model;
  std::string api_key_env;  // empty: OPENAI_API_KEY / ANTHROPIC_API_KEY
  std::string ca_file;      // PEM file of trusted CAs for HTTPS; empty: the system's store
  int max_tokens = 4096;    // per reply
  double temperature = 0;
  // Sent as "seed" with every request by the OpenAI back-end when set (OpenAI, vLLM and llama.cpp
  // take it; a server that answers 400 naming it gets requests without it, and the header says
  // "not sent"). Anthropic's Messages API has no seed: MakeBackend refuses one there.
  std::optional<std::int64_t> seed;
  double timeout_s = 120;   // connect, read and write timeout of one request
  int max_retries = 4;      // extra attempts after a 429, a 5xx or a transport failure
  double backoff_initial_s = 1.0;  // first wait; doubles each retry
  double backoff_max_s = 60;       // cap on each wait, Retry-After included
  std::string script;       // scripted only: path of the JSON script
  // HTTP kinds: the endpoint's request and token limits and 429 pauses, shared by every back-end
  // made for the same endpoint (one per worker of rca-bench run --jobs); null: none. The token
  // estimate of a request is its body's bytes / 4 plus max_tokens (endpoint_limiter.h).
  std::shared_ptr<EndpointLimiter> limiter;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "openai:MODEL@URL", "anthropic:MODEL@URL", "scripted:PATH".
  virtual std::string Describe() const = 0;
  // One model turn over the whole conversation (the first message may be kSystem). Returns the
  // reply or, after the retries, the Status of the last failure.
  virtual base::Result<Reply> Complete(const std::vector<Message>& conversation,
                                       const std::vector<ToolSpec>& tools) = 0;
  // The time after which Complete gives up (RunAgent sets it from the wall budget before every
  // turn). HTTP back-ends shorten each request's timeouts and skip a retry whose wait would pass
  // it, returning kDeadlineExceeded. time_point::max() (the default) means none; scripted ignores it.
  virtual void SetDeadline(std::chrono::steady_clock::time_point deadline) {}
  // What the requests carry of the sampling settings, as the submission header records them:
  // {"temperature": number or "not sent", "seed": number or "not sent"}. The default (scripted)
  // sends nothing.
  virtual nlohmann::json SamplingSent() const {
    return {{"temperature", "not sent"}, {"seed", "not sent"}};
  }
};

// An environment variable's value; nullopt when it is unset. The library reads no variable
// itself: main passes its process environment (cli::ProcessEnvironment), a test a map.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Builds the back-end `config.kind` names, reading the API key variable (and OPENAI_BASE_URL when
// an openai back-end names no URL) through env. Errors: an unknown kind, a missing or unparsable
// URL, a missing key variable (naming it), no model for an HTTP kind, an unreadable or invalid
// script. Defined in make_backend.cc.
base::Result<std::unique_ptr<Backend>> MakeBackend(const BackendConfig& config,
                                                   const EnvLookup& env);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_BACKEND_H_

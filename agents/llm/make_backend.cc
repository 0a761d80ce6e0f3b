// MakeBackend (backend.h), in a file of its own beside the back-ends it makes: backend.h, the
// interface they implement, includes none of them (no include cycle in a folder:
// tests/layers_test.cc).
#include "agents/llm/backend.h"

#include <fstream>

#include "agents/llm/http_backends.h"
#include "agents/llm/scripted_backend.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

Result<std::unique_ptr<Backend>> MakeBackend(const BackendConfig& config, const EnvLookup& env) {
  if (config.kind == "scripted") {
    if (config.script.empty()) return Status::InvalidArgument("scripted back-end: no script path");
    return MakeScriptedBackendFromFile(config.script);
  }
  const bool openai = config.kind == "openai";
  if (!openai && config.kind != "anthropic") {
    return Status::InvalidArgument("unknown back-end kind '" + config.kind +
                                   "' (openai, anthropic or scripted)");
  }
  if (config.model.empty()) {
    return Status::InvalidArgument(config.kind + " back-end: no model given");
  }
  if (!openai && config.seed) {
    return Status::InvalidArgument("anthropic back-end: the Messages API takes no seed "
                                   "(--model-seed is for OpenAI-compatible endpoints)");
  }
  std::string url = config.base_url;
  if (url.empty() && openai) {
    std::optional<std::string> from_env = env("OPENAI_BASE_URL");
    url = from_env && !from_env->empty() ? *from_env : "https://api.openai.com/v1";
  }
  if (url.empty()) url = "https://api.anthropic.com";
  Result<Endpoint> endpoint = ParseUrl(url);
  if (!endpoint.ok()) return endpoint.status();
  if (!config.ca_file.empty() && !std::ifstream(config.ca_file)) {
    return Status::InvalidArgument("cannot read ca_file " + config.ca_file);
  }
  if (config.max_retries < 0 || config.timeout_s <= 0 || config.backoff_initial_s < 0 ||
      config.backoff_max_s < 0 || config.max_tokens <= 0) {
    return Status::InvalidArgument(config.kind + " back-end: max_retries, backoff must be >= 0, "
                                   "timeout_s and max_tokens > 0");
  }
  const std::string key_env =
      !config.api_key_env.empty() ? config.api_key_env
                                  : (openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
  std::string api_key = env(key_env).value_or("");
  const bool local = endpoint->scheme == "http" && endpoint->IsLoopback();
  if (api_key.empty() && !(openai && local)) {
    return Status::InvalidArgument("the API key variable " + key_env + " is not set (needed for " +
                                   endpoint->ToString() + ")");
  }
  if (openai) return NewOpenAiBackend(config, *endpoint, api_key);
  return NewAnthropicBackend(config, *endpoint, api_key);
}

}  // namespace slurm_rca::agents

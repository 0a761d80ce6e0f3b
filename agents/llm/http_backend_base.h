// Internal to agents_llm: what the OpenAI and Anthropic back-ends share. The configuration, the
// endpoint, the API key and the POST with retries live in HttpBackendBase, which also gives
// Describe and SetDeadline; ParseReplyObject and ReadUsage read the parts of a reply both APIs
// shape alike. A back-end derives from the base and writes its own request, headers and reply
// parser:
//
//   class AnthropicBackend : public HttpBackendBase {
//     Result<Reply> Complete(...) override {
//       Result<HttpReply> http = PostJson("/v1/messages", headers, AnthropicRequest(...));
//       ...
//     }
//   };
//
//   Result<nlohmann::json> j = ParseReplyObject(body);   // kMalformedReply unless a JSON object
//   ReadUsage(*j, "input_tokens", "output_tokens", &reply.usage);
#ifndef SLURM_RCA_AGENTS_LLM_HTTP_BACKEND_BASE_H_
#define SLURM_RCA_AGENTS_LLM_HTTP_BACKEND_BASE_H_

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "agents/llm/backend.h"
#include "agents/llm/http_client.h"

namespace slurm_rca::agents {

class HttpBackendBase : public Backend {
 public:
  // "KIND:MODEL@URL", KIND as given to the constructor ("openai", "anthropic").
  std::string Describe() const override;
  void SetDeadline(std::chrono::steady_clock::time_point deadline) override;
  // The configured temperature and seed ("not sent" when none is configured).
  nlohmann::json SamplingSent() const override;

 protected:
  // `config` has been checked by MakeBackend; its timeout, retry and backoff settings and CA file
  // configure the POST.
  HttpBackendBase(std::string kind, const BackendConfig& config, Endpoint endpoint,
                  std::string key);

  // POSTs `body` to the endpoint's path prefix + `path`. Invalid UTF-8 in the body's strings is
  // replaced (U+FFFD), never thrown on. Returns JsonPoster::Post's reply or error.
  base::Result<HttpReply> PostJson(const std::string& path,
                                   const std::multimap<std::string, std::string>& headers,
                                   const nlohmann::json& body);

  // Tells the endpoint's limiter what the reply of `http` used (its grant reserved an estimate).
  void SettleTokens(const HttpReply& http, const Usage& usage);

  const BackendConfig& config() const { return config_; }
  const std::string& key() const { return key_; }  // "" where none is needed (local OpenAI)

 private:
  std::string kind_;
  BackendConfig config_;
  Endpoint endpoint_;
  std::string key_;
  JsonPoster poster_;
};

// A reply body that is a JSON object, or kMalformedReply "the body is not JSON" / "the body is
// not a JSON object".
base::Result<nlohmann::json> ParseReplyObject(const std::string& body);

// Sets usage->input_tokens and output_tokens from reply["usage"][input_key] and [output_key]
// where they are numbers; leaves a field as it is when the block or the number is absent.
void ReadUsage(const nlohmann::json& reply, const char* input_key, const char* output_key,
               Usage* usage);
// reply["usage"] followed along `path` (keys) to a number, else 0.
int64_t UsageNumber(const nlohmann::json& reply, std::initializer_list<const char*> path);
// Reply::model from reply["model"] when it is a string.
void ReadModel(const nlohmann::json& reply, Reply* r);

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_HTTP_BACKEND_BASE_H_

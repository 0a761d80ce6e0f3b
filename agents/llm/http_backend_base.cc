#include "agents/llm/http_backend_base.h"

namespace slurm_rca::agents {

using base::Result;
using base::Status;

using Json = nlohmann::json;

HttpBackendBase::HttpBackendBase(std::string kind, const BackendConfig& config, Endpoint endpoint,
                                 std::string key)
    : kind_(std::move(kind)),
      config_(config),
      endpoint_(endpoint),
      key_(std::move(key)),
      poster_(endpoint, {config.ca_file, config.timeout_s, config.max_retries,
                         config.backoff_initial_s, config.backoff_max_s, config.limiter,
                         config.max_tokens}) {}

std::string HttpBackendBase::Describe() const {
  return kind_ + ":" + config_.model + "@" + endpoint_.ToString();
}

void HttpBackendBase::SetDeadline(std::chrono::steady_clock::time_point deadline) {
  poster_.SetDeadline(deadline);
}

Json HttpBackendBase::SamplingSent() const {
  return {{"temperature", config_.temperature},
          {"seed", config_.seed ? Json(*config_.seed) : Json("not sent")}};
}

Result<HttpReply> HttpBackendBase::PostJson(const std::string& path,
                                            const std::multimap<std::string, std::string>& headers,
                                            const Json& body) {
  return poster_.Post(path, headers, body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void HttpBackendBase::SettleTokens(const HttpReply& http, const Usage& usage) {
  if (config_.limiter && http.grant.id != 0) config_.limiter->Settle(http.grant, usage.total());
}

Result<Json> ParseReplyObject(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) return Status::MalformedReply("the body is not JSON");
  if (!j.is_object()) return Status::MalformedReply("the body is not a JSON object");
  return j;
}

void ReadUsage(const Json& reply, const char* input_key, const char* output_key, Usage* usage) {
  if (!reply.contains("usage") || !reply["usage"].is_object()) return;
  const Json& u = reply["usage"];
  if (u.contains(input_key) && u[input_key].is_number()) {
    usage->input_tokens = static_cast<int64_t>(u[input_key].get<double>());
  }
  if (u.contains(output_key) && u[output_key].is_number()) {
    usage->output_tokens = static_cast<int64_t>(u[output_key].get<double>());
  }
}

}  // namespace slurm_rca::agents

namespace slurm_rca::agents {

int64_t UsageNumber(const Json& reply, std::initializer_list<const char*> path) {
  if (!reply.contains("usage")) return 0;
  const Json* j = &reply["usage"];
  for (const char* key : path) {
    if (!j->is_object() || !j->contains(key)) return 0;
    j = &(*j)[key];
  }
  return j->is_number() ? static_cast<int64_t>(j->get<double>()) : 0;
}

void ReadModel(const Json& reply, Reply* r) {
  if (reply.contains("model") && reply["model"].is_string()) r->model = reply["model"];
}

}  // namespace slurm_rca::agents

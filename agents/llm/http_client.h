// Internal to agents_llm: the HTTP(S) POST with retries that both model back-ends share.
//
//   Result<Endpoint> e = ParseUrl("https://api.openai.com/v1");   // path prefix "/v1"
//   JsonPoster poster(*e, options);
//   Result<HttpReply> r = poster.Post("/chat/completions", {{"Authorization", "Bearer …"}}, body);
//
// Post returns a reply only for a 2xx answer. 429, 5xx and transport failures are retried with
// exponential backoff (a Retry-After in seconds replaces the computed wait; each wait is capped at
// backoff_max_s); a certificate that fails verification and other 4xx answers are not retried.
// With HttpOptions::limiter, every attempt first waits for the endpoint's limiter (shared with the
// other workers' posters), and a 429 (or a 5xx with Retry-After) pauses the limiter for the wait
// instead of sleeping here, so that every poster sharing it waits too.
// Threads: a JsonPoster is used by one thread at a time; its limiter may be shared.
#ifndef SLURM_RCA_AGENTS_LLM_HTTP_CLIENT_H_
#define SLURM_RCA_AGENTS_LLM_HTTP_CLIENT_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "agents/llm/endpoint_limiter.h"
#include "base/status.h"

namespace httplib {
class ClientImpl;
}

namespace slurm_rca::agents {

struct Endpoint {
  std::string scheme;  // http | https
  std::string host;
  int port = 0;
  std::string path_prefix;  // "" or "/v1" (no trailing slash)
  bool IsLoopback() const;
  std::string ToString() const;  // scheme://host:port/prefix
};

// scheme://host[:port][/path]; http or https only. No query or fragment.
base::Result<Endpoint> ParseUrl(const std::string& url);

struct HttpOptions {
  std::string ca_file;
  double timeout_s = 120;
  int max_retries = 4;
  double backoff_initial_s = 1.0;
  double backoff_max_s = 60;
  // The endpoint's limits and pauses, shared by every worker's poster; null: none.
  std::shared_ptr<EndpointLimiter> limiter;
  // Tokens a reply may add to the request's estimate (bytes / 4) when the limiter counts tokens.
  int64_t reply_tokens = 0;
};

struct HttpReply {
  int status = 0;
  std::string body;
  int attempts = 1;
  // The limiter's grant of the attempt that succeeded (id 0: no limiter); the back-end settles it
  // with the reply's usage (HttpBackendBase::SettleTokens).
  EndpointLimiter::Grant grant;
};

class JsonPoster {
 public:
  JsonPoster(Endpoint endpoint, HttpOptions options);
  ~JsonPoster();
  base::Result<HttpReply> Post(const std::string& path,
                               const std::multimap<std::string, std::string>& headers,
                               const std::string& body);
  // Requests after `deadline` are not started, timeouts are cut to it and a retry whose wait
  // would pass it is not made: kDeadlineExceeded.
  void SetDeadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }

 private:
  Endpoint endpoint_;
  HttpOptions options_;
  std::unique_ptr<httplib::ClientImpl> client_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_HTTP_CLIENT_H_

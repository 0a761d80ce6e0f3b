// TEST DOUBLE. FakeModelServer stands in for a model API in tests: a cpp-httplib server on
// 127.0.0.1 (an ephemeral port) that answers every POST with the next scripted response, in
// either API's shape, and records the requests it received. It never calls a real model.
//
//   FakeModelServer server;                                     // or FakeModelServer(tls_cert)
//   server.Enqueue({429, "{}", {{"Retry-After", "0"}}});
//   server.Enqueue({200, FakeModelServer::OpenAiToolCalls({{"c1", "slurm_query", {{"topic", "queue"}}}})});
//   cfg.base_url = server.base_url() + "/v1";
//   ... backend->Complete(...) ...
//   EXPECT_EQ(server.requests()[1].json["model"], "m");
//
// With no response left it answers with the responder's response when one is set
// (SetResponder: a reply computed from the request), else 500 {"error": "fake model server: no
// scripted response left"}.
// Threads: the server runs on its own thread and answers on a pool of worker threads (8 unless
// FakeModelServer(threads) says otherwise: each keep-alive connection holds one, so a test of N
// concurrent clients needs N); Enqueue and requests() may be called from any thread. The
// destructor stops the server. KeepRequests(false) stops recording requests (a long benchmark);
// request_count() counts them either way.
//
// MakeSelfSignedCertificate makes a throwaway RSA key and a self-signed certificate (CA:TRUE,
// subjectAltName IP:127.0.0.1 and DNS:localhost) with the OpenSSL API, for HTTPS tests.
#ifndef SLURM_RCA_AGENTS_LLM_FAKE_MODEL_SERVER_H_
#define SLURM_RCA_AGENTS_LLM_FAKE_MODEL_SERVER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "agents/llm/backend.h"

namespace httplib {
class Server;
}

namespace slurm_rca::agents {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};
base::Result<TestCertificate> MakeSelfSignedCertificate();

class FakeModelServer {
 public:
  struct Response {
    int status = 200;
    std::string body;
    std::map<std::string, std::string> headers;
    double delay_s = 0;  // wait this long before answering (a slow model)
  };
  struct Request {
    std::string path;
    std::multimap<std::string, std::string> headers;
    std::string body;
    nlohmann::json json;  // the body parsed (discarded value if it is not JSON)
    std::string Header(const std::string& name) const;  // "" when absent
  };

  FakeModelServer();                                   // plain HTTP
  explicit FakeModelServer(int threads);               // plain HTTP, this many worker threads
  explicit FakeModelServer(const TestCertificate& tls);  // HTTPS with this certificate
  ~FakeModelServer();
  FakeModelServer(const FakeModelServer&) = delete;
  FakeModelServer& operator=(const FakeModelServer&) = delete;

  bool ok() const { return port_ > 0; }  // listening
  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:PORT" or "https://…"

  void Enqueue(Response r);
  // Answers every request the queue does not (called on the server's threads, one request at a
  // time per thread: it must be safe to call concurrently).
  void SetResponder(std::function<Response(const Request&)> responder);
  std::vector<Request> requests() const;
  void KeepRequests(bool keep);
  size_t request_count() const;
  size_t pending() const;  // responses not yet served

  // Reply bodies in each API's shape, "model": "fake". tool_calls: {id, name, arguments
  // (object)}. The usage block reports the prompt cache as each API does: OpenAI
  // usage.prompt_tokens_details.cached_tokens (part of prompt_tokens); Anthropic
  // usage.cache_read_input_tokens and cache_creation_input_tokens (beside input_tokens, which
  // excludes them).
  static std::string OpenAiReply(const std::string& text, const std::vector<ToolCall>& tool_calls,
                                 int prompt_tokens = 10, int completion_tokens = 5,
                                 int cached_tokens = 0);
  static std::string AnthropicReply(const std::string& text,
                                    const std::vector<ToolCall>& tool_calls, int input_tokens = 10,
                                    int output_tokens = 5, int cache_read_input_tokens = 0,
                                    int cache_creation_input_tokens = 0);

 private:
  void Start(int threads);

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> listen_returned_{false};
  bool tls_ = false;
  mutable std::mutex mu_;
  std::deque<Response> queue_;
  std::function<Response(const Request&)> responder_;
  std::vector<Request> requests_;
  bool keep_requests_ = true;
  size_t request_count_ = 0;
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_FAKE_MODEL_SERVER_H_

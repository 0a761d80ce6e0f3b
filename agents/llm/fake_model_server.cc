#include "agents/llm/fake_model_server.h"

#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace slurm_rca::agents {

using base::Result;
using base::Status;

using Json = nlohmann::json;

namespace {

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

bool AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

Json ToolCallsJson(const std::vector<ToolCall>& calls, bool openai) {
  Json out = Json::array();
  for (const ToolCall& c : calls) {
    if (openai) {
      out.push_back({{"id", c.id},
                     {"type", "function"},
                     {"function", {{"name", c.name}, {"arguments", c.arguments.dump()}}}});
    } else {
      out.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.arguments}});
    }
  }
  return out;
}

}  // namespace

Result<TestCertificate> MakeSelfSignedCertificate() {
  EVP_PKEY* key = EVP_RSA_gen(2048);
  if (!key) return Status::IoError("EVP_RSA_gen failed");
  X509* cert = X509_new();
  TestCertificate out;
  bool ok = cert != nullptr;
  if (ok) {
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    ok = AddExtension(cert, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost") &&
         AddExtension(cert, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") &&
         X509_sign(cert, key, EVP_sha256()) > 0;
  }
  if (ok) {
    BIO* c = BIO_new(BIO_s_mem());
    BIO* k = BIO_new(BIO_s_mem());
    ok = PEM_write_bio_X509(c, cert) == 1 &&
         PEM_write_bio_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    if (ok) {
      out.cert_pem = BioString(c);
      out.key_pem = BioString(k);
    }
    BIO_free(c);
    BIO_free(k);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) return Status::IoError("making a self-signed certificate failed");
  return out;
}

std::string FakeModelServer::Request::Header(const std::string& name) const {
  for (const auto& [k, v] : headers) {
    if (std::equal(k.begin(), k.end(), name.begin(), name.end(),
                   [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return v;
    }
  }
  return "";
}

FakeModelServer::FakeModelServer() : FakeModelServer(8) {}

FakeModelServer::FakeModelServer(int threads) {
  server_ = std::make_unique<httplib::Server>();
  Start(threads);
}

FakeModelServer::FakeModelServer(const TestCertificate& tls) : tls_(true) {
  BIO* c = BIO_new_mem_buf(tls.cert_pem.data(), static_cast<int>(tls.cert_pem.size()));
  BIO* k = BIO_new_mem_buf(tls.key_pem.data(), static_cast<int>(tls.key_pem.size()));
  X509* cert = PEM_read_bio_X509(c, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(k, nullptr, nullptr, nullptr);
  BIO_free(c);
  BIO_free(k);
  if (cert && key) {
    // SSLServer takes its own references (SSL_CTX_use_certificate / _PrivateKey).
    auto ssl = std::make_unique<httplib::SSLServer>(cert, key);
    if (ssl->is_valid()) server_ = std::move(ssl);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (server_) Start(8);
}

void FakeModelServer::Start(int threads) {
  const size_t pool = static_cast<size_t>(std::max(threads, 1));
  server_->new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  server_->set_tcp_nodelay(true);
  server_->Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
    Response r;
    Request rec;
    rec.path = req.path;
    rec.headers.insert(req.headers.begin(), req.headers.end());
    rec.body = req.body;
    rec.json = Json::parse(req.body, nullptr, false);
    std::function<Response(const Request&)> responder;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++request_count_;
      if (keep_requests_) requests_.push_back(rec);
      if (!queue_.empty()) {
        r = std::move(queue_.front());
        queue_.pop_front();
      } else if (responder_) {
        responder = responder_;
      } else {
        r = {500, R"({"error": "fake model server: no scripted response left"})", {}};
      }
    }
    if (responder) r = responder(rec);
    if (r.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(r.delay_s));
    res.status = r.status;
    for (const auto& [k, v] : r.headers) res.set_header(k, v);
    res.set_content(r.body, "application/json");
  });
  int port = server_->bind_to_any_port("127.0.0.1");
  if (port <= 0) return;
  port_ = port;
  thread_ = std::thread([this] {
    server_->listen_after_bind();
    listen_returned_ = true;
  });
  // stop() is a no-op until the accept loop runs, so wait for it (a bound socket already queues
  // connections, so clients could connect before this).
  while (!server_->is_running() && !listen_returned_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeModelServer::~FakeModelServer() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeModelServer::base_url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

void FakeModelServer::SetResponder(std::function<Response(const Request&)> responder) {
  std::lock_guard<std::mutex> lock(mu_);
  responder_ = std::move(responder);
}

void FakeModelServer::Enqueue(Response r) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(r));
}

std::vector<FakeModelServer::Request> FakeModelServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeModelServer::KeepRequests(bool keep) {
  std::lock_guard<std::mutex> lock(mu_);
  keep_requests_ = keep;
}

size_t FakeModelServer::request_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return request_count_;
}

size_t FakeModelServer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

std::string FakeModelServer::OpenAiReply(const std::string& text,
                                         const std::vector<ToolCall>& tool_calls, int prompt_tokens,
                                         int completion_tokens, int cached_tokens) {
  Json message = {{"role", "assistant"}, {"content", text.empty() ? Json(nullptr) : Json(text)}};
  if (!tool_calls.empty()) message["tool_calls"] = ToolCallsJson(tool_calls, true);
  Json body = {{"id", "chatcmpl-fake"},
               {"object", "chat.completion"},
               {"model", "fake"},
               {"choices",
                {{{"index", 0},
                  {"message", message},
                  {"finish_reason", tool_calls.empty() ? "stop" : "tool_calls"}}}},
               {"usage",
                {{"prompt_tokens", prompt_tokens},
                 {"completion_tokens", completion_tokens},
                 {"total_tokens", prompt_tokens + completion_tokens},
                 {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}}}};
  return body.dump();
}

std::string FakeModelServer::AnthropicReply(const std::string& text,
                                            const std::vector<ToolCall>& tool_calls,
                                            int input_tokens, int output_tokens,
                                            int cache_read_input_tokens,
                                            int cache_creation_input_tokens) {
  Json content = Json::array();
  if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
  for (Json& b : ToolCallsJson(tool_calls, false)) content.push_back(std::move(b));
  Json body = {{"id", "msg_fake"},
               {"type", "message"},
               {"role", "assistant"},
               {"model", "fake"},
               {"content", content},
               {"stop_reason", tool_calls.empty() ? "end_turn" : "tool_use"},
               {"usage",
                {{"input_tokens", input_tokens},
                 {"output_tokens", output_tokens},
                 {"cache_read_input_tokens", cache_read_input_tokens},
                 {"cache_creation_input_tokens", cache_creation_input_tokens}}}};
  return body.dump();
}

}  // namespace slurm_rca::agents

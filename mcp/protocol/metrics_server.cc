// MetricsServer (metrics.h): GET /metrics on the HTTP core. A file of its own so that metrics.cc,
// which the HTTP core counts into, does not include the HTTP core back (no include cycle in a
// folder: tests/layers_test.cc).
#include <optional>
#include <string>
#include <thread>
#include <variant>

#include "mcp/protocol/http_core.h"
#include "mcp/protocol/metrics.h"

namespace slurm_rca::mcp {

// GET /metrics on a listener of its own (the HTTP core of the MCP endpoint, with small limits);
// nothing else. Its connections are not counted in slurm_mcp_http_connections_open.
class MetricsServer::Impl : public http_core::Handler {
 public:
  explicit Impl(const Metrics& metrics)
      : metrics_(metrics),
        core_(*this, http_core::Limits{.max_body_bytes = 4096,
                                       .workers = 1,
                                       .max_connections = 64,
                                       .max_per_address = 64}) {}

  base::Status Start(const std::string& host, int port, int* bound) {
    base::Result<int> r = core_.Bind(host, port);
    if (!r.ok()) {
      return base::Status::Unavailable("cannot bind the metrics listener to " + host + ":" +
                                       std::to_string(port));
    }
    *bound = *r;
    thread_ = std::thread([this] { core_.Run(); });
    return base::Status();
  }

  void Stop() {
    core_.Stop();
    if (thread_.joinable()) thread_.join();
  }

  std::optional<http_core::Response> OnHeader(const http_core::RequestHeader& req,
                                              std::optional<std::uint64_t>) override {
    namespace http = http_core::http;
    const std::string_view target = req.target();
    if (target.substr(0, target.find('?')) != "/metrics") {
      return Text(http::status::not_found, "not found: the metrics are at /metrics\n");
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      http_core::Response res = Text(http::status::method_not_allowed, "method not allowed: use GET\n");
      res.set(http::field::allow, "GET");
      return res;
    }
    http_core::Response res{http::status::ok, 11};
    res.set(http::field::cache_control, "no-store");
    res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
    res.body() = metrics_.Render();
    return res;
  }

  std::variant<http_core::Response, http_core::Deferred> OnRequest(
      const http_core::Request&) override {
    return Error(500, "unreachable: every request is answered on its header");
  }

  http_core::Response Error(int status, const std::string& message) override {
    return Text(static_cast<http_core::http::status>(status), message + "\n");
  }

 private:
  static http_core::Response Text(http_core::http::status status, std::string body) {
    http_core::Response res{status, 11};
    res.set(http_core::http::field::content_type, "text/plain");
    res.body() = std::move(body);
    return res;
  }

  const Metrics& metrics_;
  http_core::HttpCore core_;
  std::thread thread_;
};

MetricsServer::MetricsServer(const Metrics& metrics) : impl_(std::make_unique<Impl>(metrics)) {}

MetricsServer::~MetricsServer() { Stop(); }

base::Status MetricsServer::Start(const std::string& host, int port) {
  port_ = port;
  return impl_->Start(host, port, &port_);
}

void MetricsServer::Stop() { impl_->Stop(); }

}  // namespace slurm_rca::mcp

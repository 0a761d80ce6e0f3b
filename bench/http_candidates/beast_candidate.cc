// Candidate B of issue #20: Boost.Beast (Boost 1.74, Debian 12) on one Asio event thread; each
// call is handed to the worker pool and its answer posted back to the event thread. Limits, all
// in this file: a deadline for each request's header and body (a half-open or slow connection is
// closed when it passes), the same deadline as the idle keep-alive timeout, a connection cap
// beyond which a new connection gets 503 with Retry-After at once, the body and header limits of
// Beast's parser.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/http_candidates/candidate.h"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Config {
  slurm_rca::mcp::Server* server = nullptr;
  slurm_rca::bench::WorkerPool* pool = nullptr;
  std::chrono::seconds deadline{10};
  std::size_t max_connections = 4096;
  std::atomic<std::size_t> open{0};
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Config& config) : stream_(std::move(socket)), config_(config) {
    ++config_.open;
  }
  ~Connection() { --config_.open; }

  void Read() {
    parser_.emplace();
    parser_->body_limit(1 << 20);
    parser_->header_limit(16 * 1024);
    stream_.expires_after(config_.deadline);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->OnRead(ec);
                     });
  }

  // Past the connection cap: one 503 and close, without reading the request.
  void Refuse() {
    auto res = std::make_shared<http::response<http::string_body>>(
        http::status::service_unavailable, 11);
    res->set(http::field::retry_after, "1");
    res->set(http::field::connection, "close");
    res->prepare_payload();
    stream_.expires_after(std::chrono::seconds(2));
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code, std::size_t) {
                        self->stream_.socket().shutdown(tcp::socket::shutdown_send);
                      });
  }

 private:
  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit) return Reply(413, "", false);
    if (ec) return;  // closed, timed out (a slow header) or malformed
    http::request<http::string_body> req = parser_->release();
    if (req.target() != "/mcp") return Reply(404, "", req.keep_alive());
    if (req.method() != http::verb::post) return Reply(405, "", req.keep_alive());
    stream_.expires_never();  // the call's own timeout bounds it, not the read deadline
    config_.pool->Post([self = shared_from_this(), body = std::move(req.body()),
                        keep = req.keep_alive()] {
      slurm_rca::bench::Answer a = slurm_rca::bench::AnswerBody(*self->config_.server, body);
      net::post(self->stream_.get_executor(),
                [self, a = std::move(a), keep] { self->Reply(a.status, a.body, keep); });
    });
  }

  void Reply(int status, std::string body, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(status), 11);
    if (!body.empty()) res->set(http::field::content_type, "application/json");
    res->body() = std::move(body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    stream_.expires_after(config_.deadline);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                        if (ec) return;
                        if (res->keep_alive()) return self->Read();
                        self->stream_.socket().shutdown(tcp::socket::shutdown_send);
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Config& config_;
};

void Accept(tcp::acceptor& acceptor, Config& config) {
  acceptor.async_accept([&](beast::error_code ec, tcp::socket socket) {
    if (!ec) {
      auto c = std::make_shared<Connection>(std::move(socket), config);
      if (config.open > config.max_connections) {
        c->Refuse();
      } else {
        c->Read();
      }
    }
    Accept(acceptor, config);
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HTTP core candidate B: Boost.Beast (one Asio thread, worker pool)"};
  int port = 0, workers = 8, timeout_s = 10;
  std::size_t max_connections = 4096;
  std::string bundle = "fixtures/demo";
  app.add_option("--port", port)->required();
  app.add_option("--bundle", bundle);
  app.add_option("--workers", workers);
  app.add_option("--max-connections", max_connections);
  app.add_option("--timeout", timeout_s, "request read deadline and idle timeout, s");
  CLI11_PARSE(app, argc, argv);

  slurm_rca::bench::WorkerPool pool(workers);
  Config config;
  config.server = &slurm_rca::bench::DemoServer(bundle);
  config.pool = &pool;
  config.deadline = std::chrono::seconds(timeout_s);
  config.max_connections = max_connections;

  net::io_context io(1);
  tcp::acceptor acceptor(io);
  tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  beast::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  acceptor.set_option(net::socket_base::reuse_address(true), ec);
  acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(4096, ec);
  if (ec) {
    std::cerr << "beast_candidate: cannot listen on 127.0.0.1:" << port << ": " << ec.message()
              << "\n";
    return 1;
  }
  net::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](beast::error_code, int) { io.stop(); });
  Accept(acceptor, config);
  std::cout << "listening on 127.0.0.1:" << port << std::endl;
  io.run();
  return 0;
}

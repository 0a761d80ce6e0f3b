#include "mcp/protocol/http_core.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <openssl/ssl.h>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mcp/protocol/metrics.h"

namespace slurm_rca::mcp::http_core {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;
// A connection's strand, socket and stream, typed as such rather than through Asio's
// type-erased any_io_executor, which costs a dynamic dispatch and a copy at every hand-off.
using Strand = net::strand<net::io_context::executor_type>;
using Socket = tcp::socket::rebind_executor<Strand>::other;
using Stream = beast::basic_stream<tcp, Strand>;
using TlsStream = beast::ssl_stream<Stream>;

constexpr std::size_t kHeaderLimit = 16 * 1024;
// Until the header is screened (Beast 1.74 takes an absent limit for a limit of 0).
constexpr std::uint64_t kNoBodyLimit = std::numeric_limits<std::uint64_t>::max();

std::optional<std::uint64_t> Declared(const boost::optional<std::uint64_t>& length) {
  return length ? std::optional<std::uint64_t>(*length) : std::nullopt;
}

// A body follows the header, which an answer given on the header alone leaves unread.
bool DeclaresBody(const RequestHeader& req) {
  if (req.find(http::field::transfer_encoding) != req.end()) return true;
  auto length = req.find(http::field::content_length);
  return length != req.end() && length->value() != "0";
}

bool ExpectsContinue(const RequestHeader& req) {
  return beast::iequals(req[http::field::expect], "100-continue");
}

StreamHead ContinueResponse() { return StreamHead{http::status::continue_, 11}; }

// Readies `res` to be written: HTTP/1.1, Connection as `keep_alive` says, no body for a HEAD
// request, Content-Length.
void Finish(Response& res, bool keep_alive, bool head) {
  res.version(11);
  res.keep_alive(keep_alive);
  if (head) res.body().clear();
  res.prepare_payload();
}

// A request whose header or body could not be read: the status and message to answer with (413
// and 431 for a limit, 400 for a malformed request), or nullopt when there is nobody to answer
// (the client closed, reset or timed out): the connection is then just closed.
std::optional<std::pair<int, std::string>> ReadError(beast::error_code ec,
                                                     std::size_t max_body_bytes) {
  if (ec == http::error::body_limit) {
    return std::pair(413, "Payload Too Large: the limit is " + std::to_string(max_body_bytes) +
                              " bytes");
  }
  if (ec == http::error::header_limit) {
    return std::pair(431, "Request Header Fields Too Large: the limit is " +
                              std::to_string(kHeaderLimit) + " bytes");
  }
  if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return std::pair(400, "Bad Request: malformed HTTP request (" + ec.message() + ")");
  }
  return std::nullopt;
}

// One connection's bytes in memory, for AnswerBytes: a Beast SyncReadStream and SyncWriteStream
// whose reads consume `in` and whose writes append to `out`.
class MemoryStream {
 public:
  explicit MemoryStream(std::string_view in) : in_(in) {}

  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers, beast::error_code& ec) {
    if (in_.empty()) {
      ec = net::error::eof;
      return 0;
    }
    const std::size_t n = net::buffer_copy(buffers, net::buffer(in_.data(), in_.size()));
    in_.remove_prefix(n);
    ec = {};
    return n;
  }
  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers) {
    beast::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw beast::system_error(ec);
    return n;
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers, beast::error_code& ec) {
    std::size_t n = 0;
    for (auto it = net::buffer_sequence_begin(buffers); it != net::buffer_sequence_end(buffers);
         ++it) {
      const net::const_buffer b = *it;
      out_.append(static_cast<const char*>(b.data()), b.size());
      n += b.size();
    }
    ec = {};
    return n;
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers) {
    beast::error_code ec;
    return write_some(buffers, ec);
  }

  bool exhausted() const { return in_.empty(); }
  std::string& out() { return out_; }

 private:
  std::string_view in_;
  std::string out_;
};

// Writes each answer into a MemoryStream as it comes, on the calling thread.
class MemoryExchange : public Exchange {
 public:
  MemoryExchange(MemoryStream& stream, bool keep_alive, bool head)
      : stream_(stream), keep_alive_(keep_alive), head_(head) {}
  void Respond(Response res) override {
    keep_alive_ = keep_alive_ && res.keep_alive();
    Finish(res, keep_alive_, head_);
    beast::error_code ec;
    http::write(stream_, res, ec);
  }
  void BeginStream(StreamHead head) override {
    head.keep_alive(keep_alive_);
    http::response_serializer<http::empty_body> serializer{head};
    beast::error_code ec;
    http::write_header(stream_, serializer, ec);  // the chunks follow, one per event
  }
  bool Event(std::string data) override {
    net::write(stream_, http::make_chunk(net::buffer(data)));
    return true;
  }
  void EndStream() override { net::write(stream_, http::make_chunk_last()); }
  bool keep_alive() const { return keep_alive_; }

 private:
  MemoryStream& stream_;
  bool keep_alive_;
  bool head_;
};

}  // namespace

class HttpCore::Impl {
 public:
  class ConnectionBase;
  template <class S>
  class Connection;

  Impl(Handler& handler, Limits limits) : handler_(handler), limits_(limits) {}

  base::Result<int> Bind(const std::string& host, int port) {
    if (bound_) return base::Status::InvalidArgument("already bound; create a new one");
    if (limits_.event_threads < 1) {
      return base::Status::InvalidArgument("at least 1 event thread is needed");
    }
    if (limits_.workers < 0) {
      return base::Status::InvalidArgument("the number of workers cannot be negative");
    }
    if (limits_.max_connections < 1 || limits_.max_per_address < 1) {
      return base::Status::InvalidArgument("the connection limits must be at least 1");
    }
    if (limits_.header_timeout.count() <= 0 || limits_.idle_timeout.count() <= 0) {
      return base::Status::InvalidArgument("the header and idle timeouts must be positive");
    }
    if (port < 0 || port > 65535) {
      return base::Status::InvalidArgument("port out of range: " + std::to_string(port));
    }
    if (limits_.tls_cert_file.empty() != limits_.tls_key_file.empty()) {
      return base::Status::InvalidArgument("TLS needs both a certificate chain and its key");
    }
    if (!limits_.tls_cert_file.empty()) {
      if (base::Status s = LoadTls(); !s.ok()) return s;
    }
    io_ = std::make_unique<net::io_context>(limits_.event_threads);
    // The acceptor, its retry timer and Stop()'s closing run on one strand; each connection on
    // a strand of its own (OnAccepted): any event thread may run any of them, one at a time.
    acceptor_.emplace(net::make_strand(*io_));
    retry_.emplace(acceptor_->get_executor());
    const base::Status cannot = base::Status::Unavailable("cannot bind " + host + ":" +
                                                          std::to_string(port));
    beast::error_code ec;
    tcp::endpoint endpoint;
    const net::ip::address address = net::ip::make_address(host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, static_cast<unsigned short>(port));
    } else {  // a name, such as localhost
      tcp::resolver resolver(*io_);
      auto found = resolver.resolve(host, std::to_string(port), ec);
      if (ec || found.empty()) return cannot;
      endpoint = *found.begin();
    }
    acceptor_->open(endpoint.protocol(), ec);
    // Not SO_REUSEPORT, which would let a second server bind the same port and take a share of
    // the connections.
    if (!ec) acceptor_->set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_->bind(endpoint, ec);
    if (!ec) acceptor_->listen(net::socket_base::max_listen_connections, ec);
    if (ec) return cannot;
    const int bound = acceptor_->local_endpoint(ec).port();
    if (ec) return cannot;
    if (limits_.workers > 0) pool_.emplace(static_cast<std::size_t>(limits_.workers));
    guard_.emplace(io_->get_executor());
    bound_ = true;
    return bound;
  }

  void Run() {
    net::post(acceptor_->get_executor(), [this] { Accept(); });
    std::vector<std::thread> more;
    for (int i = 1; i < limits_.event_threads; ++i) more.emplace_back([this] { io_->run(); });
    io_->run();
    for (std::thread& t : more) t.join();
  }

  void Stop() {
    std::lock_guard<std::mutex> once(stop_mu_);
    if (!bound_ || stopped_) return;
    stopped_ = true;
    net::post(acceptor_->get_executor(), [this] {
      stopping_ = true;
      beast::error_code ec;
      acceptor_->close(ec);
      retry_->cancel();
      std::vector<std::shared_ptr<ConnectionBase>> open;
      {
        std::lock_guard<std::mutex> lock(connections_mu_);
        for (auto& [raw, weak] : connections_) {
          if (std::shared_ptr<ConnectionBase> c = weak.lock()) open.push_back(std::move(c));
        }
      }
      for (const std::shared_ptr<ConnectionBase>& c : open) Shutdown(c);
    });
    {
      std::unique_lock<std::mutex> lock(connections_mu_);
      connections_cv_.wait(lock, [this] { return connections_.empty(); });
    }
    guard_.reset();
    io_->stop();
    if (pool_) pool_->join();
  }

  std::size_t connection_count() const {
    std::lock_guard<std::mutex> lock(connections_mu_);
    return serving_;
  }

  std::string AnswerBytes(std::string_view requests, int max_requests) {
    MemoryStream stream(requests);
    beast::flat_buffer buffer;
    for (int i = 0; i < max_requests && (buffer.size() > 0 || !stream.exhausted()); ++i) {
      http::request_parser<http::string_body> parser;
      parser.header_limit(kHeaderLimit);
      parser.body_limit(kNoBodyLimit);
      beast::error_code ec;
      http::read_header(stream, buffer, parser, ec);
      if (ec) {
        AnswerReadError(stream, ec);
        break;
      }
      const Request& req = parser.get();
      const bool head = req.method() == http::verb::head;
      if (std::optional<Response> early =
              handler_.OnHeader(req, Declared(parser.content_length()))) {
        MemoryExchange exchange(stream, req.keep_alive() && !DeclaresBody(req), head);
        exchange.Respond(std::move(*early));
        if (!exchange.keep_alive()) break;
        continue;
      }
      parser.body_limit(limits_.max_body_bytes);
      if (ExpectsContinue(req)) http::write(stream, ContinueResponse(), ec);
      http::read(stream, buffer, parser, ec);
      if (ec) {
        AnswerReadError(stream, ec);
        break;
      }
      Request request = parser.release();
      MemoryExchange exchange(stream, request.keep_alive(), head);
      std::variant<Response, Deferred> answer = handler_.OnRequest(request);
      if (Response* now = std::get_if<Response>(&answer)) {
        exchange.Respond(std::move(*now));
      } else {
        std::get<Deferred>(answer).run(exchange);
      }
      if (!exchange.keep_alive()) break;
    }
    return std::move(stream.out());
  }

 private:
  void Accept();
  void OnAccepted(Socket socket);
  static void Shutdown(const std::shared_ptr<ConnectionBase>& c);

  // The server's TLS context from the PEM files: TLS 1.2 or later, no compression; a key that is
  // not the certificate's is refused now rather than at the first handshake.
  base::Status LoadTls() {
    tls_.emplace(net::ssl::context::tls_server);
    SSL_CTX* ctx = tls_->native_handle();
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
      return base::Status::Error("OpenSSL refused TLS 1.2 as the lowest version");
    }
    tls_->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_compression |
                      net::ssl::context::single_dh_use);
    beast::error_code ec;
    tls_->use_certificate_chain_file(limits_.tls_cert_file, ec);
    if (ec) {
      return base::Status::InvalidArgument("cannot use the TLS certificate chain in " +
                                           limits_.tls_cert_file + ": " + ec.message());
    }
    // OpenSSL checks the key against the certificate here ("key values mismatch").
    tls_->use_private_key_file(limits_.tls_key_file, net::ssl::context::pem, ec);
    if (ec) {
      return base::Status::InvalidArgument("cannot use the TLS key in " + limits_.tls_key_file +
                                           ": " + ec.message());
    }
    return base::Status();
  }

  void AnswerReadError(MemoryStream& stream, beast::error_code ec) {
    if (std::optional<std::pair<int, std::string>> e = ReadError(ec, limits_.max_body_bytes)) {
      MemoryExchange(stream, false, false).Respond(handler_.Error(e->first, e->second));
    }
  }

  // A new connection is registered; past a cap, the 503 it gets instead of being served.
  std::optional<Response> Admit(const std::shared_ptr<ConnectionBase>& c,
                                const std::string& address,
                                bool& counted) {
    std::lock_guard<std::mutex> lock(connections_mu_);
    connections_[c.get()] = c;
    counted = false;
    if (serving_ >= limits_.max_connections) {
      return Unavailable("the server holds its maximum of " +
                         std::to_string(limits_.max_connections) + " connections");
    }
    auto [it, added] = per_address_.try_emplace(address, 0);
    if (it->second >= limits_.max_per_address) {
      return Unavailable("this client address holds its maximum of " +
                         std::to_string(limits_.max_per_address) + " connections");
    }
    ++it->second;
    ++serving_;
    counted = true;
    if (limits_.metrics) limits_.metrics->HttpConnectionOpened();
    return std::nullopt;
  }

  Response Unavailable(const std::string& why) {
    if (limits_.metrics) limits_.metrics->HttpRequestRejected(503);
    Response res = handler_.Error(503, "Service Unavailable: " + why + "; retry later");
    res.set(http::field::retry_after, "1");
    res.keep_alive(false);
    return res;
  }

  void Release(const ConnectionBase* c, const std::string& address, bool counted) {
    std::lock_guard<std::mutex> lock(connections_mu_);
    connections_.erase(c);
    if (counted) {
      --serving_;
      auto it = per_address_.find(address);
      if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
      if (limits_.metrics) limits_.metrics->HttpConnectionClosed();
    }
    if (connections_.empty()) connections_cv_.notify_all();
  }

  Handler& handler_;
  const Limits limits_;

  std::unique_ptr<net::io_context> io_;
  std::optional<tcp::acceptor> acceptor_;
  std::optional<net::steady_timer> retry_;  // accepting again after an accept error
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard_;
  std::optional<net::thread_pool> pool_;
  std::optional<net::ssl::context> tls_;  // set by Bind() when the limits name a certificate
  bool bound_ = false;
  std::atomic<bool> stopping_{false};  // set on the acceptor's strand by Stop()
  std::mutex stop_mu_;
  bool stopped_ = false;

  // Every connection not yet destroyed; the caps count the ones served.
  mutable std::mutex connections_mu_;
  std::condition_variable connections_cv_;  // notified when none is left
  std::unordered_map<const ConnectionBase*, std::weak_ptr<ConnectionBase>> connections_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::size_t serving_ = 0;
};

// What the registry and Stop() need of a connection, whichever its stream.
class HttpCore::Impl::ConnectionBase : public std::enable_shared_from_this<ConnectionBase> {
 public:
  virtual ~ConnectionBase() = default;
  // The connection's strand: every handler of it runs there.
  virtual Strand executor() = 0;
  // Stop(): a connection that is not being answered is closed now; one that is, after its
  // response. On the strand.
  virtual void Shutdown() = 0;
};

// One accepted connection, on its strand, over a TCP stream (S = Stream) or TLS on it
// (S = TlsStream): the TLS handshake first (header timeout), then waits for a request (idle
// timeout), reads its header and body (header timeout), answers what the header alone decides,
// hands the rest to the handler (a Deferred on the worker pool when it may wait), and writes what
// the Exchange receives, in order, from whichever thread. Kept alive until the client or a limit
// closes it.
template <class S>
class HttpCore::Impl::Connection : public ConnectionBase, public Exchange {
 public:
  static constexpr bool kTls = std::is_same_v<S, TlsStream>;

  // `stream_args`: the socket, and for TLS the context.
  template <class... StreamArgs>
  Connection(Impl& impl, std::string address, StreamArgs&&... stream_args)
      : impl_(impl), stream_(std::forward<StreamArgs>(stream_args)...), address_(std::move(address)) {}
  ~Connection() override { impl_.Release(this, address_, counted_); }

  // Registers with the transport; over TLS, shakes hands; then serves, or answers 503 when a cap
  // is reached. A handshake that fails or does not finish within the header timeout closes the
  // connection without a word.
  void Open() {
    std::optional<Response> refusal = impl_.Admit(shared_from_this(), address_, counted_);
    if constexpr (kTls) {
      Lowest().expires_after(impl_.limits_.header_timeout);
      stream_.async_handshake(
          net::ssl::stream_base::server,
          [self = Self(), refusal = std::move(refusal)](beast::error_code ec) mutable {
            if (ec) return self->Close();
            self->Serve(std::move(refusal));
          });
    } else {
      Serve(std::move(refusal));
    }
  }

  Strand executor() override { return Lowest().get_executor(); }

  void Shutdown() override {
    if (!answering_) Close();
  }

  // Exchange: called from the thread that runs the request; the writes happen on the strand.
  void Respond(Response res) override {
    Post(Out{.kind = Out::kResponse, .response = std::make_shared<Response>(std::move(res))});
  }
  void BeginStream(StreamHead head) override {
    Post(Out{.kind = Out::kHead, .head = std::make_shared<StreamHead>(std::move(head))});
  }
  bool Event(std::string data) override {
    if (gone_) return false;
    Post(Out{.kind = Out::kChunk, .chunk = std::move(data)});
    return true;
  }
  void EndStream() override { Post(Out{.kind = Out::kLast}); }

 private:
  friend class Impl;

  // What is to be written: a whole response, or the parts of an SSE stream.
  struct Out {
    enum Kind { kResponse, kHead, kChunk, kLast } kind;
    std::shared_ptr<Response> response;
    std::shared_ptr<StreamHead> head;
    std::string chunk;
  };

  static constexpr std::size_t kIdleRead = 1024;

  std::shared_ptr<Connection> Self() {
    return std::static_pointer_cast<Connection>(shared_from_this());
  }
  // The TCP stream, under TLS or not: its timer and its socket.
  Stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void Serve(std::optional<Response> refusal) {
    if (!refusal) return WaitRequest();
    answering_ = true;
    keep_alive_ = false;
    Enqueue(Out{.kind = Out::kResponse,
                .response = std::make_shared<Response>(std::move(*refusal))});
  }

  void WaitRequest() {
    answering_ = false;
    head_request_ = false;
    if (closed_) return;
    if (impl_.stopping_) return Close();
    if (buffer_.size() > 0) return ReadHeader();  // pipelined: the next request is here
    Lowest().expires_after(impl_.limits_.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kIdleRead),
                            [self = Self()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->Close();
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(kNoBodyLimit);  // the declared length is checked after the screen
    Lowest().expires_after(impl_.limits_.header_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = Self()](beast::error_code ec, std::size_t) {
                              self->OnHeader(ec);
                            });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    answering_ = true;
    const Request& req = parser_->get();
    head_request_ = req.method() == http::verb::head;
    keep_alive_ = req.keep_alive();
    if (std::optional<Response> early =
            impl_.handler_.OnHeader(req, Declared(parser_->content_length()))) {
      // Its body, if any, is not read: it must not be taken for the next request.
      if (DeclaresBody(req)) keep_alive_ = false;
      return Respond(std::move(*early));
    }
    parser_->body_limit(impl_.limits_.max_body_bytes);
    if (!ExpectsContinue(req)) return ReadBody();
    auto interim = std::make_shared<StreamHead>(ContinueResponse());
    Lowest().expires_after(impl_.limits_.header_timeout);
    http::async_write(stream_, *interim,
                      [self = Self(), interim](beast::error_code e, std::size_t) {
                        if (e) return self->Close();
                        self->ReadBody();
                      });
  }

  void ReadBody() {
    Lowest().expires_after(impl_.limits_.header_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = Self()](beast::error_code ec, std::size_t) {
                       self->OnBody(ec);
                     });
  }

  void OnBody(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    Lowest().expires_never();  // a call is bounded by the back-end's own timeouts
    Request request = parser_->release();
    parser_.reset();
    std::variant<Response, Deferred> answer = impl_.handler_.OnRequest(request);
    if (Response* now = std::get_if<Response>(&answer)) return Respond(std::move(*now));
    Deferred& later = std::get<Deferred>(answer);
    if (!later.on_worker || !impl_.pool_) return later.run(*this);
    net::post(*impl_.pool_, [self = Self(), run = std::move(later.run)]() mutable {
      run(*self);
      // This job may hold the last reference: it is let go on the strand.
      auto executor = self->executor();
      net::post(executor, [self = std::move(self)] {});
    });
  }

  void OnReadError(beast::error_code ec) {
    std::optional<std::pair<int, std::string>> e = ReadError(ec, impl_.limits_.max_body_bytes);
    if (!e) return Close();
    answering_ = true;
    keep_alive_ = false;
    Respond(impl_.handler_.Error(e->first, e->second));
  }

  void Post(Out out) {
    net::post(executor(), [self = Self(), out = std::move(out)]() mutable {
      self->Enqueue(std::move(out));
    });
  }

  void Enqueue(Out out) {
    if (closed_) return;
    queue_.push_back(std::move(out));
    if (!writing_) WriteNext();
  }

  void WriteNext() {
    if (queue_.empty() || closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    Out& out = queue_.front();
    // A client that reads nothing for the idle timeout is given up on.
    Lowest().expires_after(impl_.limits_.idle_timeout);
    auto done = [self = Self()](beast::error_code ec, std::size_t) {
      self->OnWritten(ec);
    };
    const bool keep_alive = keep_alive_ && !impl_.stopping_;
    switch (out.kind) {
      case Out::kResponse:
        Finish(*out.response, keep_alive && out.response->keep_alive(), head_request_);
        return http::async_write(stream_, *out.response, std::move(done));
      case Out::kHead:
        out.head->keep_alive(keep_alive);
        stream_keep_alive_ = keep_alive;
        serializer_.emplace(*out.head);
        return http::async_write_header(stream_, *serializer_, std::move(done));
      case Out::kChunk:
        return net::async_write(stream_, http::make_chunk(net::buffer(out.chunk)), std::move(done));
      case Out::kLast:
        return net::async_write(stream_, http::make_chunk_last(), std::move(done));
    }
  }

  void OnWritten(beast::error_code ec) {
    const Out out = std::move(queue_.front());
    queue_.pop_front();
    // Beast reports end_of_stream when the response it wrote says Connection: close.
    if (ec && ec != http::error::end_of_stream) {
      gone_ = true;
      return Close();
    }
    if (out.kind == Out::kHead || out.kind == Out::kChunk) return WriteNext();
    writing_ = false;
    serializer_.reset();
    const bool keep_alive =
        out.kind == Out::kResponse ? out.response->keep_alive() : stream_keep_alive_;
    if (keep_alive) return WaitRequest();
    Linger();
  }

  // After a response that closes the connection: stop sending, then read and drop what the
  // client still sends (the body of a refused request) for a moment, so that closing with unread
  // bytes does not reset the connection before the client has read the response.
  // Over TLS: the close_notify alert first (async_shutdown, which then waits for the client's;
  // a client that sends anything else instead ends it early).
  void Linger() {
    answering_ = false;
    gone_ = true;
    if constexpr (kTls) {
      if (impl_.stopping_) return Close();
      Lowest().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = Self()](beast::error_code) { self->Close(); });
      return;
    }
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec || impl_.stopping_) return Close();
    Lowest().expires_after(std::chrono::seconds(2));
    Drain();
  }

  void Drain() {
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kIdleRead),
                            [self = Self()](beast::error_code ec, std::size_t) {
                              if (ec) return self->Close();
                              self->Drain();
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    gone_ = true;
    queue_.clear();
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    Lowest().close();
  }

  Impl& impl_;
  S stream_;
  const std::string address_;
  bool counted_ = false;  // counts against the caps (set by Admit)

  // The strand's alone:
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool answering_ = false;  // from a request's header until its response is written
  bool keep_alive_ = true;  // the request's, unless its body was left unread
  bool head_request_ = false;
  bool closed_ = false;
  bool writing_ = false;
  bool stream_keep_alive_ = false;
  std::deque<Out> queue_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;  // an SSE head's

  std::atomic<bool> gone_{false};  // read by Event() on a worker
};

void HttpCore::Impl::Accept() {
  acceptor_->async_accept(net::make_strand(*io_), [this](beast::error_code ec, Socket socket) {
    if (stopping_) return;
    if (!ec) {
      OnAccepted(std::move(socket));
      return Accept();
    }
    // Out of file descriptors or memory: the connection waits in the backlog; try again shortly
    // rather than spin. Anything else (a connection reset before it was accepted): at once.
    if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
        ec == net::error::no_memory) {
      retry_->expires_after(std::chrono::milliseconds(50));
      retry_->async_wait([this](beast::error_code e) {
        if (!e && !stopping_) Accept();
      });
      return;
    }
    Accept();
  });
}

void HttpCore::Impl::OnAccepted(Socket socket) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  std::string address = remote.address().to_string();
  if (tls_) {
    auto c = std::make_shared<Connection<TlsStream>>(*this, std::move(address), std::move(socket),
                                                     *tls_);
    net::dispatch(c->executor(), [c] { c->Open(); });
  } else {
    auto c = std::make_shared<Connection<Stream>>(*this, std::move(address), std::move(socket));
    net::dispatch(c->executor(), [c] { c->Open(); });
  }
}

void HttpCore::Impl::Shutdown(const std::shared_ptr<ConnectionBase>& c) {
  net::post(c->executor(), [c] { c->Shutdown(); });
}

HttpCore::HttpCore(Handler& handler, Limits limits)
    : impl_(std::make_unique<Impl>(handler, limits)) {}

HttpCore::~HttpCore() { Stop(); }

base::Result<int> HttpCore::Bind(const std::string& host, int port) {
  return impl_->Bind(host, port);
}

void HttpCore::Run() { impl_->Run(); }

void HttpCore::Stop() { impl_->Stop(); }

std::size_t HttpCore::connection_count() const { return impl_->connection_count(); }

std::string HttpCore::AnswerBytes(std::string_view requests, int max_requests) {
  return impl_->AnswerBytes(requests, max_requests);
}

}  // namespace slurm_rca::mcp::http_core

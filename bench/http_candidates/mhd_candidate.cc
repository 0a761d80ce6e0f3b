// Candidate A of issue #20: libmicrohttpd 0.9.75 (Debian 12) in its epoll mode, one internal
// event thread, calls suspended while a worker answers them and resumed with the answer. Limits:
// MHD_OPTION_CONNECTION_LIMIT (beyond it MHD closes new connections at once), an idle timeout
// (MHD_OPTION_CONNECTION_TIMEOUT, which also closes a connection that stops sending its header
// half-way), MHD_OPTION_CONNECTION_MEMORY_LIMIT (header and buffer bytes per connection).
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstring>
#include <iostream>

#include "bench/http_candidates/candidate.h"

namespace {

using slurm_rca::bench::Answer;

struct Context {
  slurm_rca::mcp::Server* server = nullptr;
  slurm_rca::bench::WorkerPool* pool = nullptr;
  std::size_t max_body = 1 << 20;
};

struct Request {
  enum class State { kReading, kRunning, kDone } state = State::kReading;
  std::string body;
  bool too_large = false;
  Answer answer;
};

MHD_Result Queue(MHD_Connection* c, int status, const std::string& body, const char* type) {
  MHD_Response* r = MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                                    MHD_RESPMEM_MUST_COPY);
  if (type) MHD_add_response_header(r, "Content-Type", type);
  MHD_Result ret = MHD_queue_response(c, static_cast<unsigned>(status), r);
  MHD_destroy_response(r);
  return ret;
}

MHD_Result Access(void* cls, MHD_Connection* c, const char* url, const char* method,
                  const char* /*version*/, const char* upload, size_t* upload_size, void** state) {
  auto* ctx = static_cast<Context*>(cls);
  auto* req = static_cast<Request*>(*state);
  if (!req) {
    *state = req = new Request;
    return MHD_YES;
  }
  if (std::strcmp(method, "POST") != 0 || std::strcmp(url, "/mcp") != 0) {
    return Queue(c, std::strcmp(url, "/mcp") == 0 ? 405 : 404, "", nullptr);
  }
  if (*upload_size > 0) {
    if (req->body.size() + *upload_size > ctx->max_body) {
      req->too_large = true;
    } else {
      req->body.append(upload, *upload_size);
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (req->too_large) return Queue(c, 413, "", nullptr);
  switch (req->state) {
    case Request::State::kReading:
      req->state = Request::State::kRunning;
      MHD_suspend_connection(c);
      ctx->pool->Post([ctx, c, req] {
        req->answer = slurm_rca::bench::AnswerBody(*ctx->server, req->body);
        req->state = Request::State::kDone;
        MHD_resume_connection(c);
      });
      return MHD_YES;
    case Request::State::kRunning:
      return MHD_YES;  // a spurious call before the worker resumed it
    case Request::State::kDone:
      return Queue(c, req->answer.status, req->answer.body,
                   req->answer.body.empty() ? nullptr : "application/json");
  }
  return MHD_NO;
}

void Completed(void*, MHD_Connection*, void** state, MHD_RequestTerminationCode) {
  delete static_cast<Request*>(*state);
  *state = nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HTTP core candidate A: libmicrohttpd (epoll, suspend/resume, worker pool)"};
  int port = 0, workers = 8, timeout_s = 10;
  unsigned max_connections = 4096;
  std::string bundle = "fixtures/demo";
  app.add_option("--port", port)->required();
  app.add_option("--bundle", bundle);
  app.add_option("--workers", workers);
  app.add_option("--max-connections", max_connections);
  app.add_option("--timeout", timeout_s, "idle and half-open connections are closed after it");
  CLI11_PARSE(app, argc, argv);

  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  slurm_rca::bench::WorkerPool pool(workers);
  Context ctx{&slurm_rca::bench::DemoServer(bundle), &pool};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  MHD_Daemon* d = MHD_start_daemon(
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, nullptr, nullptr, &Access, &ctx,
      MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_CONNECTION_LIMIT, max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(timeout_s),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(64 * 1024),
      MHD_OPTION_NOTIFY_COMPLETED, &Completed, nullptr, MHD_OPTION_END);
  if (!d) {
    std::cerr << "mhd_candidate: cannot listen on 127.0.0.1:" << port << "\n";
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << port << std::endl;
  int sig = 0;
  sigwait(&stop, &sig);
  MHD_stop_daemon(d);
  return 0;
}

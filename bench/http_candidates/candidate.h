// What the two HTTP-core candidates of issue #20 share, so that they differ only in their HTTP
// library: slurm-mcp's tools on the replay back-end of fixtures/demo (as `slurm-mcp serve --replay
// fixtures/demo --no-sessions` builds them), one stateless answer per POST body (as the current
// transport's no-session path answers it), and a bounded worker pool the event loop hands each
// call to, so that a call waiting on Slurm never blocks the loop. Prototypes for the comparison
// in bench/README.md ("Choosing the HTTP core"), not the product.
#ifndef SLURM_RCA_BENCH_HTTP_CANDIDATES_CANDIDATE_H_
#define SLURM_RCA_BENCH_HTTP_CANDIDATES_CANDIDATE_H_

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mcp/backend/replay_backend.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/protocol/server.h"
#include "mcp/topics/tools.h"

namespace slurm_rca::bench {

inline mcp::Server& DemoServer(const std::string& bundle) {
  static mcp::Server* server = [&] {
    auto opened = mcp::ReplayBackend::Open(bundle);
    if (!opened.ok()) {
      std::fprintf(stderr, "cannot open %s: %s\n", bundle.c_str(),
                   opened.status().message().c_str());
      std::exit(2);
    }
    static std::unique_ptr<mcp::ReplayBackend> backend = std::move(opened).value();
    mcp::SurfaceOptions surface;
    surface.backend = backend.get();
    mcp::ServerOptions options;
    options.instructions = "HTTP core candidate";
    options.tools = mcp::BuildTools(surface);
    return new mcp::Server(std::move(options));
  }();
  return *server;
}

// One POST body answered statelessly: {status, JSON text} (202 and "" for a notification).
struct Answer {
  int status = 200;
  std::string body;
};

inline Answer AnswerBody(mcp::Server& server, const std::string& body) {
  mcp::ParsedMessage parsed = mcp::ParseMessage(body);
  if (!parsed.ok()) return {400, mcp::Serialize(parsed.error)};
  mcp::Session session;
  session.initialize_answered = true;
  session.initialized = true;
  session.protocol_version = "2025-06-18";
  std::optional<mcp::Json> reply = server.Handle(*parsed.message, session, [](const mcp::Json&) {});
  if (!reply) return {202, ""};
  return {200, mcp::Serialize(*reply)};
}

// A fixed pool of threads running posted jobs in order.
class WorkerPool {
 public:
  explicit WorkerPool(int threads) {
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        for (;;) {
          std::function<void()> job;
          {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            job = std::move(jobs_.front());
            jobs_.pop_front();
          }
          job();
        }
      });
    }
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void Post(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace slurm_rca::bench

#endif  // SLURM_RCA_BENCH_HTTP_CANDIDATES_CANDIDATE_H_

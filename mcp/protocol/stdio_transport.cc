#include "mcp/protocol/stdio_transport.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

namespace slurm_rca::mcp {
namespace {

constexpr int kServerBusy = -32000;

void IgnoreSigpipe() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, nullptr);
  }
}

// What RunStdio shares with its workers; they hold it alive if they outlast RunStdio.
struct State {
  explicit State(int fd) : out_fd(fd) {}

  // Writes one message as one line; after Close() or a failed write, nothing more is written.
  void Write(const Json& message) { WriteLine(Serialize(message)); }

  // Writes one message serialized already (Serialize), adding the newline.
  void WriteLine(std::string line) {
    line.push_back('\n');
    std::lock_guard<std::mutex> lock(write_mu);
    if (closed) return;
    std::string_view rest = line;
    while (!rest.empty()) {
      ssize_t n = ::write(out_fd, rest.data(), rest.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        closed = true;  // the client is gone: drop this and every later message
        return;
      }
      rest.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  void Close() {
    std::lock_guard<std::mutex> lock(write_mu);
    closed = true;
  }

  const int out_fd;
  std::mutex write_mu;
  bool closed = false;

  Session session;

  std::mutex mu;
  std::condition_variable work_cv;  // a message was queued, or stopping
  std::condition_variable idle_cv;  // a call finished, or a worker exited
  std::deque<Message> queue;
  std::set<std::string> in_flight;  // ids (serialized) queued or running
  int running = 0;
  int workers = 0;
  bool stopping = false;
};

void WorkerLoop(Server& server, std::shared_ptr<State> state) {
  auto notify = [&state](const Json& n) { state->Write(n); };
  for (;;) {
    Message m;
    {
      std::unique_lock<std::mutex> lock(state->mu);
      state->work_cv.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->queue.empty()) break;
      m = std::move(state->queue.front());
      state->queue.pop_front();
      ++state->running;
    }
    std::optional<std::string> reply = server.HandleSerialized(m, state->session, notify);
    if (reply) state->WriteLine(std::move(*reply));
    {
      std::lock_guard<std::mutex> lock(state->mu);
      --state->running;
      state->in_flight.erase(Serialize(m.id));
    }
    state->idle_cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(state->mu);
    --state->workers;
  }
  state->idle_cv.notify_all();
}

bool RunsInline(const Message& m) {
  if (m.kind != Message::Kind::kRequest) return true;
  return m.method == "initialize" || m.method == "ping" || m.method == "logging/setLevel" ||
         m.method == "tools/list";
}

bool Blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

class LineHandler {
 public:
  LineHandler(Server& server, std::shared_ptr<State> state, const StdioOptions& options)
      : server_(server), state_(std::move(state)), options_(options) {}

  void Handle(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Blank(line)) return;
    ParsedMessage parsed = ParseMessage(line);
    if (!parsed.ok()) {
      state_->Write(parsed.error);
      return;
    }
    Message& m = *parsed.message;
    if (RunsInline(m)) {
      std::optional<Json> reply =
          server_.Handle(m, state_->session, [this](const Json& n) { state_->Write(n); });
      if (reply) state_->Write(*reply);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->queue.size() < options_.max_queued) {
        state_->in_flight.insert(Serialize(m.id));
        state_->queue.push_back(std::move(m));
        state_->work_cv.notify_one();
        return;
      }
    }
    state_->Write(MakeError(m.id, kServerBusy,
                            "server busy: " + std::to_string(options_.max_queued) +
                                " requests are already waiting; retry later"));
  }

  void TooLong() {
    state_->Write(MakeError(
        nullptr, kInvalidRequest,
        "message longer than " + std::to_string(options_.max_line_bytes) + " bytes; skipped"));
  }

 private:
  Server& server_;
  std::shared_ptr<State> state_;
  const StdioOptions& options_;
};

// Lets the calls in flight finish, then cancels the rest, then stops writing; returns how many
// workers still run (each a call that ignored its cancellation), or 0 after waiting for them.
int Drain(const std::shared_ptr<State>& state, const StdioOptions& options, bool wait) {
  std::unique_lock<std::mutex> lock(state->mu);
  state->stopping = true;
  state->work_cv.notify_all();
  auto done = [&] { return state->queue.empty() && state->running == 0; };
  bool drained = state->idle_cv.wait_for(lock, options.drain_timeout, done);
  auto grace_end = std::chrono::steady_clock::now() + options.cancel_grace;
  if (!drained) {
    std::lock_guard<std::mutex> session_lock(state->session.mu);
    for (const std::string& id : state->in_flight) state->session.cancelled.insert(id);
  }
  // Idle workers exit on `stopping`; cancelled ones once their tool notices.
  state->idle_cv.wait_until(lock, grace_end, [&] { return state->workers == 0; });
  state->Close();
  // A worker that is still running holds `server`: it is waited for, unless the caller ends the
  // process without destroying it.
  if (wait) state->idle_cv.wait(lock, [&] { return state->workers == 0; });
  return state->workers;
}

}  // namespace

int RunStdio(Server& server, int in_fd, int out_fd, StdioOptions options, int* still_running) {
  IgnoreSigpipe();
  if (options.workers < 1) options.workers = 1;
  auto state = std::make_shared<State>(out_fd);
  state->workers = options.workers;
  for (int i = 0; i < options.workers; ++i) {
    std::thread(WorkerLoop, std::ref(server), state).detach();
  }

  LineHandler handler(server, state, options);
  LineSplitter lines(options.max_line_bytes);
  char chunk[1 << 16];
  int rc = 0;
  for (;;) {
    ssize_t n = ::read(in_fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {  // a non-blocking in_fd
      struct pollfd p = {in_fd, POLLIN, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    if (n < 0) {
      std::fprintf(stderr, "slurm-mcp: stdio read failed: %s\n", strerror(errno));
      rc = 1;
      break;
    }
    if (n == 0) break;
    lines.Feed(std::string_view(chunk, static_cast<std::size_t>(n)),
               [&](std::string_view line) { handler.Handle(line); }, [&] { handler.TooLong(); });
  }
  if (rc == 0 && !lines.partial().empty()) handler.Handle(lines.partial());  // no final '\n'
  const int left = Drain(state, options, still_running == nullptr);
  if (still_running) *still_running = left;
  return rc;
}

}  // namespace slurm_rca::mcp

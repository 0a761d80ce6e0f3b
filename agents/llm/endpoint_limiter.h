// EndpointLimiter: the request and token limits of one model endpoint, shared by every back-end
// (every worker thread of `rca-bench run --jobs N`) that talks to it, and the pause a 429 puts on
// all of them.
//
//   EndpointLimits limits;
//   limits.requests_per_window = 500;        // --requests-per-minute
//   limits.tokens_per_window = 200000;       // --tokens-per-minute
//   auto limiter = std::make_shared<EndpointLimiter>(limits);
//   config.limiter = limiter;                // BackendConfig: each worker's back-end gets the same
//   ...
//   // inside JsonPoster::Post, before each attempt:
//   Result<EndpointLimiter::Grant> g = limiter->Acquire(estimate, deadline);  // may wait
//   ... the request ...
//   limiter->Settle(*g, reply_usage.total());  // the estimate replaced by what the reply used
//   limiter->PauseUntil(now + retry_after);    // a 429: nobody sends before then
//
// The limits are a sliding window (60 s by default): no request is granted while
// requests_per_window grants fall in the last window, nor while the tokens of the window's grants
// plus the new request's would pass tokens_per_window. A request's tokens are not known before its
// reply, so a grant reserves an estimate (JsonPoster: request bytes / 4 + the reply's max_tokens)
// and Settle replaces it with the reply's usage; the token limit is therefore kept on estimates
// until the replies come. Settle also moves the grant's time to the reply's, so that the window
// counts each request from no earlier than the server does. A request whose estimate alone
// exceeds tokens_per_window is granted only into an empty window (else it would wait forever).
// 0 means no limit.
//
// PauseUntil: no request is granted before the time (a 429 or a Retry-After told one back-end to
// wait; every worker waits). A pause is never shortened by a later, shorter one.
//
// Threads: every method may be called from any thread. TryAcquire takes the time as an argument
// (tests drive it with a fake clock); Acquire reads the steady clock and waits on a condition
// variable.
#ifndef SLURM_RCA_AGENTS_LLM_ENDPOINT_LIMITER_H_
#define SLURM_RCA_AGENTS_LLM_ENDPOINT_LIMITER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "base/status.h"

namespace slurm_rca::agents {

struct EndpointLimits {
  int64_t requests_per_window = 0;  // grants in any window; 0: no limit
  int64_t tokens_per_window = 0;    // estimated-then-settled tokens in any window; 0: no limit
  std::chrono::steady_clock::duration window = std::chrono::seconds(60);
};

class EndpointLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  struct Grant {
    uint64_t id = 0;
    Clock::time_point at;  // when it was granted (the limiter's clock)
  };
  // TryAcquire's answer: granted, or the earliest time worth asking again.
  struct Decision {
    bool granted = false;
    Grant grant;
    Clock::time_point retry_at;
  };
  // What the limiter has done, for progress lines.
  struct Stats {
    int64_t granted = 0;  // requests let through
    int64_t waited = 0;   // Acquire calls that had to wait
    int64_t pauses = 0;   // PauseUntil calls that lengthened the pause
    int64_t retries = 0;  // NoteRetry calls
  };

  explicit EndpointLimiter(EndpointLimits limits);
  EndpointLimiter(const EndpointLimiter&) = delete;
  EndpointLimiter& operator=(const EndpointLimiter&) = delete;

  // One request of about `tokens` tokens at `now`: granted (and counted) or not. Never waits.
  Decision TryAcquire(Clock::time_point now, int64_t tokens);
  // Waits until TryAcquire grants. kDeadlineExceeded, without waiting, when the grant could not
  // come before `deadline` (time_point::max(): none).
  base::Result<Grant> Acquire(int64_t tokens, Clock::time_point deadline);
  // Replaces the estimate of a grant still in the window with `tokens` (a failed request: 0), and
  // counts the grant from `now` (its reply, or its failure) instead of from when it was granted:
  // the server counts a request when it arrives, after the grant and before the reply, so a slot
  // frees here no earlier than it does there (the fake model server's 429s at --jobs 32 came from
  // counting from the grant; bench/README.md).
  void Settle(const Grant& grant, int64_t tokens) { Settle(grant, tokens, Clock::now()); }
  void Settle(const Grant& grant, int64_t tokens, Clock::time_point now);
  // No grant before `until` (a 429, a Retry-After); a shorter pause than the current one is kept
  // as it is.
  void PauseUntil(Clock::time_point until);
  // A back-end retried a request (429, 5xx or transport failure); counted for progress only.
  void NoteRetry();

  Clock::time_point paused_until() const;
  Stats stats() const;
  const EndpointLimits& limits() const { return limits_; }

 private:
  struct Entry {
    uint64_t id;
    Clock::time_point at;
    int64_t tokens;
  };
  Decision TryAcquireLocked(Clock::time_point now, int64_t tokens);

  const EndpointLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Entry> window_;  // grants of the last window, oldest first
  int64_t window_tokens_ = 0;
  uint64_t next_id_ = 1;
  Clock::time_point paused_until_{};
  Stats stats_;
};

}  // namespace slurm_rca::agents

#endif  // SLURM_RCA_AGENTS_LLM_ENDPOINT_LIMITER_H_

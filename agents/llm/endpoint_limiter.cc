#include "agents/llm/endpoint_limiter.h"

#include <algorithm>

namespace slurm_rca::agents {

EndpointLimiter::EndpointLimiter(EndpointLimits limits) : limits_(limits) {}

EndpointLimiter::Decision EndpointLimiter::TryAcquireLocked(Clock::time_point now,
                                                            int64_t tokens) {
  while (!window_.empty() && window_.front().at + limits_.window <= now) {
    window_tokens_ -= window_.front().tokens;
    window_.pop_front();
  }
  Decision d;
  Clock::time_point wait_until = now;
  if (now < paused_until_) wait_until = paused_until_;
  const int64_t held = static_cast<int64_t>(window_.size());
  if (limits_.requests_per_window > 0 && held >= limits_.requests_per_window) {
    // The grant that must leave the window before one more fits.
    wait_until = std::max(wait_until, window_[held - limits_.requests_per_window].at + limits_.window);
  }
  if (limits_.tokens_per_window > 0 && !window_.empty() &&
      window_tokens_ + tokens > limits_.tokens_per_window) {
    // The oldest grants leave first: when enough of them have, the new one fits (or the window is
    // empty, which always admits one).
    int64_t left = window_tokens_;
    for (const Entry& e : window_) {
      left -= e.tokens;
      if (left + tokens <= limits_.tokens_per_window || &e == &window_.back()) {
        wait_until = std::max(wait_until, e.at + limits_.window);
        break;
      }
    }
  }
  if (wait_until > now) {
    d.retry_at = wait_until;
    return d;
  }
  d.granted = true;
  d.grant = {next_id_++, now};
  window_.push_back({d.grant.id, now, std::max<int64_t>(tokens, 0)});
  window_tokens_ += window_.back().tokens;
  ++stats_.granted;
  return d;
}

EndpointLimiter::Decision EndpointLimiter::TryAcquire(Clock::time_point now, int64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  return TryAcquireLocked(now, tokens);
}

base::Result<EndpointLimiter::Grant> EndpointLimiter::Acquire(int64_t tokens,
                                                              Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  bool waited = false;
  for (;;) {
    Decision d = TryAcquireLocked(Clock::now(), tokens);
    if (d.granted) {
      if (waited) ++stats_.waited;
      return d.grant;
    }
    if (d.retry_at > deadline) {
      return base::Status::DeadlineExceeded(
          "the model endpoint's limits (--requests-per-minute, --tokens-per-minute or a 429's "
          "pause) hold the request past the deadline");
    }
    waited = true;
    changed_.wait_until(lock, d.retry_at);
  }
}

void EndpointLimiter::Settle(const Grant& grant, int64_t tokens, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  // A grant is settled soon after it was made: look from the newest end.
  for (auto it = window_.rbegin(); it != window_.rend(); ++it) {
    if (it->id != grant.id) continue;
    Entry e = *it;
    window_tokens_ += std::max<int64_t>(tokens, 0) - e.tokens;
    e.tokens = std::max<int64_t>(tokens, 0);
    // Counted from now on, at the window's newest end (the window stays sorted by time).
    window_.erase(std::next(it).base());
    e.at = window_.empty() ? std::max(e.at, now) : std::max({e.at, now, window_.back().at});
    window_.push_back(e);
    break;
  }
  changed_.notify_all();
}

void EndpointLimiter::PauseUntil(Clock::time_point until) {
  std::lock_guard<std::mutex> lock(mu_);
  if (until > paused_until_) {
    paused_until_ = until;
    ++stats_.pauses;
  }
  changed_.notify_all();
}

void EndpointLimiter::NoteRetry() {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.retries;
}

EndpointLimiter::Clock::time_point EndpointLimiter::paused_until() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_until_;
}

EndpointLimiter::Stats EndpointLimiter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace slurm_rca::agents

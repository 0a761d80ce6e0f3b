// EndpointLimiter: the sliding window is never exceeded (a fake clock, then threads on the real
// one), token estimates are settled, and a pause holds every caller; through two JsonPosters
// sharing one limiter against FakeModelServer, a 429 with Retry-After that one gets holds the
// other's request.
#include "agents/llm/endpoint_limiter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "agents/llm/fake_model_server.h"
#include "agents/llm/http_client.h"

namespace slurm_rca::agents {
namespace {

using Clock = EndpointLimiter::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Every run of limit+1 consecutive grants spans at least one window.
void ExpectWindowKept(std::vector<Clock::time_point> at, int64_t limit, Clock::duration window) {
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i + limit < at.size(); ++i) {
    EXPECT_GE(at[i + limit] - at[i], window) << "grants " << i << " and " << i + limit;
  }
}

TEST(EndpointLimiter, FakeClockRequestsNeverExceedTheWindowAndWaitNoLonger) {
  EndpointLimiter limiter({5, 0, seconds(60)});
  std::mt19937 rng(7);
  Clock::time_point t{};
  std::vector<Clock::time_point> granted;
  for (int i = 0; i < 300; ++i) {
    t += milliseconds(rng() % 8000);
    EndpointLimiter::Decision d = limiter.TryAcquire(t, 0);
    if (!d.granted) {
      ASSERT_GT(d.retry_at, t);
      // Not a moment earlier (the answer is tight) and then at once.
      EXPECT_FALSE(limiter.TryAcquire(d.retry_at - milliseconds(1), 0).granted);
      t = d.retry_at;
      d = limiter.TryAcquire(t, 0);
      ASSERT_TRUE(d.granted);
    }
    EXPECT_EQ(d.grant.at, t);
    granted.push_back(d.grant.at);
  }
  ExpectWindowKept(granted, 5, seconds(60));
  EXPECT_EQ(limiter.stats().granted, 300);
}

TEST(EndpointLimiter, FakeClockTokensAreEstimatesUntilSettled) {
  EndpointLimiter limiter({0, 1000, seconds(60)});
  Clock::time_point t0{};
  EndpointLimiter::Decision a = limiter.TryAcquire(t0, 600);
  ASSERT_TRUE(a.granted);
  EndpointLimiter::Decision b = limiter.TryAcquire(t0 + seconds(1), 600);
  ASSERT_FALSE(b.granted);
  EXPECT_EQ(b.retry_at, t0 + seconds(60));  // when the first grant leaves the window
  limiter.Settle(a.grant, 300, t0);          // the reply used less than its estimate
  b = limiter.TryAcquire(t0 + seconds(1), 600);
  ASSERT_TRUE(b.granted);
  // More than the whole limit: only into an empty window.
  EndpointLimiter::Decision big = limiter.TryAcquire(t0 + seconds(2), 5000);
  ASSERT_FALSE(big.granted);
  EXPECT_EQ(big.retry_at, t0 + seconds(61));
  ASSERT_TRUE(limiter.TryAcquire(t0 + seconds(61), 5000).granted);
  EXPECT_FALSE(limiter.TryAcquire(t0 + seconds(61), 1).granted);
}

// A settled grant counts from its reply, as a server counts a request from its arrival (after
// the grant): its slot frees a window after the reply, not after the grant; settled out of order,
// the window stays sorted and each grant leaves a window after its own reply.
TEST(EndpointLimiter, FakeClockASettledGrantCountsFromItsReply) {
  EndpointLimiter one({1, 0, seconds(10)});
  Clock::time_point t0{};
  EndpointLimiter::Decision a = one.TryAcquire(t0, 0);
  ASSERT_TRUE(a.granted);
  one.Settle(a.grant, 7, t0 + seconds(3));
  EndpointLimiter::Decision b = one.TryAcquire(t0 + seconds(10), 0);
  ASSERT_FALSE(b.granted);
  EXPECT_EQ(b.retry_at, t0 + seconds(13));
  EXPECT_TRUE(one.TryAcquire(t0 + seconds(13), 0).granted);

  EndpointLimiter three({3, 0, seconds(10)});
  EndpointLimiter::Decision g1 = three.TryAcquire(t0, 0), g2 = three.TryAcquire(t0 + seconds(1), 0),
                            g3 = three.TryAcquire(t0 + seconds(2), 0);
  ASSERT_TRUE(g1.granted && g2.granted && g3.granted);
  three.Settle(g2.grant, 0, t0 + seconds(4));
  three.Settle(g1.grant, 0, t0 + seconds(5));  // the window now: g3 at 2, g2 at 4, g1 at 5
  EndpointLimiter::Decision d = three.TryAcquire(t0 + seconds(11), 0);
  ASSERT_FALSE(d.granted);
  EXPECT_EQ(d.retry_at, t0 + seconds(12));  // g3 leaves first
  ASSERT_TRUE(three.TryAcquire(t0 + seconds(12), 0).granted);
  d = three.TryAcquire(t0 + seconds(13), 0);
  ASSERT_FALSE(d.granted);
  EXPECT_EQ(d.retry_at, t0 + seconds(14));  // then g2, a window after its reply
  // A grant already out of the window is left alone.
  three.Settle(g3.grant, 0, t0 + seconds(13));
  EXPECT_EQ(three.TryAcquire(t0 + seconds(13), 0).retry_at, t0 + seconds(14));
}

TEST(EndpointLimiter, FakeClockPauseHoldsEveryCallerUntilItsEnd) {
  EndpointLimiter limiter({0, 0, seconds(60)});
  Clock::time_point t0{};
  limiter.PauseUntil(t0 + seconds(5));
  limiter.PauseUntil(t0 + seconds(2));  // a shorter pause does not shorten it
  for (int caller = 0; caller < 3; ++caller) {
    EndpointLimiter::Decision d = limiter.TryAcquire(t0 + seconds(1), 10);
    ASSERT_FALSE(d.granted);
    EXPECT_EQ(d.retry_at, t0 + seconds(5));
  }
  EXPECT_TRUE(limiter.TryAcquire(t0 + seconds(5), 10).granted);
  EXPECT_EQ(limiter.stats().pauses, 1);
}

TEST(EndpointLimiter, ThreadsNeverExceedTheWindow) {
  const Clock::duration window = milliseconds(150);
  EndpointLimiter limiter({4, 0, window});
  std::mutex mu;
  std::vector<Clock::time_point> granted;
  std::vector<std::thread> workers;
  for (int w = 0; w < 6; ++w) {
    workers.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        base::Result<EndpointLimiter::Grant> g = limiter.Acquire(1, Clock::time_point::max());
        ASSERT_TRUE(g.ok());
        std::lock_guard<std::mutex> lock(mu);
        granted.push_back(g->at);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  ASSERT_EQ(granted.size(), 30u);
  ExpectWindowKept(granted, 4, window);
  EXPECT_GT(limiter.stats().waited, 0);
}

TEST(EndpointLimiter, AWaitPastTheDeadlineIsRefusedAtOnce) {
  EndpointLimiter limiter({0, 0, seconds(60)});
  limiter.PauseUntil(Clock::now() + seconds(30));
  auto t0 = Clock::now();
  base::Result<EndpointLimiter::Grant> g = limiter.Acquire(1, Clock::now() + milliseconds(100));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), base::Status::Code::kDeadlineExceeded);
  EXPECT_LT(Clock::now() - t0, milliseconds(50));
}

TEST(EndpointLimiter, APauseFromOneThreadHoldsTheOthers) {
  EndpointLimiter limiter({0, 0, seconds(60)});
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<Clock::time_point> granted;
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (!stop) {
        base::Result<EndpointLimiter::Grant> g = limiter.Acquire(1, Clock::time_point::max());
        ASSERT_TRUE(g.ok());
        {
          std::lock_guard<std::mutex> lock(mu);
          granted.push_back(g->at);
        }
        std::this_thread::sleep_for(milliseconds(2));
      }
    });
  }
  std::this_thread::sleep_for(milliseconds(40));
  const Clock::time_point pause_end = Clock::now() + milliseconds(300);
  limiter.PauseUntil(pause_end);  // what a worker does on a 429 with Retry-After
  const Clock::time_point paused = Clock::now();
  std::this_thread::sleep_for(milliseconds(450));
  stop = true;
  for (std::thread& t : workers) t.join();
  int during = 0, after = 0;
  for (Clock::time_point at : granted) {
    if (at >= paused && at < pause_end) ++during;
    if (at >= pause_end) ++after;
  }
  EXPECT_EQ(during, 0);
  EXPECT_GE(after, 4);  // every worker went on once the pause ended
  EXPECT_GE(limiter.stats().waited, 4);
}

// Two back-ends' posters share the endpoint's limiter: the first gets 429 with Retry-After 1,
// and the second, asking after that, is held until the pause ends (it would otherwise be answered
// at once).
TEST(EndpointLimiter, A429WithRetryAfterToOnePosterHoldsTheOther) {
  FakeModelServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue({429, R"({"error":"rate limited"})", {{"Retry-After", "1"}}});
  server.Enqueue({200, FakeModelServer::OpenAiReply("one", {})});
  server.Enqueue({200, FakeModelServer::OpenAiReply("two", {})});
  base::Result<Endpoint> e = ParseUrl(server.base_url() + "/v1");
  ASSERT_TRUE(e.ok());
  auto limiter = std::make_shared<EndpointLimiter>(EndpointLimits{});
  HttpOptions options;
  options.timeout_s = 10;
  options.backoff_initial_s = 0.01;
  options.backoff_max_s = 5;
  options.limiter = limiter;
  JsonPoster first(*e, options), second(*e, options);
  base::Result<HttpReply> first_reply = base::Status::Unavailable("not run");
  std::thread t([&] { first_reply = first.Post("/chat/completions", {}, "{}"); });
  const auto asked = Clock::now();
  while (limiter->paused_until() <= Clock::now() && Clock::now() - asked < seconds(5)) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  const Clock::time_point pause_end = limiter->paused_until();
  ASSERT_GT(pause_end, Clock::now()) << "the 429 did not pause the limiter";
  base::Result<HttpReply> second_reply = second.Post("/chat/completions", {}, "{}");
  const Clock::time_point answered = Clock::now();
  t.join();
  ASSERT_TRUE(first_reply.ok()) << first_reply.status().ToString();
  ASSERT_TRUE(second_reply.ok()) << second_reply.status().ToString();
  EXPECT_GE(answered, pause_end);
  EXPECT_GE(second_reply->grant.at, pause_end);
  EXPECT_EQ(first_reply->attempts, 2);
  EXPECT_EQ(second_reply->attempts, 1);
  EXPECT_EQ(server.requests().size(), 3u);
  EXPECT_EQ(limiter->stats().retries, 1);
  EXPECT_EQ(limiter->stats().pauses, 1);
}

}  // namespace
}  // namespace slurm_rca::agents

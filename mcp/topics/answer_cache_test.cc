#include "mcp/topics/answer_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace slurm_rca::mcp {
namespace {

std::shared_ptr<const CachedAnswer> AnswerSaying(const std::string& text) {
  auto answer = std::make_shared<CachedAnswer>();
  answer->result.content.push_back({{"type", "text"}, {"text", text}});
  return answer;
}

TEST(AnswerCache, NoVersionNoAnswer) {
  AnswerCache cache;
  const AnswerKey key{"nodes", {}, 200};
  cache.Add(2, key, AnswerSaying("a"));
  EXPECT_EQ(cache.Find(std::nullopt, key), nullptr) << "a back-end without a version is live";
  ASSERT_NE(cache.Find(2, key), nullptr);
  EXPECT_EQ(cache.Find(2, key)->result.content[0]["text"], "a");
}

TEST(AnswerCache, AnswersAreKeptByWhatTheCallAsked) {
  AnswerCache cache;
  cache.Add(2, {"queue", {{"user", "alice"}}, 200}, AnswerSaying("alice"));
  cache.Add(2, {"queue", {{"user", "bob"}}, 200}, AnswerSaying("bob"));
  cache.Add(2, {"queue", {{"user", "bob"}}, 5}, AnswerSaying("bob, 5 rows"));
  EXPECT_EQ(cache.Find(2, {"queue", {{"user", "alice"}}, 200})->result.content[0]["text"], "alice");
  EXPECT_EQ(cache.Find(2, {"queue", {{"user", "bob"}}, 200})->result.content[0]["text"], "bob");
  EXPECT_EQ(cache.Find(2, {"queue", {{"user", "bob"}}, 5})->result.content[0]["text"],
            "bob, 5 rows");
  EXPECT_EQ(cache.Find(2, {"queue", {}, 200}), nullptr);
  EXPECT_EQ(cache.Find(2, {"nodes", {{"user", "alice"}}, 200}), nullptr);
}

TEST(AnswerCache, AnotherVersionFindsNothingAndReplacesTheOldAnswers) {
  AnswerCache cache;
  const AnswerKey nodes{"nodes", {}, 200};
  const AnswerKey queue{"queue", {}, 200};
  cache.Add(2, nodes, AnswerSaying("at 2"));
  cache.Add(2, queue, AnswerSaying("queue at 2"));
  EXPECT_EQ(cache.Find(4, nodes), nullptr);
  cache.Add(4, nodes, AnswerSaying("at 4"));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Find(2, nodes), nullptr);
  EXPECT_EQ(cache.Find(4, nodes)->result.content[0]["text"], "at 4");
  EXPECT_EQ(cache.Find(4, queue), nullptr);
}

TEST(AnswerCache, KeepsAtMostMaxAnswers) {
  AnswerCache cache;
  for (std::size_t i = 0; i < AnswerCache::kMaxAnswers + 10; ++i) {
    cache.Add(2, {"queue", {{"user", "u" + std::to_string(i)}}, 200}, AnswerSaying("x"));
  }
  EXPECT_EQ(cache.size(), AnswerCache::kMaxAnswers);
  EXPECT_NE(cache.Find(2, {"queue", {{"user", "u0"}}, 200}), nullptr);
  EXPECT_EQ(
      cache.Find(2, {"queue", {{"user", "u" + std::to_string(AnswerCache::kMaxAnswers)}}, 200}),
      nullptr);
}

}  // namespace
}  // namespace slurm_rca::mcp

#include "mcp/topics/answer_cache.h"

#include <utility>

namespace slurm_rca::mcp {

std::shared_ptr<const CachedAnswer> AnswerCache::Find(std::optional<std::int64_t> version,
                                                      const AnswerKey& key) const {
  if (!version) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  if (*version != version_) return nullptr;
  auto it = answers_.find(key);
  return it == answers_.end() ? nullptr : it->second;
}

void AnswerCache::Add(std::int64_t version, AnswerKey key,
                      std::shared_ptr<const CachedAnswer> answer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (version != version_) {
    answers_.clear();
    version_ = version;
  }
  if (answers_.size() >= kMaxAnswers) return;
  answers_.emplace(std::move(key), std::move(answer));
}

std::size_t AnswerCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return answers_.size();
}

}  // namespace slurm_rca::mcp

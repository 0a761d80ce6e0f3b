// AnswerCache: slurm_query and slurm_overview answers reused while the back-end's evidence
// cannot change.
//
// A replayed bundle answers an argv with the same recorded evidence for as long as its selected
// snapshot stays (Backend::EvidenceVersion), so the answer built from that evidence (the rows
// parsed, the structured answer, its text) is the same on every call; building it is most of a
// replayed call's CPU. The cache keeps answers by what the call asked (topic, filters, rows;
// each tool has a cache of its own) and the version they were built at. A back-end without a version (live) is never cached: its
// reads are evidence of now, and a cache must never serve an old one.
//
//   AnswerCache cache;
//   const std::optional<std::int64_t> version = backend.EvidenceVersion();
//   if (auto hit = cache.Find(version, key)) return Shared(hit);   // nullptr when no version
//   CachedAnswer answer = Build(...);                              // reads the back-end
//   if (version && backend.EvidenceVersion() == version) cache.Add(*version, key, ...);
//
// A call answered from the cache shares the answer (ToolResult::shared, aliasing the
// CachedAnswer's result), never copies it: an answer is immutable once added, and lives as long
// as the cache or a call's result holds it.
//
// Add only what was built while the version stayed the same (checked before and after the
// reads, as above). An answer of another version is never returned: an Add at a new version
// drops the old ones. At most kMaxAnswers answers are kept (filters are the caller's
// words, unbounded); past that, new ones are not kept. Thread-safe.
#ifndef SLURM_RCA_MCP_TOPICS_ANSWER_CACHE_H_
#define SLURM_RCA_MCP_TOPICS_ANSWER_CACHE_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mcp/evidence/evidence.h"
#include "mcp/protocol/server.h"
#include "mcp/topics/topics.h"

namespace slurm_rca::mcp {

// What a slurm_query call asked, once its arguments were checked.
struct AnswerKey {
  std::string topic;
  Filters filters;
  std::size_t max_rows = 0;  // the cap applied, not the argument
  std::size_t offset = 0;    // the page (a cursor's offset)
  std::vector<std::string> group_by;

  auto operator<=>(const AnswerKey&) const = default;
};

// One read an answer was built from: the topic read and its evidence.
struct AnswerRead {
  std::string topic;
  Evidence evidence;
};

// One answer and the reads it was built from, in order (one for slurm_query, a section each for
// slurm_overview): every call it answers still audits and counts that evidence.
struct CachedAnswer {
  std::vector<AnswerRead> reads;
  ToolResult result;
};

class AnswerCache {
 public:
  static constexpr std::size_t kMaxAnswers = 256;

  // The answer added for `key` at `version`; nullptr when there is none, or no version.
  std::shared_ptr<const CachedAnswer> Find(std::optional<std::int64_t> version,
                                           const AnswerKey& key) const;

  // Keeps `answer` for `key` at `version`, dropping every answer of another version.
  void Add(std::int64_t version, AnswerKey key, std::shared_ptr<const CachedAnswer> answer);

  std::size_t size() const;

 private:
  mutable std::mutex mu_;
  std::int64_t version_ = 0;  // of every answer kept
  std::map<AnswerKey, std::shared_ptr<const CachedAnswer>> answers_;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_ANSWER_CACHE_H_

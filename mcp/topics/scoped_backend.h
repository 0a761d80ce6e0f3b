// What a caller may read (issue #38, item 2): the token scopes slurm-mcp knows, the view each
// gives, and ScopedBackend, the back-end a restricted caller's tool calls read through.
//
// Scopes (names configurable, defaults below):
//   slurm:read       what the service account sees (operators)
//   slurm:read:own   the caller's own jobs: every job-level read (queue, accounting, priority,
//                    fairshare) narrowed to the caller's Slurm user by the argv the guard
//                    approves (guard::GuardOptions::own_user), node and partition state as is;
//                    what no argv can narrow (scontrol show job, sdiag, node files) refused
//   slurm:logs       the logs topic (daemon logs hold every user's job ids and names)
// A token needs slurm:read or slurm:read:own to call anything; with both, slurm:read wins.
//
//   CallerView view = ViewOf(ScopeNames{}, context.caller());
//   if (!view.allowed) refuse(view.refusal);
//   ScopedBackend scoped(backend, view);   // reads narrowed, refused or passed through
#ifndef SLURM_RCA_MCP_TOPICS_SCOPED_BACKEND_H_
#define SLURM_RCA_MCP_TOPICS_SCOPED_BACKEND_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "guard/check.h"
#include "mcp/evidence/evidence.h"
#include "mcp/protocol/server.h"

namespace slurm_rca::mcp {

struct ScopeNames {
  std::string cluster = "slurm:read";
  std::string own = "slurm:read:own";
  std::string logs = "slurm:logs";
};

// What one caller may read.
struct CallerView {
  bool allowed = false;
  std::optional<std::string> own_user;  // set: the own-jobs view of this Slurm user
  bool logs = false;                    // the logs topic
  std::string refusal;                  // why not, when !allowed
  std::string needed_scope;             // the scope that would let it in, when !allowed
};

CallerView ViewOf(const ScopeNames& names, const Caller& caller);

// squeue, sprio and sacct with --user=<user> (sacct without -a), sshare with --users=<user>
// (without -a), when they name no user already; every other argv as it is. The guard, not this
// rewrite, decides: an argv naming another user stays as it is and is refused.
std::vector<std::string> NarrowToUser(std::vector<std::string> argv, const std::string& user);

// A back-end seen through a caller's view. Read: in the own-jobs view the argv is narrowed
// (NarrowToUser) and checked by a guard with own_user (and no cluster: -M is refused), a refusal
// answered as the guard's "DENIED <rule>: <reason>" with nothing read; otherwise the inner
// back-end's. ReadLog without the
// logs scope, and ReadFabric in the own-jobs view (cgroups and /proc name every job on the host),
// are refused. EvidenceVersion is nullopt in the own-jobs view, so no answer built for a wider
// view reaches it through the answer cache, which is keyed by what a call asked
// (mcp/topics/answer_cache.h); slurm:read with and without slurm:logs share the cache, which
// never keeps a log's answer (tools.cc). Not owned: inner must outlive it.
class ScopedBackend : public Backend {
 public:
  // Reads are made on behalf of `principal` (Backend::ReadAs: the live back-end's fair budget).
  ScopedBackend(Backend& inner, const CallerView& view, std::string principal);

  std::string Label() const override { return inner_.Label(); }
  Evidence Read(const std::vector<std::string>& argv) override;
  Evidence ReadLog(const std::string& daemon, int lines) override;
  Evidence ReadFabric() override;
  std::vector<ProgramReads> LastReads() const override { return inner_.LastReads(); }
  std::optional<std::int64_t> EvidenceVersion() const override;

 private:
  Evidence Refused(std::vector<std::string> argv, std::string cause) const;

  Backend& inner_;
  const CallerView view_;
  const std::string principal_;
  const guard::Guard guard_;
};

// Tool calls per principal, for slurm-mcp's readiness document (GET /ready): calls, those that
// ended in an error or no evidence, and those refused for their token's scope. Names the
// principal, never a token. At most kMaxPrincipals are named; later ones are counted together
// under "(other)". Thread-safe.
class CallerCounts {
 public:
  static constexpr std::size_t kMaxPrincipals = 1024;

  void Record(const std::string& principal, bool error, bool scope_refused);
  // {"<principal>": {"calls": N, "errors": N, "scope_refused": N}, ...}
  Json ToJson() const;

 private:
  struct Counts {
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::uint64_t scope_refused = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Counts> counts_;
};

}  // namespace slurm_rca::mcp

#endif  // SLURM_RCA_MCP_TOPICS_SCOPED_BACKEND_H_

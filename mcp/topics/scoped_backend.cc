#include "mcp/topics/scoped_backend.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "base/time.h"

namespace slurm_rca::mcp {

CallerView ViewOf(const ScopeNames& names, const Caller& caller) {
  CallerView v;
  const auto has = [&](const std::string& scope) { return caller.scopes.count(scope) > 0; };
  v.logs = has(names.logs);
  if (has(names.cluster)) {
    v.allowed = true;
    return v;
  }
  if (has(names.own)) {
    if (caller.user.empty()) {
      v.refusal = "the token's principal '" + caller.principal +
                  "' maps to no Slurm user, so its own jobs cannot be named";
      v.needed_scope = names.cluster;
      return v;
    }
    v.allowed = true;
    v.own_user = caller.user;
    return v;
  }
  v.refusal = "the token carries neither " + names.cluster + " nor " + names.own;
  v.needed_scope = names.own;
  return v;
}

std::vector<std::string> NarrowToUser(std::vector<std::string> argv, const std::string& user) {
  if (argv.empty()) return argv;
  const std::string& program = argv[0];
  std::vector<std::string_view> widen;  // flags that read every user, dropped
  std::vector<std::string_view> filter;  // spellings of the user filter
  std::string add;
  if (program == "squeue" || program == "sprio") {
    filter = {"-u", "--user"};
    add = "--user=";
  } else if (program == "sacct") {
    widen = {"-a", "--allusers"};
    filter = {"-u", "--user"};
    add = "--user=";
  } else if (program == "sshare") {
    widen = {"-a", "--all"};
    filter = {"-u", "--users"};
    add = "--users=";
  } else {
    return argv;
  }
  std::vector<std::string> out;
  bool named = false;
  for (const std::string& a : argv) {
    if (std::find(widen.begin(), widen.end(), a) != widen.end()) continue;
    for (std::string_view f : filter) {
      if (a == f || a.rfind(std::string(f) + "=", 0) == 0) named = true;
    }
    out.push_back(a);
  }
  if (!named) out.push_back(add + user);
  return out;
}

ScopedBackend::ScopedBackend(Backend& inner, const CallerView& view, std::string principal)
    : inner_(inner),
      view_(view),
      principal_(std::move(principal)),
      guard_(guard::GuardOptions{.own_user = view.own_user}) {}

Evidence ScopedBackend::Refused(std::vector<std::string> argv, std::string cause) const {
  Evidence e;
  e.outcome = Evidence::Outcome::kRefused;
  e.source = inner_.Label();
  e.evidence_time = base::IsoUtcNow();
  e.argv = std::move(argv);
  e.cause = std::move(cause);
  return e;
}

Evidence ScopedBackend::Read(const std::vector<std::string>& argv) {
  if (!view_.own_user) return inner_.ReadAs(argv, principal_);
  std::vector<std::string> narrowed = NarrowToUser(argv, *view_.own_user);
  // Any refusal stands, the allowlist's too: this guard configures no cluster, so -M is refused
  // here even where the inner back-end's guard would take it (the topics never send -M), and a
  // refusal of the allowlist before the own-jobs rules ran must not reach a guard that skips them.
  guard::Verdict v = guard_.Check(narrowed);
  if (!v.ok()) return Refused(std::move(narrowed), v.denial().ToString());
  return inner_.ReadAs(narrowed, principal_);
}

Evidence ScopedBackend::ReadLog(const std::string& daemon, int lines) {
  if (!view_.logs) {
    return Refused({"log", daemon},
                   "scope: daemon logs name every user's jobs; the logs topic needs the token "
                   "scope for logs (slurm-mcp's default: slurm:logs)");
  }
  return inner_.ReadLog(daemon, lines);
}

Evidence ScopedBackend::ReadFabric() {
  if (view_.own_user) {
    return Refused({"files", "fabric"},
                   "scope: this host's cgroups and /proc name every user's jobs; the own-jobs "
                   "view does not read them");
  }
  return inner_.ReadFabric();
}

std::optional<std::int64_t> ScopedBackend::EvidenceVersion() const {
  // The answer cache is keyed by what a call asked, not by who asked: an own-jobs view (whose
  // reads are narrowed) never uses it. The views with and without slurm:logs read the same for
  // every topic but logs, whose answers are never kept (tools.cc Query), so they share it.
  if (view_.own_user) return std::nullopt;
  return inner_.EvidenceVersion();
}

void CallerCounts::Record(const std::string& principal, bool error, bool scope_refused) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = counts_.find(principal);
  if (it == counts_.end()) {
    const std::string& name = counts_.size() < kMaxPrincipals ? principal : "(other)";
    it = counts_.try_emplace(name).first;
  }
  ++it->second.calls;
  if (error) ++it->second.errors;
  if (scope_refused) ++it->second.scope_refused;
}

Json CallerCounts::ToJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  Json out = Json::object();
  for (const auto& [principal, c] : counts_) {
    out[principal] = {{"calls", c.calls}, {"errors", c.errors}, {"scope_refused", c.scope_refused}};
  }
  return out;
}

}  // namespace slurm_rca::mcp

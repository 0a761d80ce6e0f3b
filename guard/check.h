// The guard: decides whether an argv may run, and says why not.
//
// slurm-rca's agents and MCP server read Slurm state by running a small set of Slurm client
// commands. The guard is the code that makes those reads read-only: an argv is approved only if
// it matches the allowlist (guard/policy.h) in its canonical spelling. Anything else is denied
// with a rule id and a reason a model can act on.
//
//   slurm_rca::guard::Guard guard(slurm_rca::guard::GuardOptions{.clusters = {"rca"}});
//   slurm_rca::guard::Verdict v = guard.Check({"scontrol", "show", "node", "c1"});
//   if (!v.ok()) {
//     std::cerr << v.denial().ToString();   // "DENIED mutating-verb: ..."
//     return;
//   }
//   RunResult r = executor.Run(v.approved());  // guard/run.h
//
// What it refuses, beyond "not listed":
//   - abbreviations and case variants of options, command words and entities (Slurm expands
//     unique prefixes: `sdiag --r` is `--reset`, `scontrol u` is `update`);
//   - clustered short options (`-ar`), attached short values (`-j1008`), `--`, duplicates,
//     values that start with `-`, long options with a detached value (`--format X`);
//   - bytes outside printable ASCII, more than kMaxArgs arguments, arguments over kMaxArgBytes;
//   - options and commands that read or write files, reveal secrets, loop forever, or widen the
//     scope to clusters that were not configured.
//
// Check() is pure: no I/O, no globals, safe to call from any thread.
#ifndef SLURM_RCA_GUARD_CHECK_H_
#define SLURM_RCA_GUARD_CHECK_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/policy.h"
#include "guard/rule.h"

namespace slurm_rca::guard {

class Guard;

// One argv token after parsing, enough to render the argv back exactly.
struct Token {
  enum class Kind {
    kProgram,     // argv[0]
    kFlag,        // option without a value: "-N", "--noheader", "--json"
    kOption,      // option with a value in the next token: "-p", "gpu"
    kAttached,    // long option with its value attached: "--format=a,b"
    kPositional,  // a command word, entity, id or key=value operand
  };
  Kind kind;
  std::string spelling;  // option spelling or the positional text
  std::string value;     // for kOption and kAttached
};

// An argv the guard approved. Only Guard::Check() can make one; run(const Approved&) in
// guard/run.h is the only function in the read path that spawns a process, so nothing
// unchecked can run.
class Approved {
 public:
  Approved(const Approved&) = default;
  Approved& operator=(const Approved&) = default;
  Approved(Approved&&) = default;
  Approved& operator=(Approved&&) = default;

  // The program name, e.g. "sinfo".
  const std::string& program() const { return argv_.front(); }
  // The argv exactly as given to Check().
  const std::vector<std::string>& argv() const { return argv_; }
  // What is executed: argv plus the guard's defensive injections (sacctmgr gets --readonly).
  const std::vector<std::string>& exec_argv() const { return exec_argv_; }
  // The parsed tokens; Render(tokens()) == argv().
  const std::vector<Token>& tokens() const { return tokens_; }

 private:
  friend class Guard;
  Approved(std::vector<std::string> argv, std::vector<std::string> exec_argv,
           std::vector<Token> tokens)
      : argv_(std::move(argv)), exec_argv_(std::move(exec_argv)), tokens_(std::move(tokens)) {}

  std::vector<std::string> argv_;
  std::vector<std::string> exec_argv_;
  std::vector<Token> tokens_;
};

// Why an argv was refused.
struct Denial {
  Rule rule;
  std::string reason;  // one sentence a model can act on
  int index = -1;      // the offending argv index, -1 when the whole argv is at fault

  // "DENIED <rule-id>: <reason>"
  std::string ToString() const;
};

// Either an Approved argv or a Denial.
class Verdict {
 public:
  bool ok() const { return approved_.has_value(); }
  // Requires ok().
  const Approved& approved() const { return *approved_; }
  // Requires !ok().
  const Denial& denial() const { return *denial_; }

 private:
  friend class Guard;
  explicit Verdict(Approved a) : approved_(std::move(a)) {}
  explicit Verdict(Denial d) : denial_(std::move(d)) {}
  std::optional<Approved> approved_;
  std::optional<Denial> denial_;
};

struct GuardOptions {
  // Cluster names `-M`/`--clusters` may name. Empty: `-M` is refused.
  std::vector<std::string> clusters;
  // The own-jobs view (slurm-mcp's own-jobs scope, issue #38): when set, the caller may read its
  // own jobs and the cluster's node and partition state, nothing of other users' jobs. On top of
  // the allowlist, an argv is then approved only if it cannot show another user's job:
  //   squeue, sprio: -u/--user naming exactly this user (not a list; squeue --me refused);
  //   sacct: the same, and never -a/--allusers; sshare: -u/--users this user, never -a/--all;
  //   sinfo; scontrol show of config, nodes, partitions, reservations and the like, ping,
  //   version; sacctmgr show of qos, tres, clusters, events and the like;
  //   nvidia-smi --query-gpu and the other per-GPU queries, -q only with -d sections that hold
  //   no processes, topo, -L.
  // Refused as own-jobs-unfilterable, since no argv narrows them to one user: scontrol show
  // job|step|assoc_mgr|burstbuffer, sdiag (RPC counts by user), sacctmgr show of users,
  // associations, accounts, wckeys, problems, stats and transactions, and nvidia-smi's process
  // lists (bare nvidia-smi, -q without -d, -d PIDS or ACCOUNTING, --query-compute-apps,
  // --query-accounted-apps). A name outside the guard's name grammar refuses every argv.
  std::optional<std::string> own_user;
};

class Guard {
 public:
  explicit Guard(GuardOptions options = {});

  Verdict Check(const std::vector<std::string>& argv) const;

  const GuardOptions& options() const { return options_; }

 private:
  GuardOptions options_;
};

// Checks every program's examples (guard/policy.h) against guard; returns one line per failure,
// empty when all pass.
std::vector<std::string> SelfTest(const Guard& guard);

// Whether value is a whole match of grammar g's pattern (GrammarPattern, guard/policy.h), compiled
// once. Not for kNone and kCluster, which have no pattern.
bool MatchesGrammar(Grammar g, std::string_view value);

// The own-jobs rules (GuardOptions::own_user, guard/own_jobs.cc), which Check applies to an argv
// the allowlist approved: nothing when its tokens cannot show a job of another user than `user`,
// otherwise the own-jobs-filter or own-jobs-unfilterable denial.
std::optional<Denial> CheckOwnJobs(const std::string& user, const ProgramPolicy& program,
                                   const std::vector<Token>& tokens);

// Rebuilds an argv from parsed tokens.
std::vector<std::string> Render(const std::vector<Token>& tokens);

// Limits of canonical input.
inline constexpr std::size_t kMaxArgs = 32;       // including argv[0]
inline constexpr std::size_t kMaxArgBytes = 512;  // per argument

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_CHECK_H_

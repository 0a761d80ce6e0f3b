// Properties over whole argv (not only tails), checked with rapidcheck.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "guard/check.h"
#include "guard/oracle.h"
#include "guard/policy.h"

namespace slurm_rca::guard {
namespace {

const Guard& TheGuard() {
  static const Guard guard(GuardOptions{.clusters = {"rca"}});
  return guard;
}

// Every word the policy knows for a program, allowed or refused, plus their prefixes and case
// variants: the tokens most likely to find a disagreement.
std::vector<std::string> Vocabulary(const ProgramPolicy& p) {
  std::vector<std::string> v;
  auto add = [&v](std::string_view s) {
    v.emplace_back(s);
    if (s.size() > 1) v.emplace_back(s.substr(0, s.size() / 2 + 1));
    std::string upper(s);
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    v.push_back(upper);
  };
  for (const OptionSpec& o : p.options) {
    for (std::string_view s : o.spellings) add(s);
  }
  for (const Refusal& r : p.refused_options) {
    for (std::string_view s : r.spellings) add(s);
  }
  for (const VerbSpec& verb : p.verbs) {
    add(verb.word);
    for (const EntitySpec& e : verb.entities) add(e.name);
    for (const Refusal& r : verb.refused_entities) {
      for (std::string_view s : r.spellings) add(s);
    }
    for (const OptionSpec& o : verb.options) {
      for (std::string_view s : o.spellings) add(s);
    }
  }
  for (const Refusal& r : p.refused_words) {
    for (std::string_view s : r.spellings) add(s);
  }
  return v;
}

const std::vector<std::string> kValues = {
    "gpu",   "alice", "%N|%T", "c[1-4]", "now-1hour", "rca", "1234", "-",  "--", "=",
    "/etc/passwd", "x=y", "users=alice", "set", "where", "v0.0.39", "csv,noheader", "ECC",
    "a b", "all", "-r", "-i", "--reset", "update", "show", "config", "0", "name,index"};

rc::Gen<std::string> TokenFor(const ProgramPolicy& p) {
  std::vector<std::string> vocab = Vocabulary(p);
  return rc::gen::weightedOneOf<std::string>({
      {6, rc::gen::elementOf(vocab)},
      {3, rc::gen::elementOf(kValues)},
      {2, rc::gen::map(rc::gen::pair(rc::gen::elementOf(vocab), rc::gen::elementOf(kValues)),
                       [](const std::pair<std::string, std::string>& kv) {
                         return kv.first + "=" + kv.second;
                       })},
      {1, rc::gen::string<std::string>()},
  });
}

// A whole argv: a program (usually allowlisted) and up to 8 tokens.
rc::Gen<std::vector<std::string>> ArgvGen() {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, Programs().size() + 1), [](size_t k) {
    if (k == Programs().size()) {
      return rc::gen::container<std::vector<std::string>>(rc::gen::string<std::string>());
    }
    const ProgramPolicy& p = Programs()[k];
    return rc::gen::map(rc::gen::resize(8, rc::gen::container<std::vector<std::string>>(TokenFor(p))),
                        [name = std::string(p.name)](std::vector<std::string> tail) {
                          tail.insert(tail.begin(), name);
                          return tail;
                        });
  });
}

bool PrintableAscii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f;
  });
}


RC_GTEST_PROP(GuardProperty, AcceptedArgvIsHarmlessToTheIndependentOracle, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  RC_CLASSIFY(v.ok(), "allowed");
  if (v.ok()) {
    std::optional<std::string> harm = oracle::Violation(argv);
    RC_ASSERT(!harm.has_value());
  }
}

RC_GTEST_PROP(GuardProperty, AcceptedArgvIsPrintableAsciiWithinLimits, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  if (!v.ok()) return;
  RC_ASSERT(argv.size() <= kMaxArgs);
  for (const std::string& a : argv) {
    RC_ASSERT(PrintableAscii(a));
    RC_ASSERT(a.size() <= kMaxArgBytes);
    RC_ASSERT(a != "--");
  }
}

RC_GTEST_PROP(GuardProperty, AcceptedArgvRendersBackExactly, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  if (!v.ok()) return;
  RC_ASSERT(Render(v.approved().tokens()) == argv);
  RC_ASSERT(v.approved().argv() == argv);
  // exec_argv is argv, or argv with the policy's injections right after the program name.
  const std::vector<std::string>& exec = v.approved().exec_argv();
  RC_ASSERT(exec.size() >= argv.size());
  RC_ASSERT(exec.front() == argv.front());
  RC_ASSERT(std::equal(argv.begin() + 1, argv.end(), exec.end() - (argv.size() - 1)));
}

RC_GTEST_PROP(GuardProperty, NoMutatingWordPrefixInCommandPosition, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  if (!v.ok()) return;
  const ProgramPolicy* p = FindProgram(argv[0]);
  RC_ASSERT(p != nullptr);
  for (const Token& t : v.approved().tokens()) {
    if (t.kind != Token::Kind::kPositional) continue;
    // The first positional is the command word; no refused word may start with it.
    for (const Refusal& r : p->refused_words) {
      for (std::string_view s : r.spellings) {
        std::string lower = t.spelling;
        std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
        RC_ASSERT(!(s.substr(0, lower.size()) == lower));
      }
    }
    break;
  }
}

RC_GTEST_PROP(GuardProperty, DenialsCarryAKnownRuleAndAPrintableReason, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  if (v.ok()) return;
  const Denial& d = v.denial();
  RC_ASSERT(RuleFromId(RuleId(d.rule)) == d.rule);
  RC_ASSERT(!d.reason.empty());
  RC_ASSERT(PrintableAscii(d.reason));
  RC_ASSERT(d.index >= -1 && d.index < static_cast<int>(argv.size()));
}

RC_GTEST_PROP(GuardProperty, AControlByteAnywhereIsRefused, ()) {
  std::vector<std::string> argv = *ArgvGen();
  if (argv.empty()) return;
  size_t which = *rc::gen::inRange<size_t>(0, argv.size());
  char byte = *rc::gen::element('\0', '\n', '\r', '\t', '\x1b', '\x7f');
  size_t at = *rc::gen::inRange<size_t>(0, argv[which].size() + 1);
  argv[which].insert(argv[which].begin() + at, byte);
  RC_ASSERT(!TheGuard().Check(argv).ok());
}

RC_GTEST_PROP(GuardProperty, AProperPrefixOfAnAcceptedCommandWordIsRefused, ()) {
  std::vector<std::string> argv = *ArgvGen();
  Verdict v = TheGuard().Check(argv);
  if (!v.ok()) return;
  for (size_t i = 1; i < argv.size(); ++i) {
    bool positional = std::any_of(v.approved().tokens().begin(), v.approved().tokens().end(),
                                  [&](const Token& t) {
                                    return t.kind == Token::Kind::kPositional &&
                                           t.spelling == argv[i];
                                  });
    if (!positional || argv[0] == "nvidia-smi" || argv[i].size() < 2) continue;
    if (argv[i] != "show" && argv[i] != "list" && argv[i] != "version" && argv[i] != "ping") {
      continue;
    }
    std::vector<std::string> cut = argv;
    cut[i] = argv[i].substr(0, *rc::gen::inRange<size_t>(1, argv[i].size()));
    RC_ASSERT(!TheGuard().Check(cut).ok());
    break;
  }
}

// The own-jobs view (GuardOptions::own_user): an independent reading of "this argv can show
// another user's job", written from the Slurm and nvidia-smi man pages, not from the guard's
// tables. It is stricter than needed where that is simpler (a word anywhere, not only in its
// position), which is safe: the property is that the guard never approves what it flags.
std::optional<std::string> OwnJobsLeak(const std::vector<std::string>& argv,
                                       const std::string& user) {
  const std::string& program = argv[0];
  auto has = [&](std::initializer_list<std::string_view> words) {
    return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
      return std::find(words.begin(), words.end(), a) != words.end();
    });
  };
  // The values given to a user option, as `-u X` or `--user=X` (detached long values are refused
  // by the guard anyway).
  auto users = [&](std::string_view shrt, std::string_view lng) {
    std::vector<std::string> v;
    for (size_t i = 1; i < argv.size(); ++i) {
      if (argv[i] == shrt && i + 1 < argv.size()) v.push_back(argv[i + 1]);
      const std::string prefix = std::string(lng) + "=";
      if (argv[i].rfind(prefix, 0) == 0) v.push_back(argv[i].substr(prefix.size()));
    }
    return v;
  };
  auto only_user = [&](std::string_view shrt, std::string_view lng) -> std::optional<std::string> {
    std::vector<std::string> v = users(shrt, lng);
    if (v.empty()) return program + " without a user filter";
    for (const std::string& u : v) {
      if (u != user) return program + " for user " + u;
    }
    return std::nullopt;
  };
  if (program == "squeue") return has({"--me"}) ? std::optional<std::string>("squeue --me") : only_user("-u", "--user");
  if (program == "sprio") return only_user("-u", "--user");
  if (program == "sacct") return has({"-a", "--allusers"}) ? std::optional<std::string>("sacct -a") : only_user("-u", "--user");
  if (program == "sshare") return has({"-a", "--all"}) ? std::optional<std::string>("sshare -a") : only_user("-u", "--users");
  if (program == "sdiag") return "sdiag lists RPCs by user";
  // The entity: the word after show/list, skipping options and -M's value.
  auto entity = [&]() -> std::string {
    bool after_verb = false;
    for (size_t i = 1; i < argv.size(); ++i) {
      if (argv[i] == "-M") { ++i; continue; }
      if (!argv[i].empty() && argv[i][0] == '-') continue;
      if (after_verb) return argv[i];
      if (argv[i] == "show" || argv[i] == "list") { after_verb = true; continue; }
      return "";  // another command word
    }
    return "";
  };
  if (program == "scontrol") {
    const std::string e = entity();
    if (e == "job" || e == "step" || e == "assoc_mgr" || e == "burstbuffer") return "scontrol show " + e;
    return std::nullopt;
  }
  if (program == "sacctmgr") {
    if (has({"-s", "--associations", "withassoc", "withcoord"})) return "sacctmgr with associations";
    static const std::set<std::string> kUsers = {"account", "accounts", "assoc", "association", "associations", "user", "users", "wckey", "wckeys", "problem", "problems", "stats", "transaction", "transactions"};
    const std::string e = entity();
    if (kUsers.count(e)) return "sacctmgr show " + e;
    return std::nullopt;
  }
  if (program == "nvidia-smi") {
    for (size_t i = 1; i < argv.size(); ++i) {
      std::string up = argv[i];
      std::transform(up.begin(), up.end(), up.begin(), ::toupper);
      if (up.rfind("--QUERY-COMPUTE-APPS", 0) == 0 || up.rfind("--QUERY-ACCOUNTED-APPS", 0) == 0 ||
          up.find("PIDS") != std::string::npos || up.find("ACCOUNTING") != std::string::npos) {
        return "nvidia-smi process list: " + argv[i];
      }
    }
    if (argv.size() > 1 && argv[1] == "topo") return std::nullopt;
    if (has({"-q", "--query"})) {
      return has({"-d", "--display"}) ? std::nullopt : std::optional<std::string>("nvidia-smi -q without -d");
    }
    for (size_t i = 1; i < argv.size(); ++i) {
      for (std::string_view safe : {"--query-gpu=", "--query-retired-pages=", "--query-remapped-rows=", "--query-supported-clocks="}) {
        if (argv[i].rfind(safe, 0) == 0) return std::nullopt;
      }
    }
    if (has({"-L", "--list-gpus", "-B", "--list-excluded-gpus", "--version", "-h", "--help", "--help-query-gpu", "-u", "--unit"})) return std::nullopt;
    return "nvidia-smi's default table lists processes";
  }
  if (program == "sinfo") return std::nullopt;
  return program + " is not known to the own-jobs oracle";
}

const Guard& OwnJobsGuard() {
  static const Guard guard(GuardOptions{.clusters = {"rca"}, .own_user = "alice"});
  return guard;
}

// ArgvGen, with the caller's filter (or another user's) added half the time so that the job
// programs are approved often enough to matter.
rc::Gen<std::vector<std::string>> OwnJobsArgvGen() {
  return rc::gen::mapcat(ArgvGen(), [](std::vector<std::string> argv) {
    return rc::gen::map(rc::gen::inRange(0, 8), [argv](int k) {
      std::vector<std::string> a = argv;
      if (a.empty()) return a;
      const std::string who = k == 7 ? "bob" : k == 6 ? "alice,bob" : "alice";
      if (k < 2) return a;
      const size_t at = 1 + static_cast<size_t>(k) % a.size();
      const std::string opt = a[0] == "sshare" ? "--users=" : "--user=";
      if (k % 2 == 0) {
        a.insert(a.begin() + static_cast<long>(std::min(at, a.size())), opt + who);
      } else {
        a.insert(a.begin() + static_cast<long>(std::min(at, a.size())), {"-u", who});
      }
      return a;
    });
  });
}

RC_GTEST_PROP(GuardProperty, AnOwnJobsArgvCanNeverShowAnotherUsersJobs, ()) {
  const std::vector<std::string> argv = *OwnJobsArgvGen();
  Verdict v = OwnJobsGuard().Check(argv);
  RC_CLASSIFY(v.ok(), "allowed");
  if (!v.ok()) return;
  const std::optional<std::string> leak = OwnJobsLeak(argv, "alice");
  RC_ASSERT(!leak.has_value());
}

RC_GTEST_PROP(GuardProperty, TheOwnJobsViewOnlyNarrowsTheAllowlist, ()) {
  const std::vector<std::string> argv = *OwnJobsArgvGen();
  Verdict own = OwnJobsGuard().Check(argv);
  Verdict plain = TheGuard().Check(argv);
  if (own.ok()) {
    RC_ASSERT(plain.ok());
    RC_ASSERT(own.approved().exec_argv() == plain.approved().exec_argv());
  } else if (!plain.ok()) {
    // Refused by the allowlist: the same rule, whatever the view.
    RC_ASSERT(own.denial().rule == plain.denial().rule);
  } else {
    RC_ASSERT(own.denial().rule == Rule::kOwnJobsFilter ||
              own.denial().rule == Rule::kOwnJobsUnfilterable);
  }
}

}  // namespace
}  // namespace slurm_rca::guard

// Properties over whole argv (not only tails), checked with rapidcheck.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace slurm_rca::guard

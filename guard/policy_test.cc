#include "guard/policy.h"

#include <gtest/gtest.h>

#include <re2/re2.h>

#include <set>

#include "guard/check.h"

namespace slurm_rca::guard {
namespace {

TEST(PolicyTest, EveryExampleOfEveryProgramHolds) {
  Guard guard(GuardOptions{.clusters = {"rca"}});
  std::vector<std::string> failures = SelfTest(guard);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, first: " << failures.front();
  std::size_t examples = 0, refusals = 0;
  for (const ProgramPolicy& p : Programs()) {
    for (const Example& e : p.examples) (e.rule ? refusals : examples)++;
  }
  EXPECT_GE(examples, 20u);
  EXPECT_GE(refusals, 30u);
}

TEST(PolicyTest, TheProgramsAreExactlyTheReadOnlySet) {
  EXPECT_EQ(AllowedProgramNames(),
            (std::vector<std::string>{"sinfo", "squeue", "sacct", "sdiag", "sprio", "sshare",
                                      "scontrol", "sacctmgr", "nvidia-smi"}));
  for (const Refusal& r : RefusedPrograms()) {
    for (std::string_view s : r.spellings) EXPECT_EQ(FindProgram(s), nullptr) << s;
  }
}

TEST(PolicyTest, NoSpellingIsBothAllowedAndRefused) {
  for (const ProgramPolicy& p : Programs()) {
    std::set<std::string_view> allowed;
    for (const OptionSpec& o : p.options) {
      for (std::string_view s : o.spellings) {
        EXPECT_TRUE(allowed.insert(s).second) << p.name << " lists " << s << " twice";
        EXPECT_TRUE(s.size() >= 2 && s[0] == '-') << p.name << " " << s;
        if (!p.multi_letter_short && s.substr(0, 2) != "--") {
          EXPECT_EQ(s.size(), 2u) << s;
        }
        if (s.substr(0, 2) != "--" && o.arity == Arity::kOptionalAttached) {
          ADD_FAILURE() << p.name << " " << s << ": optional values attach only to long options";
        }
      }
    }
    for (const Refusal& r : p.refused_options) {
      for (std::string_view s : r.spellings) {
        EXPECT_FALSE(allowed.count(s)) << p.name << " both allows and refuses " << s;
      }
      EXPECT_FALSE(r.reason.empty());
    }
  }
}

TEST(PolicyTest, NoAllowedWordIsAPrefixOfARefusedOne) {
  for (const ProgramPolicy& p : Programs()) {
    for (const VerbSpec& v : p.verbs) {
      for (const Refusal& r : p.refused_words) {
        for (std::string_view s : r.spellings) {
          EXPECT_FALSE(s.substr(0, v.word.size()) == v.word)
              << p.name << ": allowed '" << v.word << "' is a prefix of refused '" << s << "'";
        }
      }
    }
  }
}

TEST(PolicyTest, NoGrammarAcceptsADashFirstASlashOrASpaceInANameOrOperand) {
  Guard guard(GuardOptions{.clusters = {"rca"}});
  // Probe every value grammar through a real option that uses it.
  for (const ProgramPolicy& p : Programs()) {
    for (const OptionSpec& o : p.options) {
      if (o.arity == Arity::kNone || o.grammar == Grammar::kCluster) continue;
      std::string spelling(o.spellings.back());
      for (const std::string bad : {"-x", "a/b", "/etc/passwd", "$(id)", "a;b", "a`b`"}) {
        std::vector<std::string> argv = {std::string(p.name)};
        if (spelling.substr(0, 2) == "--") {
          argv.push_back(spelling + "=" + bad);
        } else {
          argv.push_back(spelling);
          argv.push_back(bad);
        }
        EXPECT_FALSE(guard.Check(argv).ok()) << p.name << " " << spelling << " " << bad;
      }
    }
  }
}

TEST(PolicyTest, EveryGrammarCompiles) {
  for (Grammar g : {Grammar::kName, Grammar::kNameList, Grammar::kFormat, Grammar::kTime,
                    Grammar::kSort, Grammar::kDelimiter, Grammar::kDataParser, Grammar::kGpuId,
                    Grammar::kGpuDisplay, Grammar::kGpuFields, Grammar::kGpuFormat,
                    Grammar::kOperand, Grammar::kKeyValue}) {
    RE2 re(std::string(GrammarPattern(g)), RE2::Quiet);
    EXPECT_TRUE(re.ok()) << GrammarName(g) << ": " << re.error();
    EXPECT_FALSE(GrammarPattern(g).empty()) << GrammarName(g);
  }
}

TEST(PolicyTest, RuleIdsRoundTripAndAreUnique) {
  std::set<std::string_view> ids;
  for (Rule r : AllRules()) {
    std::string_view id = RuleId(r);
    EXPECT_TRUE(ids.insert(id).second) << id;
    EXPECT_EQ(RuleFromId(id), r);
  }
  EXPECT_EQ(ids.size(), 34u);
  EXPECT_FALSE(RuleFromId("no-such-rule").has_value());
}

}  // namespace
}  // namespace slurm_rca::guard

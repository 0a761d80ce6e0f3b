#include "guard/check.h"

#include <gtest/gtest.h>

#include <type_traits>

#include "guard/policy.h"

namespace slurm_rca::guard {
namespace {

// Approved can come only from Guard::Check(): no public way to build one from an argv.
static_assert(!std::is_default_constructible_v<Approved>);
static_assert(!std::is_constructible_v<Approved, std::vector<std::string>>);
static_assert(!std::is_constructible_v<Approved, std::vector<std::string>,
                                       std::vector<std::string>, std::vector<Token>>);
static_assert(!std::is_default_constructible_v<Verdict>);
static_assert(!std::is_constructible_v<Verdict, Denial>);

Verdict Check(std::vector<std::string> argv, std::vector<std::string> clusters = {"rca"}) {
  return Guard(GuardOptions{.clusters = std::move(clusters)}).Check(argv);
}

TEST(CheckTest, AllowsAReadAndKeepsTheArgv) {
  Verdict v = Check({"sinfo", "-N", "--noheader", "-o", "%N|%T"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  EXPECT_EQ(v.approved().program(), "sinfo");
  EXPECT_EQ(v.approved().argv(), (std::vector<std::string>{"sinfo", "-N", "--noheader", "-o", "%N|%T"}));
  EXPECT_EQ(v.approved().exec_argv(), v.approved().argv());
}

TEST(CheckTest, RenderRebuildsTheArgvFromTokens) {
  std::vector<std::string> argv = {"sacct", "-a", "--format=JobID,State", "-S", "now-1hour",
                                   "--json"};
  Verdict v = Check(argv);
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  EXPECT_EQ(Render(v.approved().tokens()), argv);
  ASSERT_EQ(v.approved().tokens().size(), 5u);
  EXPECT_EQ(v.approved().tokens()[2].kind, Token::Kind::kAttached);
  EXPECT_EQ(v.approved().tokens()[2].value, "JobID,State");
  EXPECT_EQ(v.approved().tokens()[3].kind, Token::Kind::kOption);
  EXPECT_EQ(v.approved().tokens()[3].value, "now-1hour");
}

TEST(CheckTest, SacctmgrAlwaysRunsReadonly) {
  Verdict v = Check({"sacctmgr", "show", "qos"});
  ASSERT_TRUE(v.ok()) << v.denial().ToString();
  EXPECT_EQ(v.approved().exec_argv(),
            (std::vector<std::string>{"sacctmgr", "--readonly", "show", "qos"}));
  EXPECT_EQ(v.approved().argv(), (std::vector<std::string>{"sacctmgr", "show", "qos"}));

  Verdict given = Check({"sacctmgr", "-r", "show", "qos"});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given.approved().exec_argv(),
            (std::vector<std::string>{"sacctmgr", "-r", "show", "qos"}));
}

TEST(CheckTest, DenialNamesRuleIndexAndAnActionableReason) {
  Verdict v = Check({"scontrol", "-o", "upd", "NodeName=c1"});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.denial().rule, Rule::kAbbreviatedWord);
  EXPECT_EQ(v.denial().index, 2);
  EXPECT_NE(v.denial().reason.find("update"), std::string::npos) << v.denial().reason;
  EXPECT_EQ(v.denial().ToString().rfind("DENIED abbreviated-word: ", 0), 0u);
}

TEST(CheckTest, ReasonForAbbreviatedOptionNamesWhatItExpandsTo) {
  Verdict v = Check({"sdiag", "--res"});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.denial().rule, Rule::kAbbreviatedOption);
  EXPECT_NE(v.denial().reason.find("--reset"), std::string::npos) << v.denial().reason;
}

TEST(CheckTest, ClusterOptionNeedsAConfiguredName) {
  EXPECT_TRUE(Check({"sinfo", "-M", "rca"}).ok());
  EXPECT_TRUE(Check({"sinfo", "-M", "a,b"}, {"a", "b"}).ok());
  Verdict none = Check({"sinfo", "-M", "rca"}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.denial().rule, Rule::kUnknownCluster);
  EXPECT_NE(none.denial().reason.find("no cluster names are configured"), std::string::npos);
  Verdict all = Check({"sinfo", "-M", "all"});
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.denial().reason.find("every cluster"), std::string::npos);
}

TEST(CheckTest, ControlBytesAreNamedNotEchoed) {
  Verdict v = Check({"squeue", "-u", std::string("a\0b", 3)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.denial().rule, Rule::kControlByte);
  EXPECT_NE(v.denial().reason.find("NUL"), std::string::npos);
  for (unsigned char c : v.denial().reason) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
}

TEST(CheckTest, LimitsAreInclusive) {
  std::vector<std::string> argv = {"sinfo"};
  std::string longest(kMaxArgBytes, 'a');
  argv.push_back("-p");
  argv.push_back(longest.substr(0, 256));  // the name-list grammar caps at 256
  EXPECT_TRUE(Check(argv).ok()) << Check(argv).denial().ToString();
  Verdict too_long = Check({"sinfo", "-o", std::string(kMaxArgBytes + 1, 'a')});
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.denial().rule, Rule::kArgTooLong);
}

TEST(CheckTest, NvidiaSmiTopoMatrixIsNotTheClockMode) {
  EXPECT_TRUE(Check({"nvidia-smi", "topo", "-m"}).ok());
  Verdict top = Check({"nvidia-smi", "-m", "1"});
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.denial().rule, Rule::kMutatingOption);
}

TEST(CheckTest, CheckIsDeterministic) {
  Guard guard(GuardOptions{.clusters = {"rca"}});
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"scontrol", "u"}, {"sinfo"}, {"sacct", "-f", "x"}, {"nvidia-smi", "-r"}}) {
    Verdict a = guard.Check(argv);
    Verdict b = guard.Check(argv);
    ASSERT_EQ(a.ok(), b.ok());
    if (!a.ok()) {
      EXPECT_EQ(a.denial().rule, b.denial().rule);
      EXPECT_EQ(a.denial().reason, b.denial().reason);
    }
  }
}

}  // namespace
}  // namespace slurm_rca::guard

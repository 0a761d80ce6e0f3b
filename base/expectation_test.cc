// The refusal-corpus format (base/expectation.h): headers, sidecars, line cases, malformed
// headers as errors with their line, and the one-to-one pairing of Mismatch.
#include "base/expectation.h"

#include <gtest/gtest.h>

namespace slurm_rca::base {
namespace {

std::string ErrorOf(std::string_view text, const ExpectationOptions& o = {}) {
  Result<Expectation> r = ParseExpectation(text, "case.yaml", o);
  return r.ok() ? "(parsed)" : r.status().message();
}

TEST(Expectation, AHeaderOfDenyLinesSettingsAndComments) {
  Result<Expectation> r = ParseExpectation(
      "# deny chain-start at 12\n"
      "# the first hop is not at 0: a free comment\n"
      "#deny unknown-key\n"
      "# deny at 2 'confidence 1.5 is outside [0, 1]'\n"
      "# deny \"kind must be \\\"agent\\\"\"\n"
      "# why: a test\n"
      "#   profile:  claude-code  \n"
      "id: S06\n"
      "# deny not-read: the header ended above\n",
      "case.yaml", {.settings = {"profile"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->allow);
  ASSERT_EQ(r->deny.size(), 4u);
  EXPECT_EQ(r->deny[0].rule, "chain-start");
  EXPECT_EQ(r->deny[0].line, 12);
  EXPECT_EQ(r->deny[1].rule, "unknown-key");
  EXPECT_EQ(r->deny[1].line, 0);
  EXPECT_EQ(r->deny[2].rule, "");
  EXPECT_EQ(r->deny[2].line, 2);
  EXPECT_EQ(r->deny[2].text, "confidence 1.5 is outside [0, 1]");
  EXPECT_EQ(r->deny[3].text, "kind must be \"agent\"");
  EXPECT_EQ(r->settings.at("why"), "a test");
  EXPECT_EQ(r->settings.at("profile"), "claude-code");
  EXPECT_EQ(r->Rules(), (std::set<std::string>{"chain-start", "unknown-key"}));
  // ToString writes a deny line back in the header's words.
  for (const ExpectedDiagnostic& e : r->deny) {
    Result<Expectation> back = ParseExpectation("# " + e.ToString() + "\n", "x");
    ASSERT_TRUE(back.ok()) << e.ToString();
    EXPECT_EQ(back->deny[0].rule, e.rule);
    EXPECT_EQ(back->deny[0].line, e.line);
    EXPECT_EQ(back->deny[0].text, e.text);
  }
}

TEST(Expectation, AllowAndSidecars) {
  Result<Expectation> r =
      ParseExpectation("# a clean case\n# allow\n", "ok/expect", {.sidecar = true});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->allow);
  EXPECT_TRUE(r->deny.empty());
  // A sidecar may hold blank lines, but nothing that is not a '#' line.
  EXPECT_TRUE(ParseExpectation("\n# deny x\n\n", "s", {.sidecar = true}).ok());
  EXPECT_EQ(ErrorOf("# deny x\nrule: x\n", {.sidecar = true}),
            "case.yaml:2: a sidecar holds only '#' lines");
}

TEST(Expectation, MalformedHeadersAreErrorsWithTheirLine) {
  EXPECT_EQ(ErrorOf("id: S06\n"),
            "case.yaml: no '# deny ...' or '# allow' line says what to expect");
  EXPECT_EQ(ErrorOf("# only a comment\n"),
            "case.yaml: no '# deny ...' or '# allow' line says what to expect");
  EXPECT_EQ(ErrorOf("# deny\n"), "case.yaml:1: 'deny' needs a rule id or a quoted message text");
  EXPECT_EQ(ErrorOf("# x\n# deny Chain\n"),
            "case.yaml:2: 'Chain' is not a rule id (lowercase letters, digits, '-'); quote a "
            "message text");
  EXPECT_EQ(ErrorOf("# deny x at\n"), "case.yaml:1: 'at' needs a line number from 1, not ''");
  EXPECT_EQ(ErrorOf("# deny x at 0\n"), "case.yaml:1: 'at' needs a line number from 1, not '0'");
  EXPECT_EQ(ErrorOf("# deny x at 3x\n"), "case.yaml:1: 'at' needs a line number from 1, not '3x'");
  EXPECT_EQ(ErrorOf("# deny x near 3\n"),
            "case.yaml:1: expected 'at LINE' or a quoted text, not 'near'");
  EXPECT_EQ(ErrorOf("# deny x at 3 text\n"), "case.yaml:1: expected a quoted text, not 'text'");
  EXPECT_EQ(ErrorOf("# deny 'unterminated\n"), "case.yaml:1: unterminated '");
  EXPECT_EQ(ErrorOf("# deny 'a' b\n"), "case.yaml:1: text after the closing quote: ' b'");
  EXPECT_EQ(ErrorOf("# deny ''\n"), "case.yaml:1: an empty quoted text matches every message");
  EXPECT_EQ(ErrorOf("# allow\n# deny x\n"), "case.yaml:1: 'allow' and 'deny' in one case");
  EXPECT_EQ(ErrorOf("# allow\n# allow\n"), "case.yaml:2: a second 'allow'");
  EXPECT_EQ(ErrorOf("# allow everything\n"), "case.yaml:1: 'allow' takes nothing after it");
  // The old scenario header, and a misspelt setting, are not comments.
  EXPECT_EQ(ErrorOf("# rule: chain-start\n"),
            "case.yaml:1: unknown setting 'rule' (this corpus reads: why)");
  EXPECT_EQ(ErrorOf("# deny x\n# profle: spec\n", {.settings = {"profile"}}),
            "case.yaml:2: unknown setting 'profle' (this corpus reads: why, profile)");
  EXPECT_EQ(ErrorOf("# deny x\n# why:\n"), "case.yaml:2: 'why:' without a value");
  EXPECT_EQ(ErrorOf("# deny x\n# why: a\n# why: b\n"), "case.yaml:3: a second 'why:'");
}

TEST(Expectation, LineCases) {
  Result<LineCase> c = ParseLineCase("deny mutating-word    scontrol update NodeName=x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->expect.deny.size(), 1u);
  EXPECT_EQ(c->expect.deny[0].rule, "mutating-word");
  EXPECT_EQ(c->input, "scontrol update NodeName=x");
  c = ParseLineCase("  allow\tsinfo -N");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->expect.allow);
  EXPECT_EQ(c->input, "sinfo -N");
  c = ParseLineCase("deny interactive-mode");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->input, "");
  EXPECT_EQ(ParseLineCase("maybe sinfo").status().message(),
            "a case starts with 'allow' or 'deny <rule-id>', not 'maybe'");
  EXPECT_EQ(ParseLineCase("deny").status().message(), "'deny' needs a rule id, not ''");
  EXPECT_EQ(ParseLineCase("deny Bad sinfo").status().message(),
            "'deny' needs a rule id, not 'Bad'");
}

TEST(Expectation, MismatchPairsOneToOne) {
  auto diag = [](std::string rule, int line, std::string message) {
    return Diagnostic{.file = "f", .line = line, .rule = rule, .message = message};
  };
  Expectation e = *ParseExpectation("# deny wrong-type\n# deny wrong-type at 7\n", "x");
  // The loose expectation must not take the diagnostic the exact one needs, whatever the order.
  EXPECT_EQ(Mismatch(e, {diag("wrong-type", 7, "a"), diag("wrong-type", 9, "b")}), std::nullopt);
  EXPECT_EQ(Mismatch(e, {diag("wrong-type", 9, "b"), diag("wrong-type", 7, "a")}), std::nullopt);
  // Counts are exact: a third diagnostic of the rule is extra, a missing one is missing.
  EXPECT_EQ(*Mismatch(e, {diag("wrong-type", 7, "a"), diag("wrong-type", 8, "b"),
                          diag("wrong-type", 9, "c")}),
            "produced, not expected: f:9: wrong-type: c");
  EXPECT_EQ(*Mismatch(e, {diag("wrong-type", 8, "b")}),
            "expected, not produced: deny wrong-type at 7");
  EXPECT_EQ(
      *Mismatch(e, {}),
      "expected, not produced: deny wrong-type\nexpected, not produced: deny wrong-type at 7");
  // Message text, for formats without rule ids.
  Expectation t = *ParseExpectation("# deny at 2 'outside [0, 1]'\n", "x");
  EXPECT_EQ(Mismatch(t, {diag("", 2, "confidence 1.5 is outside [0, 1]")}), std::nullopt);
  EXPECT_TRUE(Mismatch(t, {diag("", 3, "confidence 1.5 is outside [0, 1]")}));
  EXPECT_TRUE(Mismatch(t, {diag("", 2, "confidence must be a number")}));
  // allow: nothing at all.
  Expectation a = *ParseExpectation("# allow\n", "x");
  EXPECT_EQ(Mismatch(a, {}), std::nullopt);
  EXPECT_EQ(*Mismatch(a, {diag("x", 1, "m")}),
            "expected no diagnostic\nproduced, not expected: f:1: x: m");
}

}  // namespace
}  // namespace slurm_rca::base

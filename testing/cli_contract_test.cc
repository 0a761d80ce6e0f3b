// CLI contract cases: the parser (keys, quoting, variables, malformed files), and the runner on
// small system programs: a case whose expectation is wrong fails with what it got, a hang is
// killed at its timeout, stdin reaches the child.
#include "testing/cli_contract.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

namespace slurm_rca::testing {
namespace {

const std::map<std::string, std::string> kVars = {{"BIN", "/bin"}, {"TMP", "/tmp/x y"}};

std::vector<CliCase> Parse(std::string_view text) {
  auto r = ParseCliCases(text, "t.cases", kVars);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<CliCase>{};
}

std::string ErrorOf(std::string_view text) {
  auto r = ParseCliCases(text, "t.cases", kVars);
  return r.ok() ? "(parsed)" : r.status().message();
}

std::vector<std::string> RunCase(const CliCase& c) {
  signal(SIGPIPE, SIG_IGN);
  return CheckCli(c, RunCli(c));
}

TEST(CliContractParse, RecordsKeysQuotingAndVariables) {
  std::vector<CliCase> cases = Parse(
      "# a comment\n"
      "case: first\n"
      "run: ${BIN}/echo 'a b' --dir=${TMP}/lab \"tab\\there\"\n"
      "exit: 0\n"
      "stdout: one line\n"
      "stderr: empty\n"
      "stdout contains: a b\n"
      "stdout contains: \"trailing \"\n"
      "stderr contains: '\"rule\":\"x\"'\n"
      "stderr contains: \"say \\\"hi\\\"\"\n"
      "absent: ${TMP}/lab\n"
      "\n"
      "case: second\n"
      "run: ${BIN}/cat\n"
      "stdin: {\"jsonrpc\":\"2.0\"}\n"
      "stdin: [1]\n"
      "exit: 3\n"
      "stdout: 2 lines\n"
      "stdout lines start with: {\"\n"
      "stderr contains: x: y\n"
      "timeout: 2.5\n");
  ASSERT_EQ(cases.size(), 2u);
  const CliCase& a = cases[0];
  EXPECT_EQ(a.Where(), "t.cases:2");
  EXPECT_EQ(a.description, "first");
  EXPECT_EQ(a.argv,
            (std::vector<std::string>{"/bin/echo", "a b", "--dir=/tmp/x y/lab", "tab\there"}));
  EXPECT_EQ(a.stdout_lines, 1);
  EXPECT_EQ(a.stderr_lines, 0);
  EXPECT_EQ(a.stdout_contains, (std::vector<std::string>{"a b", "trailing "}));
  EXPECT_EQ(a.stderr_contains, (std::vector<std::string>{"\"rule\":\"x\"", "say \"hi\""}));
  EXPECT_EQ(a.absent, std::vector<std::string>{"/tmp/x y/lab"});
  EXPECT_EQ(a.timeout_s, 60);
  const CliCase& b = cases[1];
  EXPECT_EQ(b.stdin_text, "{\"jsonrpc\":\"2.0\"}\n[1]\n");
  EXPECT_EQ(b.exit_code, 3);
  EXPECT_EQ(b.stdout_lines, 2);
  EXPECT_FALSE(b.stderr_lines);
  EXPECT_EQ(b.stdout_line_prefix, "{\"");
  EXPECT_EQ(b.stderr_contains, std::vector<std::string>{"x: y"});
  EXPECT_EQ(b.timeout_s, 2.5);
}

TEST(CliContractParse, MalformedFilesNameTheLine) {
  EXPECT_EQ(ErrorOf("run: /bin/true\n"), "t.cases:1: 'run:' before the first 'case:'");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\n"), "t.cases:1: the case 'a' has no 'exit:'");
  EXPECT_EQ(ErrorOf("case: a\nexit: 0\n"), "t.cases:1: the case 'a' has no 'run:'");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\nstdout has: x\n"),
            "t.cases:4: unknown key 'stdout has'");
  EXPECT_EQ(ErrorOf("case: a\nrun: ${NOPE}/x\nexit: 0\n"),
            "t.cases:2: unknown variable ${NOPE} (known: BIN, TMP)");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true 'x\nexit: 0\n"), "t.cases:2: unterminated '");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: two\n"),
            "t.cases:3: 'exit:' takes a number, not 'two'");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\nstdout: some\n"),
            "t.cases:4: 'stdout:' takes empty, one line or N lines, not 'some'");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\nstdout contains: 'a' 'b'\n"),
            "t.cases:4: a value that starts with a quote must be one quoted text; quote the whole "
            "value");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\nstdout contains: \"rule\":\"x\"\n"),
            "t.cases:4: a value that starts with a quote must be one quoted text; quote the whole "
            "value");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\nstdout contains: \"a\n"),
            "t.cases:4: a value that starts with a quote must be one quoted text; quote the whole "
            "value");
  EXPECT_EQ(ErrorOf("case: a\nrun: /bin/true\nexit: 0\ntimeout: 0\n"),
            "t.cases:4: 'timeout:' takes seconds, not '0'");
  EXPECT_EQ(ErrorOf("case:\n"), "t.cases:1: a case needs a description");
  EXPECT_EQ(ErrorOf("case: a\nrun:\nexit: 0\n"), "t.cases:2: 'run:' needs an argv");
  EXPECT_EQ(ErrorOf("case: a\nno colon here\n"), "t.cases:2: expected 'key: value'");
}

TEST(CliContractRun, PassingCasesPass) {
  for (const CliCase& c : Parse("case: true\nrun: /bin/true\nexit: 0\nstdout: empty\n"
                                "stderr: empty\n"
                                "case: false\nrun: /bin/false\nexit: 1\n"
                                "case: stdin reaches the child\nrun: /bin/cat\n"
                                "stdin: {\"a\":1}\nstdin: {\"b\":2}\nexit: 0\nstdout: 2 lines\n"
                                "stdout lines start with: {\"\nstdout contains: {\"b\":2}\n"
                                "case: stderr\nrun: /bin/ls /nonexistent/path\nexit: 2\n"
                                "stdout: empty\nstderr: one line\n"
                                "stderr contains: /nonexistent/path\n"
                                "absent: /nonexistent/path\n")) {
    EXPECT_EQ(RunCase(c), std::vector<std::string>{}) << c.description;
  }
}

// The runner's self-test: each of these expectations is wrong, so each case must fail, saying
// what it got.
TEST(CliContractRun, WrongExpectationsFailWithWhatTheyGot) {
  std::vector<CliCase> cases = Parse(
      "case: wrong exit\nrun: /bin/false\nexit: 0\n"
      "case: missing text\nrun: /bin/echo hello\nexit: 0\nstdout contains: goodbye\n"
      "case: wrong line count\nrun: /bin/echo hello\nexit: 0\nstdout: empty\n"
      "case: wrong stream\nrun: /bin/echo hello\nexit: 0\nstderr contains: hello\n"
      "case: a prefix\nrun: /bin/echo hello\nexit: 0\nstdout lines start with: {\n"
      "case: exists\nrun: /bin/true\nexit: 0\nabsent: /bin\n"
      "case: not installed\nrun: /nonexistent/binary\nexit: 0\n"
      "case: a hang\nrun: /bin/sleep 30\nexit: 0\ntimeout: 0.3\n");
  ASSERT_EQ(cases.size(), 8u);
  std::vector<std::string> first = RunCase(cases[0]);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0], "exit 1, want 0");
  EXPECT_EQ(first[1], "stdout: (empty)");
  EXPECT_EQ(RunCase(cases[1])[0], "stdout lacks 'goodbye'");
  EXPECT_EQ(RunCase(cases[1])[1], "stdout: hello");
  EXPECT_EQ(RunCase(cases[2])[0], "stdout: 1 line(s), want 0");
  EXPECT_EQ(RunCase(cases[3])[0], "stderr lacks 'hello'");
  EXPECT_EQ(RunCase(cases[4])[0], "a stdout line does not start with '{': hello");
  EXPECT_EQ(RunCase(cases[5])[0], "/bin exists after the run");
  EXPECT_EQ(
      RunCase(cases[6]),
      std::vector<std::string>{"could not run: /nonexistent/binary: No such file or directory"});
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> hang = RunCase(cases[7]);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ASSERT_FALSE(hang.empty());
  EXPECT_EQ(hang[0].find("still running after 0.3"), 0u) << hang[0];
}

}  // namespace
}  // namespace slurm_rca::testing

// CLI contract cases: what a command line must do, as plain-text records that the program
// `cli_contract` runs (tests/cli/*.cases; the format is in testing/README.md, "CLI contract
// cases"). Each case runs one argv as a child process, never through a shell, and checks its
// exit code and what it wrote:
//
//   case: check denied
//   run: ${SLURM_GUARD} check -- sdiag --reset
//   exit: 1
//   stdout contains: "DENIED mutating-option: "
//
//   auto cases = ParseCliCases(text, "x.cases", {{"SLURM_GUARD", path}});
//   CliOutcome o = RunCli(cases->front());
//   std::vector<std::string> failures = CheckCli(cases->front(), o);  // empty: it passed
//
// Refused when parsing: an unknown key, a case without run: or exit:, an unknown ${VAR}, a
// quoted value that is not one quoted word. Linked by tests only.
//
// Apart from the refusal corpora (base/corpus.h) on purpose: a case here pins a process's exit
// code and output, not a diagnostic with a rule and a line, so neither format can carry the other
// (testing/README.md, "What stays apart, and why"); hence CliCase, never CorpusCase.
#ifndef SLURM_RCA_TESTING_CLI_CONTRACT_H_
#define SLURM_RCA_TESTING_CLI_CONTRACT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace slurm_rca::testing {

struct CliCase {
  std::string file;
  int line = 0;                   // of its `case:` line
  std::string description;        // case:
  std::vector<std::string> argv;  // run:, variables substituted in each word
  std::string stdin_text;         // stdin: lines, each ended by a newline; "" gives EOF at once
  int exit_code = 0;              // exit:
  std::optional<int> stdout_lines, stderr_lines;  // stdout: / stderr: empty, one line, N lines
  std::vector<std::string> stdout_contains, stderr_contains;
  std::string stdout_line_prefix;   // stdout lines start with:
  std::vector<std::string> absent;  // paths that must not exist after the run
  double timeout_s = 60;            // timeout: past it the process group is killed; a failure
  std::string Where() const { return file + ":" + std::to_string(line); }
};

// Parses a case file; vars are the ${NAME}s it may use. Errors name "file:line".
base::Result<std::vector<CliCase>> ParseCliCases(std::string_view text, std::string_view file,
                                                 const std::map<std::string, std::string>& vars);

struct CliOutcome {
  bool started = false;  // false: argv[0] could not be run (error says why)
  std::string error;
  int exit_code = -1;  // the exit status, or 128 + the signal that killed it (as a shell says)
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
};

// Runs c.argv with c.stdin_text as its stdin, in its own process group, and reads both outputs
// until it exits or c.timeout_s passes (then the group is killed). Needs SIGPIPE ignored.
CliOutcome RunCli(const CliCase& c);

// What is wrong with the outcome, one item per failed check; empty when the case passed.
// Line counts are taken as a shell's $(...) takes output: trailing newlines do not count.
std::vector<std::string> CheckCli(const CliCase& c, const CliOutcome& o);

}  // namespace slurm_rca::testing

#endif  // SLURM_RCA_TESTING_CLI_CONTRACT_H_

// Expectations: the one format of every corpus that says "this input must be refused with this
// rule" (the guard's argv lines, broken scenarios, graphs, submissions, skills and agent
// configurations), in the spirit of DuckDB's sqllogictest. The whole format is in
// testing/README.md ("Refusal corpora"); in short, a case says what its input must produce:
//
//   # deny chain-start at 12                   one diagnostic: rule chain-start on line 12
//   # deny unknown-key                         one more: rule unknown-key, on any line
//   # deny at 2 'confidence 1.5 is outside'    a format without rule ids: line and message text
//   # why: the first hop is not at 0           a setting (why: always; others the corpus declares)
//   # allow                                    or: the input must produce no diagnostic at all
//
// Those lines are the header of an input file (its leading '#' lines; later ones are the
// input's own comments), or the whole of a sidecar file (`NAME.expect`, `CASE/expect`) where the
// input cannot carry comments. Other '#' lines of a header are free comments. A line corpus
// writes one case per line with the same words and its input after them:
//
//   deny mutating-word    scontrol update NodeName=gpu-01 State=DRAIN
//   allow                 sinfo -N
//
// A case passes when its diagnostics and its deny lines pair up one to one (Mismatch). Errors
// are values: a malformed header is a Status naming the file and line, never a skipped case.
#ifndef SLURM_RCA_BASE_EXPECTATION_H_
#define SLURM_RCA_BASE_EXPECTATION_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "base/status.h"

namespace slurm_rca::base {

// One diagnostic a case must produce. Each field left empty matches anything.
struct ExpectedDiagnostic {
  std::string rule;  // a rule id; "" for formats without rule ids
  int line = 0;      // 1-based; 0: any line
  std::string text;  // a substring of the message; "": any message
  bool Matches(const Diagnostic& d) const;
  // Back in the header's words: "chain-start at 12 'text'".
  std::string ToString() const;
};

struct Expectation {
  bool allow = false;                           // must produce no diagnostic
  std::vector<ExpectedDiagnostic> deny;         // otherwise exactly these, in any order
  std::map<std::string, std::string> settings;  // `key: value` lines, `why` included
  // Every rule the deny lines name, for "every rule has a case" checks.
  std::set<std::string> Rules() const;
};

struct ExpectationOptions {
  // Setting keys the corpus reads besides `why` (skills: profile, path). Any other `key:` line
  // is an error, so a misspelt setting cannot pass as a comment.
  std::set<std::string> settings;
  // A sidecar: every non-blank line must be a header line. Otherwise the header is the leading
  // run of '#' lines and parsing stops at the first other line.
  bool sidecar = false;
};

// Reads the header of text; file names it in errors ("file:LINE: reason"). Refused: no deny or
// allow line, both, a deny with neither rule nor text, `at` without a positive line number, a
// rule id outside [a-z0-9-], an unterminated or trailing quote, an unknown or repeated setting.
Result<Expectation> ParseExpectation(std::string_view text, std::string_view file,
                                     const ExpectationOptions& options = {});

// One case of a line corpus: "deny RULE INPUT" or "allow INPUT"; the input may be empty.
struct LineCase {
  Expectation expect;
  std::string input;  // the rest of the line, from its first non-blank character
};
// Parses one line that is neither blank nor a comment; an error names what is wrong (without a
// file or line: the caller knows them).
Result<LineCase> ParseLineCase(std::string_view line);

// nullopt when got pairs up with the expectation one to one; otherwise what is missing and what
// is extra, on one line per item, for a person fixing the case.
std::optional<std::string> Mismatch(const Expectation& expect, const std::vector<Diagnostic>& got);

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_EXPECTATION_H_

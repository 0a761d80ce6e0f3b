// An argv as one line of text, the way the corpora and the contract cases write it: words split
// on spaces and tabs; '...' is literal; "..." and bare words take the escapes \\ \" \' \n \r \t
// \e \0 \<space> and \xHH (any byte). Files are UTF-8, so a lookalike dash can be written as is
// or as \xe2\x80\x93.
//
//   base::Result<std::vector<std::string>> argv =
//       base::ParseArgvLine(R"(squeue -u "a\0b" 'x y')");                   // 4 words
//   base::FormatArgv({"sinfo", "a b"}) == R"(sinfo "a b")"                  // reads back
//
// Used by the guard corpus (guard/corpus.h), the captures of scenarios/live and the CLI contract
// cases (testing/cli_contract.h).
#ifndef SLURM_RCA_BASE_ARGV_LINE_H_
#define SLURM_RCA_BASE_ARGV_LINE_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace slurm_rca::base {

// Splits one argv line. An invalid argument whose message names what is wrong: an unterminated
// quote, an unknown escape, \x without two hex digits, a backslash at the end.
Result<std::vector<std::string>> ParseArgvLine(std::string_view line);

// Renders an argv for people: words separated by spaces, quoted when they hold anything but
// [A-Za-z0-9_.,:%=+@/-[]], with non-printable bytes as \xHH. ParseArgvLine reads it back.
std::string FormatArgv(const std::vector<std::string>& argv);

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_ARGV_LINE_H_

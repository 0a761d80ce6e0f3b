// Data-driven guard corpora: plain-text files of argv and the verdict each must get.
//
// One case per line; '#' starts a comment line; blank lines are ignored:
//
//   allow                     sinfo -N --noheader
//   deny mutating-word        scontrol update NodeName=gpu-01 State=DRAIN
//   deny control-byte         squeue -u "a\0b"
//
// The argv is split on spaces and tabs. '...' is literal; "..." and bare words take the escapes
// \\ \" \' \n \r \t \e \0 and \xHH (any byte). Files are UTF-8, so a lookalike dash can be
// written as is or as \xe2\x80\x93. Adding a case never needs a recompile.
#ifndef SLURM_RCA_GUARD_CORPUS_H_
#define SLURM_RCA_GUARD_CORPUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guard/check.h"

namespace slurm_rca::guard {

struct CorpusCase {
  std::string file;
  int line = 0;
  std::vector<std::string> argv;
  std::optional<Rule> expected;  // nullopt: must be allowed
};

struct CorpusLoad {
  std::vector<CorpusCase> cases;
  std::string error;  // "file:line: reason"; empty on success
  bool ok() const { return error.empty(); }
};

// Splits one argv line; on failure returns nullopt and sets *error.
std::optional<std::vector<std::string>> ParseArgvLine(std::string_view line, std::string* error);

// Loads one corpus file, or every *.txt file of a directory in name order.
CorpusLoad LoadCorpus(const std::string& path);

struct CorpusReport {
  std::size_t cases = 0;
  std::size_t allowed = 0;  // expected allow, got allow
  std::size_t denied = 0;   // expected deny with that rule, got it
  std::vector<std::string> mismatches;  // "file:line: expected ..., got ..."
  bool ok() const { return mismatches.empty(); }
};

CorpusReport RunCorpus(const Guard& guard, const std::vector<CorpusCase>& cases);

// Renders an argv for people: words separated by spaces, quoted when they hold anything but
// [A-Za-z0-9_.,:%=+@/-], with non-printable bytes as \xHH. ParseArgvLine reads it back.
std::string FormatArgv(const std::vector<std::string>& argv);

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_CORPUS_H_

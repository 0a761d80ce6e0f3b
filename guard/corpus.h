// Data-driven guard corpora: plain-text files of argv and the verdict each must get, in the
// line form of the refusal-corpus format (base/expectation.h, testing/README.md).
//
// One case per line; '#' starts a comment line; blank lines are ignored:
//
//   allow                     sinfo -N --noheader
//   deny mutating-word        scontrol update NodeName=gpu-01 State=DRAIN
//   deny control-byte         squeue -u "a\0b"
//
// The argv is written as base/argv_line.h reads it: split on spaces and tabs, '...' literal,
// "..." and bare words with escapes. Adding a case never needs a recompile. guard_test runs the
// corpus through the one corpus runner (testing/corpus.h); `slurm-guard corpus` through
// RunCorpus below, which counts verdicts for its one-line report.
#ifndef SLURM_RCA_GUARD_CORPUS_H_
#define SLURM_RCA_GUARD_CORPUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/argv_line.h"
#include "base/status.h"
#include "guard/check.h"

namespace slurm_rca::guard {

struct CorpusCase {
  std::string file;
  int line = 0;
  std::vector<std::string> argv;
  std::optional<Rule> expected;  // nullopt: must be allowed
};

// The argv syntax of a case line (base/argv_line.h), under the names the guard's callers use.
using base::FormatArgv;
using base::ParseArgvLine;

// Loads one corpus file, or every *.txt file of a directory in name order. On the first bad line
// an invalid argument "file:line: reason"; an io error when path is no corpus or cannot be read.
base::Result<std::vector<CorpusCase>> LoadCorpus(const std::string& path);

struct CorpusReport {
  std::size_t cases = 0;
  std::size_t allowed = 0;  // expected allow, got allow
  std::size_t denied = 0;   // expected deny with that rule, got it
  std::vector<std::string> mismatches;  // "file:line: expected ..., got ..."
  bool ok() const { return mismatches.empty(); }
};

CorpusReport RunCorpus(const Guard& guard, const std::vector<CorpusCase>& cases);

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_CORPUS_H_

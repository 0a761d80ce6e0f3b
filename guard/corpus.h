// The guard's corpora: plain-text files of argv and the verdict each must get, in the line form
// of the one refusal-corpus format, loaded and run by the one corpus runner (base/corpus.h; the
// format is in testing/README.md). This file holds only what is the guard's own: its options
// (lines of *.txt, the guard's rule ids), the adapter from a case to the guard's verdict, and the
// counts `slurm-guard corpus` prints.
//
// One case per line; '#' starts a comment line; blank lines are ignored:
//
//   allow                     sinfo -N --noheader
//   deny mutating-word        scontrol update NodeName=gpu-01 State=DRAIN
//   deny control-byte         squeue -u "a\0b"
//
//   base::CorpusReport r = base::RunCorpus(ArgvCorpus(dir), [&](const base::CorpusCase& c) {
//     return CheckCase(guard, c);
//   });
//
// The argv is written as base/argv_line.h reads it: split on spaces and tabs, '...' literal,
// "..." and bare words with escapes. Adding a case never needs a recompile. Refused when loading:
// a malformed line, a deny naming a rule the guard does not have, a path with no case.
#ifndef SLURM_RCA_GUARD_CORPUS_H_
#define SLURM_RCA_GUARD_CORPUS_H_

#include <optional>
#include <string>
#include <vector>

#include "base/argv_line.h"
#include "base/corpus.h"
#include "base/status.h"
#include "guard/check.h"

namespace slurm_rca::guard {

// The argv syntax of a case line (base/argv_line.h), under the names the guard's callers use.
using base::FormatArgv;
using base::ParseArgvLine;

// A guard corpus at path (one file, or every *.txt of a folder): line cases whose deny may name
// only the guard's rule ids.
base::CorpusOptions ArgvCorpus(const std::string& path);

// What the guard makes of a case: nothing when it approves the argv; otherwise one diagnostic
// (file and line of the case, the denial's rule id and reason). An input that is no argv is one
// diagnostic with rule "argv", which no case can expect.
std::vector<base::Diagnostic> CheckCase(const Guard& guard, const base::CorpusCase& c);

// A case with its argv read and its rule resolved, for callers that use the argv itself (the
// fixture captures of the live lab, guard_bench, the coverage tests of guard_test).
struct ArgvCase {
  std::string file;  // the file name, without its folder
  int line = 0;
  std::vector<std::string> argv;
  std::optional<Rule> expected;  // nullopt: must be allowed
};
// Every case of ArgvCorpus(path). The first error of the load is an invalid argument
// "file:line: reason", or "PATH: no such corpus file or directory", or "PATH: no case".
base::Result<std::vector<ArgvCase>> LoadArgvCases(const std::string& path);

// `slurm-guard corpus PATH...`: every case of every path checked by guard. A path that cannot be
// loaded is the error (as LoadArgvCases says it); a case that fails is in the report.
base::Result<base::CorpusReport> CheckCorpus(const Guard& guard,
                                             const std::vector<std::string>& paths);

// What `slurm-guard corpus` prints: a line "MISMATCH file:line: ARGV: expected ..., got ..." per
// failing case, then "guard corpus: N argv, D denied with the expected rule, A allowed as
// expected, M mismatches".
std::string CorpusSummary(const base::CorpusReport& report);

}  // namespace slurm_rca::guard

#endif  // SLURM_RCA_GUARD_CORPUS_H_

// The one runner of every refusal corpus: it finds a corpus's cases at run time (adding one
// needs no recompile), reads each case's expectation in the one format (base/expectation.h,
// testing/README.md), asks the module's adapter what the input produces, and pairs the two one to
// one. A module's test is an adapter and two lines:
//
//   testing::CorpusReport report = testing::RunCorpus(
//       {.dir = kSource + "/scenarios/testdata/broken", .extension = ".yaml"},
//       [](const testing::CorpusCase& c) { return scenarios::CheckFile(c.path); });
//   testing::ExpectCorpusPasses(report);   // one gtest failure per failing case
//
// A case that cannot be read (a malformed header, a missing sidecar) is an error of the report,
// never a skipped case; a corpus without a case fails. Linked by tests only. (Inside namespace
// slurm_rca, gtest's namespace is ::testing.)
#ifndef SLURM_RCA_TESTING_CORPUS_H_
#define SLURM_RCA_TESTING_CORPUS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/expectation.h"

namespace slurm_rca::testing {

// Where a corpus keeps its cases and their expectations.
enum class Layout {
  kHeader,     // each DIR/*EXT file is a case; the expectation is its header ('#' lines on top)
  kSidecar,    // each DIR/NAME.EXT file is a case; the expectation is DIR/NAME.expect
  kDirectory,  // each subdirectory DIR/CASE is a case; the expectation is DIR/CASE/expect
  kLines,      // each line of each DIR/*EXT file is a case: "deny RULE INPUT" or "allow INPUT"
};

struct CorpusOptions {
  std::string dir;  // the corpus folder
  Layout layout = Layout::kHeader;
  std::string extension;           // of the case files (".yaml"); unused by kDirectory
  std::set<std::string> settings;  // setting keys the adapter reads, besides why
};

struct CorpusCase {
  std::string name;   // "chain-start.yaml", "claim-kind", or "seed_a5.txt:12" for a line case
  std::string path;   // the input file or directory; for a line case, its file
  int line = 0;       // a line case's line in that file; 0 otherwise
  std::string input;  // a line case's input (the rest of its line); "" otherwise
  base::Expectation expect;
};

// What the module makes of one case's input. It may add gtest failures of its own (a diagnostic
// without a file, say); the runner judges only the diagnostics.
using Adapter = std::function<std::vector<base::Diagnostic>(const CorpusCase&)>;

struct CaseResult {
  CorpusCase c;
  std::vector<base::Diagnostic> got;
  std::optional<std::string> mismatch;  // nullopt: the case passed (base::Mismatch)
};

struct CorpusReport {
  std::vector<CaseResult> cases;    // in name order
  std::vector<std::string> errors;  // cases that could not be read: "path:line: reason"
  size_t failed() const;
  bool ok() const { return errors.empty() && failed() == 0 && !cases.empty(); }
  // One paragraph per failing case (its name, what it expected, what it got) and per error; a
  // line saying so when the corpus has no case.
  std::vector<std::string> Failures() const;
  // Every rule some case denies, and whether some case is an allow.
  std::set<std::string> Rules() const;
  bool HasAllow() const;
};

CorpusReport RunCorpus(const CorpusOptions& options, const Adapter& adapter);

// One gtest failure per entry of report.Failures().
void ExpectCorpusPasses(const CorpusReport& report);

}  // namespace slurm_rca::testing

#endif  // SLURM_RCA_TESTING_CORPUS_H_

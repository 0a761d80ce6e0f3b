// The one loader and runner of every refusal corpus: it finds a corpus's cases at run time
// (adding one needs no recompile), reads each case's expectation in the one format
// (base/expectation.h, testing/README.md "Refusal corpora"), asks the module's adapter what the
// input produces, and pairs the two one to one (base::Mismatch).
//
//   base::CorpusReport report = base::RunCorpus(
//       {.path = kSource + "/scenarios/testdata/broken", .extension = ".yaml"},
//       [](const base::CorpusCase& c) { return scenarios::CheckFile(c.path); });
//   if (!report.ok()) for (const std::string& f : report.Failures()) std::cerr << f << "\n";
//
// A test turns the report into gtest failures with testing::ExpectCorpusPasses
// (testing/corpus.h); `slurm-guard corpus` prints its counts (guard/corpus.h). A case that cannot
// be read (a malformed header or line, a missing sidecar, a deny naming a rule the corpus does
// not know) is an error of the report, never a skipped case; a corpus without a case is not ok.
// Reads files only; no state, callable from any thread.
#ifndef SLURM_RCA_BASE_CORPUS_H_
#define SLURM_RCA_BASE_CORPUS_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "base/expectation.h"

namespace slurm_rca::base {

// Where a corpus keeps its cases and their expectations.
enum class CorpusLayout {
  kHeader,     // each DIR/*EXT file is a case; the expectation is its header ('#' lines on top)
  kSidecar,    // each DIR/NAME.EXT file is a case; the expectation is DIR/NAME.expect
  kDirectory,  // each subdirectory DIR/CASE is a case; the expectation is DIR/CASE/expect
  kLines,      // each line of each DIR/*EXT file is a case: "deny RULE INPUT" or "allow INPUT"
};

struct CorpusOptions {
  // The corpus folder; for kLines it may also be one case file (`slurm-guard corpus FILE`).
  std::string path;
  CorpusLayout layout = CorpusLayout::kHeader;
  std::string extension;           // of the case files (".yaml"); unused by kDirectory
  std::set<std::string> settings;  // setting keys the adapter reads, besides why
  // The rule ids a deny may name; empty: any. A deny naming another is an error of the run, so a
  // misspelt rule is reported as such rather than as a failing case.
  std::set<std::string> rules;
};

struct CorpusCase {
  std::string name;   // "chain-start.yaml", "claim-kind", or "seed_a5.txt:12" for a line case
  std::string path;   // the input file or directory; for a line case, its file
  int line = 0;       // a line case's line in that file; 0 otherwise
  std::string input;  // a line case's input (the rest of its line); "" otherwise
  Expectation expect;
};

struct LoadedCorpus {
  std::vector<CorpusCase> cases;    // in name order (line cases: file name, then line)
  std::vector<std::string> errors;  // cases that could not be read: "path:line: reason"
};

// Finds and reads every case. A path that does not exist is one error,
// "PATH: no such corpus file or directory".
LoadedCorpus LoadCorpus(const CorpusOptions& options);

// What the module makes of one case's input, as diagnostics (an allowed input: none).
using CorpusAdapter = std::function<std::vector<Diagnostic>(const CorpusCase&)>;

struct CaseResult {
  CorpusCase c;
  std::vector<Diagnostic> got;
  std::optional<std::string> mismatch;  // nullopt: the case passed (base::Mismatch)
};

struct CorpusReport {
  std::vector<CaseResult> cases;    // in name order
  std::vector<std::string> errors;  // from LoadCorpus
  size_t failed() const;
  bool ok() const { return errors.empty() && failed() == 0 && !cases.empty(); }
  // One paragraph per failing case (its name, what it expected, what it got) and per error; a
  // line saying so when the corpus has no case.
  std::vector<std::string> Failures() const;
  // Every rule some case denies, and whether some case is an allow.
  std::set<std::string> Rules() const;
  bool HasAllow() const;
};

// Runs the adapter on every case of a loaded corpus, in order.
CorpusReport RunCorpus(LoadedCorpus corpus, const CorpusAdapter& adapter);
// LoadCorpus, then the above.
CorpusReport RunCorpus(const CorpusOptions& options, const CorpusAdapter& adapter);

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_CORPUS_H_

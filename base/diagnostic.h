// A finding about a file: where (file, 1-based line, 0 for the file as a whole), which rule, and
// a sentence. Validators and loaders return a vector of these; an empty vector means clean.
//
//   std::vector<base::Diagnostic> found = Validate(path);
//   for (const base::Diagnostic& d : found) std::cerr << d.ToString() << "\n";
//   // scenarios/S01.yaml:12: signal-outcome: 'ok' is not an outcome of topic 'queue'
#ifndef SLURM_RCA_BASE_DIAGNOSTIC_H_
#define SLURM_RCA_BASE_DIAGNOSTIC_H_

#include <string>

namespace slurm_rca::base {

struct Diagnostic {
  std::string file;
  int line = 0;      // 1-based; 0 when unknown or the whole file
  std::string rule;  // a rule id; may be empty where a format has none
  std::string message;
  // "file:line: rule: message", or "file:line: message" when rule is empty.
  std::string ToString() const;
};

}  // namespace slurm_rca::base

#endif  // SLURM_RCA_BASE_DIAGNOSTIC_H_

// An independent model of "this argv could change state, read or write a file, reveal secrets,
// or never end" — the oracle of the guard's property tests and fuzzer.
//
// It shares no code or tables with the guard. It models what Slurm's own parsers do (getopt_long
// with permutation, clustering and unique-prefix expansion; command words matched
// case-insensitively by prefix) from the upstream optstrings and command inventories, and it is
// conservative: when a token could be read two ways it checks both. If the guard approves an argv
// the oracle flags, one of them is wrong, and the tests fail.
#ifndef SLURM_RCA_GUARD_ORACLE_H_
#define SLURM_RCA_GUARD_ORACLE_H_

#include <optional>
#include <string>
#include <vector>

namespace slurm_rca::guard::oracle {

// nullopt when the argv is harmless; otherwise what it could do.
std::optional<std::string> Violation(const std::vector<std::string>& argv);

}  // namespace slurm_rca::guard::oracle

#endif  // SLURM_RCA_GUARD_ORACLE_H_
